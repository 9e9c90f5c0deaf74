/**
 * Per-merchant token buckets: `ratePerSecond` sustained, bursts up to twice that. Kept in this
 * process (each instance limits on its own, so N instances allow up to N times the rate).
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes one token for `key`; `false` when its bucket is empty. */
  take(key: string): boolean {
    if (this.ratePerSecond <= 0) return true;
    const capacity = this.ratePerSecond * 2;
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: capacity, at: now };
    bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) / 1000) * this.ratePerSecond);
    bucket.at = now;
    if (bucket.tokens < 1) {
      this.buckets.set(key, bucket);
      return false;
    }
    bucket.tokens -= 1;
    if (this.buckets.size > 100_000) this.buckets.clear();
    this.buckets.set(key, bucket);
    return true;
  }

  /** Returns the token `take` took for `key` (a request that turned out a replay). */
  giveBack(key: string): void {
    const bucket = this.buckets.get(key);
    if (this.ratePerSecond <= 0 || !bucket) return;
    bucket.tokens = Math.min(this.ratePerSecond * 2, bucket.tokens + 1);
  }

  /** Seconds until `key` has a token again (for Retry-After). */
  retryAfterSeconds(): number {
    return Math.max(1, Math.ceil(1 / Math.max(this.ratePerSecond, 1)));
  }
}
