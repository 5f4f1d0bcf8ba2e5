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

  /** Takes one request; returns 0 when allowed, else the seconds until one is. */
  take(key: string): number {
    const now = this.now();
    const rate = this.perMinute / 60_000;
    const bucket = this.buckets.get(key);
    let tokens = bucket
      ? Math.min(this.perMinute, bucket.tokens + (now - bucket.updatedAt) * rate)
      : this.perMinute;
    if (tokens < 1) return Math.max(1, Math.ceil((1 - tokens) / rate / 1000));
    tokens -= 1;
    if (!bucket && this.buckets.size >= this.maxKeys) this.sweep();
    this.buckets.set(key, { tokens, updatedAt: now });
    return 0;
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
