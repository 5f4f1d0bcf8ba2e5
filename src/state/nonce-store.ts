import { hash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../lib/atomic-file.js';

export interface NonceStoreOptions {
  now?: () => number;
  /** Hard cap on remembered nonces; past it new requests are refused (503) rather than forgetting any. */
  maxEntries?: number;
}

/** A (sender, nonce) pair as the store keeps it: 64 bits of its SHA-256, as two unsigned 32-bit halves. */
export interface NonceKey {
  hi: number;
  lo: number;
}

/**
 * The pair's fixed-size key: the first 64 bits of SHA-256 over the sender's length, the sender and the nonce
 * (the length prefix keeps every pair's input distinct). The same pair always gets the same key, so a replay
 * is always caught. Two different pairs share a key with a chance of n / 2^64 per call (n pairs remembered:
 * about 1e-13 at the 2M cap), and then the newer call is refused as a replay, never accepted; its sender
 * retries with a fresh nonce. Making such a pair on purpose to block someone's call means finding a second
 * preimage of 64 bits of SHA-256 (2^64 hashes) for a nonce not yet sent.
 */
export function nonceKey(sender: string, nonce: string): NonceKey {
  const digest = hash('sha256', `${sender.length}:${sender}${nonce}`, 'buffer');
  return { hi: digest.readUInt32LE(0), lo: digest.readUInt32LE(4) };
}

// The table: open addressing with linear probing over one Uint32Array, three words a slot (the key's two
// halves, then its expiry in whole seconds, rounded up; 0 marks a free slot). About 12 bytes a slot, at
// most half the slots used: 24-48 bytes a pair, where a Map of strings took about 117.
const WORDS = 3;
const MIN_SLOTS = 1024;
const KEY_HEX = /^[0-9a-f]{16}$/;

/**
 * Remembers (sender, nonce) pairs until their envelope's timestamp leaves the acceptance window, after
 * which the timestamp check refuses a replay by itself. Each new pair is appended to `nonces.log` with a
 * synchronous write before the request is handled: the bytes are in the kernel when we answer, so a
 * replay is refused after a clean restart and after `kill -9` alike.
 */
export class NonceStore {
  private table = new Uint32Array(MIN_SLOTS * WORDS);
  private mask = MIN_SLOTS - 1;
  /** Slots in use, expired pairs included until a sweep (or a new pair) takes their place. */
  private used = 0;
  private readonly path: string;
  private readonly now: () => number;
  private readonly maxEntries: number;
  private fd: number;
  private linesInFile = 0;

  constructor(dataDir: string, options: NonceStoreOptions = {}) {
    this.path = join(dataDir, 'nonces.log');
    this.now = options.now ?? Date.now;
    this.maxEntries = options.maxEntries ?? 2_000_000;
    this.load();
    this.compact();
    this.fd = openSync(this.path, 'a', 0o600);
  }

  get size(): number {
    return this.used;
  }

  get full(): boolean {
    return this.used >= this.maxEntries;
  }

  /** Whether the pair was seen within its window (a replay), without recording anything. */
  has(key: NonceKey): boolean {
    const { table, mask } = this;
    for (let slot = key.lo & mask; ; slot = (slot + 1) & mask) {
      const at = slot * WORDS;
      const expires = table[at + 2]!;
      if (expires === 0) return false;
      if (table[at] === key.hi && table[at + 1] === key.lo) return expires * 1000 > this.now();
    }
  }

  /** Records the pair; false when it was already seen (a replay). */
  record(key: NonceKey, expiresAt: number): boolean {
    if (!this.put(key.hi, key.lo, Math.ceil(expiresAt / 1000), false)) return false;
    writeSync(this.fd, `${expiresAt} ${toHex(key)}\n`);
    this.linesInFile++;
    return true;
  }

  /** Drops expired pairs; rewrites the log when it has grown well past what is still live. */
  sweep(): void {
    this.purge();
    if (this.used * 8 < this.mask + 1 && this.mask + 1 > MIN_SLOTS) this.rebuild();
    if (this.linesInFile > 2 * this.used + 10_000) {
      closeSync(this.fd);
      this.compact();
      this.fd = openSync(this.path, 'a', 0o600);
    }
  }

  close(): void {
    try {
      fsyncSync(this.fd);
    } finally {
      closeSync(this.fd);
    }
  }

  /**
   * Puts the pair in its slot, or in the first expired slot on its way. A live pair already there is a
   * replay (false), unless `merge` (loading the log): then the later expiry is kept.
   */
  private put(hi: number, lo: number, expires: number, merge: boolean): boolean {
    if ((this.used + 1) * 2 > this.mask + 1) this.rebuild();
    const { table, mask } = this;
    const nowSeconds = this.now() / 1000;
    let free = -1;
    let slot = lo & mask;
    for (; ; slot = (slot + 1) & mask) {
      const at = slot * WORDS;
      const held = table[at + 2]!;
      if (held === 0) break;
      if (table[at] === hi && table[at + 1] === lo) {
        if (held > nowSeconds && !merge) return false;
        table[at + 2] = Math.max(held, expires);
        return true;
      }
      if (free < 0 && held <= nowSeconds) free = slot;
    }
    if (free >= 0) slot = free;
    else this.used++;
    const at = slot * WORDS;
    table[at] = hi;
    table[at + 1] = lo;
    table[at + 2] = expires;
    return true;
  }

  /**
   * Frees the slots of expired pairs in place. Walking from a free slot, each live pair is lifted out and put
   * back in the first free slot from its home: the probe chains stay whole without a second table.
   */
  private purge(): void {
    const { table, mask } = this;
    const nowSeconds = this.now() / 1000;
    let start = 0;
    while (table[start * WORDS + 2] !== 0) start++; // one exists: at most half the slots are used
    for (let step = 1; step <= mask; step++) {
      const at = ((start + step) & mask) * WORDS;
      const expires = table[at + 2]!;
      if (expires === 0) continue;
      table[at + 2] = 0;
      if (expires <= nowSeconds) {
        this.used--;
        continue;
      }
      let slot = table[at + 1]! & mask;
      while (table[slot * WORDS + 2] !== 0) slot = (slot + 1) & mask;
      table.copyWithin(slot * WORDS, at, at + 2);
      table[slot * WORDS + 2] = expires;
    }
  }

  /** A new table holding only the live pairs, sized so that they fill at most a quarter of it. */
  private rebuild(): void {
    const old = this.table;
    const nowSeconds = this.now() / 1000;
    let live = 0;
    for (let at = 2; at < old.length; at += WORDS) if (old[at]! > nowSeconds) live++;
    let slots = MIN_SLOTS;
    while (slots < live * 4) slots *= 2;
    this.table = new Uint32Array(slots * WORDS);
    this.mask = slots - 1;
    this.used = live;
    const { table, mask } = this;
    for (let from = 0; from < old.length; from += WORDS) {
      const expires = old[from + 2]!;
      if (expires <= nowSeconds) continue;
      let slot = old[from + 1]! & mask;
      while (table[slot * WORDS + 2] !== 0) slot = (slot + 1) & mask;
      table.set(old.subarray(from, from + WORDS), slot * WORDS);
    }
  }

  private load(): void {
    if (!existsSync(this.path)) return;
    const now = this.now();
    for (const line of readFileSync(this.path, 'utf8').split('\n')) {
      const space = line.indexOf(' ');
      if (space < 0) continue;
      const expiresAt = Number(line.slice(0, space));
      // A torn last line after a crash is skipped: it was never acknowledged to anyone.
      const key = parseKey(line.slice(space + 1));
      if (key && expiresAt > now) this.put(key.hi, key.lo, Math.ceil(expiresAt / 1000), true);
    }
  }

  private compact(): void {
    const { table } = this;
    const nowSeconds = this.now() / 1000;
    const lines: string[] = [];
    for (let at = 0; at < table.length; at += WORDS) {
      const expires = table[at + 2]!;
      if (expires > nowSeconds)
        lines.push(`${expires * 1000} ${toHex({ hi: table[at]!, lo: table[at + 1]! })}\n`);
    }
    writeFileAtomic(this.path, lines.join(''));
    this.linesInFile = lines.length;
  }
}

const toHex = (key: NonceKey) => key.hi.toString(16).padStart(8, '0') + key.lo.toString(16).padStart(8, '0');

/** A key as the log writes it, or a pair as logs before 0.1.1 wrote it (`"sender nonce"`, JSON). */
function parseKey(text: string): NonceKey | undefined {
  if (KEY_HEX.test(text)) {
    return { hi: Number.parseInt(text.slice(0, 8), 16), lo: Number.parseInt(text.slice(8), 16) };
  }
  let pair: unknown;
  try {
    pair = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof pair !== 'string') return undefined;
  const space = pair.indexOf(' ');
  return space > 0 ? nonceKey(pair.slice(0, space), pair.slice(space + 1)) : undefined;
}
