import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { HttpError } from './errors.js';

// Budgets of request body bytes in flight (docs/local-service-choices.md, "Memory"), and --rate-limit's buckets.

const MIB = 1024 * 1024;
/** Retry-After: about the time serve takes to count and store what is in flight (60 MiB: 8 s on 2 busy cores). */
const BYTES_PER_SECOND = 8 * MIB;
/** A request at least this large is followed by a garbage collection (see collectSoon). */
const LARGE = 8 * MIB;

export function inflightBudget(perUser: number, overall: number) {
  const byUser = new Map<string, number>();
  let total = 0;
  const take = (user: string, mine: number, bytes: number): void => {
    const held = byUser.get(user) ?? 0;
    if (held > mine && held + bytes > perUser) {
      throw refusal(429, 'too_many_in_flight', held - mine, 'this user has other large requests in flight');
    }
    if (total > mine && total + bytes > overall) {
      throw refusal(503, 'service_busy', total - mine, 'the service has other large requests in flight');
    }
    byUser.set(user, held + bytes);
    total += bytes;
  };
  /**
   * One request's share: `add` as its bytes become known (throws past a budget), `release` once
   * answered; `tidy` between the steps of a large request collects what the last step left.
   */
  return (user: string) => {
    let mine = 0;
    return {
      tidy: () => {
        if (mine >= LARGE) collector()();
      },
      add: (bytes: number) => {
        take(user, mine, bytes);
        mine += bytes;
      },
      release: () => {
        const left = (byUser.get(user) ?? 0) - mine;
        if (left > 0) byUser.set(user, left);
        else byUser.delete(user);
        total -= mine;
        if (mine >= LARGE) collectSoon();
        mine = 0;
      },
    };
  };
}

function refusal(status: number, code: string, inFlight: number, why: string): HttpError {
  const seconds = Math.min(30, Math.max(1, Math.ceil(inFlight / BYTES_PER_SECOND)));
  return new HttpError(
    status,
    code,
    `${why} (${(inFlight / MIB).toFixed(1)} MiB); send this one again in ${seconds} s`,
    { 'Retry-After': String(seconds) },
  );
}

let collect: (() => void) | undefined;
let scheduled = false;

/**
 * A full garbage collection shortly after a large request was answered: V8 collects when allocating, not when idle
 * (docs/decisions.md); it takes milliseconds. V8's own `gc`, exposed by the flag for contexts made after it is set.
 */
function collectSoon(): void {
  if (scheduled) return;
  scheduled = true;
  setTimeout(() => {
    scheduled = false;
    collector()();
  }, 50).unref();
}

function collector(): () => void {
  if (!collect) setFlagsFromString('--expose-gc');
  return (collect ??= runInNewContext('gc') as () => void);
}

/** `--rate-limit N`: a token bucket per API key, capacity N, refilled at N per second; empty, the wait in seconds. */
export function rateLimiter(rate: number, clock: { now(): Date }): (keyId: string) => number | null {
  const buckets = new Map<string, { tokens: number; lastMs: number }>();
  return (keyId) => {
    const now = clock.now().getTime();
    const bucket = buckets.get(keyId) ?? { tokens: rate, lastMs: now };
    bucket.tokens = Math.min(rate, bucket.tokens + (Math.max(0, now - bucket.lastMs) / 1000) * rate);
    bucket.lastMs = now;
    buckets.set(keyId, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return null;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / rate));
  };
}
