/**
 * An overall deadline for one exchange (one attempt: connect, send, headers, the whole body). The
 * connect, headers and body timeouts each bound a silence; a server that trickles its answer (a byte a
 * second) never falls silent, so only a deadline on the whole ends it (reliability case 52).
 *
 * The deadline is the sum of the three limits: as long as each step could take at its worst, so an
 * answer that each timeout alone would allow is never cut short by it.
 */

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
