import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from './context.js';
import { cancelledBy } from './errors.js';

export const systemClock: Clock = {
  now: () => new Date(),
  sleep: (ms, signal) =>
    delay(ms, undefined, { signal }).catch((error: unknown) => {
      throw signal?.aborted ? cancelledBy(signal) : error;
    }),
};
