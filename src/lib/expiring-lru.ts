export interface ExpiringLruOptions {
  /** Entries kept at most. */
  maxEntries: number;
  /** The most their weights may add up to (an estimate of their bytes, say); the default has no bound. */
  maxWeight?: number;
  now?: () => number;
}

interface Slot<V> {
  value: V;
  expiresAt: number;
  weight: number;
}

/**
 * A cache that forgets: each entry lives until its own expiry, and past either bound the least recently
 * used entries go first. A Map keeps insertion order, so a use moves the entry to the end and the first key
 * is always the one to evict.
 */
export class ExpiringLru<V> {
  private readonly slots = new Map<string, Slot<V>>();
  private weightHeld = 0;
  private readonly now: () => number;

  constructor(private readonly options: ExpiringLruOptions) {
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.slots.size;
  }

  /** What the entries weigh together. */
  get weight(): number {
    return this.weightHeld;
  }

  /** The entry while it lives, now the most recently used; undefined when absent or expired. */
  get(key: string): V | undefined {
    const slot = this.live(key);
    if (!slot) return undefined;
    this.slots.delete(key);
    this.slots.set(key, slot);
    return slot.value;
  }

  /** The entry while it lives, without counting this as a use. */
  peek(key: string): V | undefined {
    return this.live(key)?.value;
  }

  /** Adds or replaces the entry as the most recently used, then evicts down to both bounds. */
  set(key: string, value: V, expiresAt: number, weight = 0): void {
    this.delete(key);
    this.slots.set(key, { value, expiresAt, weight });
    this.weightHeld += weight;
    const maxWeight = this.options.maxWeight ?? Number.POSITIVE_INFINITY;
    while (this.slots.size > this.options.maxEntries || this.weightHeld > maxWeight) {
      const oldest = this.slots.keys().next().value as string;
      // The newest entry stays even when it alone is over the weight: it was fetched to be used now.
      if (oldest === key) break;
      this.delete(oldest);
    }
  }

  delete(key: string): void {
    const slot = this.slots.get(key);
    if (!slot) return;
    this.slots.delete(key);
    this.weightHeld -= slot.weight;
  }

  /** Drops every expired entry. */
  sweep(): void {
    const now = this.now();
    for (const [key, slot] of this.slots) if (slot.expiresAt <= now) this.delete(key);
  }

  private live(key: string): Slot<V> | undefined {
    const slot = this.slots.get(key);
    if (!slot) return undefined;
    if (slot.expiresAt > this.now()) return slot;
    this.delete(key);
    return undefined;
  }
}
