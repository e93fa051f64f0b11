import type { Clock } from './context.js';
import { cancelledBy } from './errors.js';

export const systemClock: Clock = {
  now: () => new Date(),
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(cancelledBy(signal));
      const onAbort = () => {
        clearTimeout(timer);
        reject(cancelledBy(signal));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
