/**
 * Token buckets for the card's request limits: a bucket holds up to `perMinute` requests and refills
 * continuously, so a burst is allowed up to the limit and the steady rate never exceeds it.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; updatedAt: number }>();

  constructor(
    private perMinute: number,
    private readonly now: () => number = Date.now,
    private readonly maxKeys = 100_000,
  ) {}

  setLimit(perMinute: number): void {
    this.perMinute = perMinute;
  }

  /** Seconds until `key` may make a request: 0 when it may now. Takes nothing. */
  wait(key: string): number {
    const tokens = this.tokens(key, this.now());
    return tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / (this.perMinute / 60_000) / 1000));
  }

  /** Counts one request for `key` (after `wait` said it may). */
  take(key: string): void {
    const now = this.now();
    const tokens = this.tokens(key, now) - 1;
    if (!this.buckets.has(key) && this.buckets.size >= this.maxKeys) this.sweep();
    this.buckets.set(key, { tokens, updatedAt: now });
  }

  private tokens(key: string, now: number): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return this.perMinute;
    return Math.min(this.perMinute, bucket.tokens + (now - bucket.updatedAt) * (this.perMinute / 60_000));
  }

  /** A full bucket is the same as none: forget those, which bounds memory by active senders. */
  sweep(): void {
    const now = this.now();
    const rate = this.perMinute / 60_000;
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.updatedAt) * rate >= this.perMinute) this.buckets.delete(key);
    }
  }

  get size(): number {
    return this.buckets.size;
  }
}
