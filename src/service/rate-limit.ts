import type { ServiceClock } from './service-core.js';

/**
 * `--rate-limit N`: a token bucket per API key, capacity N, refilled at N per second. A request finding
 * the bucket empty gets 429 with Retry-After in whole seconds (at least 1).
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; lastMs: number }>();

  constructor(
    private readonly rate: number,
    private readonly clock: ServiceClock,
  ) {}

  /** Takes one token; returns null when allowed, else the seconds to wait. */
  take(keyId: string): number | null {
    const now = this.clock.now().getTime();
    const bucket = this.buckets.get(keyId) ?? { tokens: this.rate, lastMs: now };
    bucket.tokens = Math.min(this.rate, bucket.tokens + (Math.max(0, now - bucket.lastMs) / 1000) * this.rate);
    bucket.lastMs = now;
    this.buckets.set(keyId, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return null;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.rate));
  }
}
