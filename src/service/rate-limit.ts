import type { ServiceClock } from './service-core.js';

/**
 * `--rate-limit N`: a token bucket per API key, capacity N, refilled at N per second. A request finding
 * the bucket empty gets 429 with Retry-After in whole seconds (at least 1).
 */
export function rateLimiter(rate: number, clock: ServiceClock): (keyId: string) => number | null {
  const buckets = new Map<string, { tokens: number; lastMs: number }>();
  // Takes one token: null when allowed, else the seconds to wait.
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
