/**
 * An overall deadline for one exchange (one attempt: connect, send, headers, the whole body). The
 * connect, headers and body timeouts each bound a silence; a server that trickles its answer (a byte a
 * second) never falls silent, so only a deadline on the whole ends it (reliability case 52).
 *
 * The deadline is the sum of the three limits: as long as each step could take at its worst, so an
 * answer that each timeout alone would allow is never cut short by it.
 */

import { UsageError } from '../errors.js';

export interface Deadline {
  readonly signal: AbortSignal;
  readonly ms: number;
  /** True once the deadline has passed (the signal then aborted because of it). */
  expired(): boolean;
  /** Stops the timer (the exchange ended in time). */
  clear(): void;
}

/** The reason the deadline's signal aborts with, told apart from a user's Ctrl-C by its code. */
export class DeadlineError extends Error {
  readonly code = 'FACECTL_DEADLINE';
  constructor(readonly ms: number) {
    super(`no complete answer within ${formatSeconds(ms)}`);
    this.name = 'DeadlineError';
  }
}

export function startDeadline(ms: number): Deadline {
  const controller = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new DeadlineError(ms));
  }, ms);
  // An open socket keeps the process alive while it matters; the timer alone must not.
  timer.unref();
  return {
    signal: controller.signal,
    ms,
    expired: () => expired,
    clear: () => clearTimeout(timer),
  };
}

export function deadlineFor(limits: { connectMs: number; headersMs: number; bodyMs: number }): number {
  return limits.connectMs + limits.headersMs + limits.bodyMs;
}

export function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}

/**
 * The largest FACECTL_HTTP_TIMEOUT, in seconds: one day. Each limit and their sum (the deadline, three
 * times the value) must fit Node's 32-bit timers; past about 715,828 s a timer fires at once instead.
 */
export const MAX_HTTP_TIMEOUT_SECONDS = 86_400;

/**
 * FACECTL_HTTP_TIMEOUT in milliseconds, or undefined when it is unset or empty. Anything but a positive
 * decimal number of seconds (to the millisecond) within the maximum is refused before anything is sent.
 */
export function httpTimeoutFromEnv(env: Readonly<Record<string, string | undefined>>): number | undefined {
  const raw = env.FACECTL_HTTP_TIMEOUT;
  if (raw === undefined || raw === '') return undefined;
  const seconds = /^\d+(\.\d{1,3})?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(seconds > 0 && seconds <= MAX_HTTP_TIMEOUT_SECONDS)) {
    throw new UsageError(
      `FACECTL_HTTP_TIMEOUT must be a number of seconds from 0.001 to ${MAX_HTTP_TIMEOUT_SECONDS} (got ${JSON.stringify(raw)})`,
      { hint: 'e.g. FACECTL_HTTP_TIMEOUT=120, or unset it for the defaults (10, 30 and 60 s)' },
    );
  }
  return Math.round(seconds * 1000);
}
