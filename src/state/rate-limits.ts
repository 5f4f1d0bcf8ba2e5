/**
 * Token buckets for the card's request limits: a bucket holds up to `perMinute` requests and refills
 * continuously, so a burst is allowed up to the limit and the steady rate never exceeds it.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; updatedAt: number; per: number }>();

  constructor(
    private perMinute: number,
    private readonly now: () => number = Date.now,
    private readonly maxKeys = 100_000,
  ) {}

  setLimit(perMinute: number): void {
    this.perMinute = perMinute;
  }

  /**
   * Seconds until `key` may make a request: 0 when it may now. Takes nothing. `own`: the key's own limit
   * per minute (an A2A key issued with one), instead of the shared setting.
   */
  wait(key: string, own?: number): number {
    const per = own ?? this.perMinute;
    const tokens = this.tokens(key, this.now(), per);
    return tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / (per / 60_000) / 1000));
  }

  /** Counts one request for `key` (after `wait` said it may), under the same limit `wait` was asked with. */
  take(key: string, own?: number): void {
    const now = this.now();
    const per = own ?? this.perMinute;
    const tokens = this.tokens(key, now, per) - 1;
    if (!this.buckets.has(key) && this.buckets.size >= this.maxKeys) this.sweep();
    this.buckets.set(key, { tokens, updatedAt: now, per });
  }

  private tokens(key: string, now: number, per: number): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return per;
    return Math.min(per, bucket.tokens + (now - bucket.updatedAt) * (per / 60_000));
  }

  /** A full bucket is the same as none: forget those, which bounds memory by active senders. */
  sweep(): void {
    const now = this.now();
    for (const [key, bucket] of this.buckets) {
      const { per } = bucket;
      if (bucket.tokens + (now - bucket.updatedAt) * (per / 60_000) >= per) this.buckets.delete(key);
    }
  }

  get size(): number {
    return this.buckets.size;
  }
}
