import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../lib/atomic-file.js';

export interface NonceStoreOptions {
  now?: () => number;
  /** Hard cap on remembered nonces; past it new requests are refused (503) rather than forgetting any. */
  maxEntries?: number;
}

/**
 * Remembers (sender, nonce) pairs until their envelope's timestamp leaves the acceptance window, after
 * which the timestamp check refuses a replay by itself. Each new pair is appended to `nonces.log` with a
 * synchronous write before the request is handled: the bytes are in the kernel when we answer, so a
 * replay is refused after a clean restart and after `kill -9` alike.
 */
export class NonceStore {
  private readonly seen = new Map<string, number>();
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
    return this.seen.size;
  }

  get full(): boolean {
    return this.seen.size >= this.maxEntries;
  }

  /** Whether the pair was seen within its window (a replay), without recording anything. */
  has(sender: string, nonce: string): boolean {
    const known = this.seen.get(`${sender} ${nonce}`);
    return known !== undefined && known > this.now();
  }

  /** Records the pair; false when it was already seen (a replay). */
  record(sender: string, nonce: string, expiresAt: number): boolean {
    const key = `${sender} ${nonce}`;
    const known = this.seen.get(key);
    if (known !== undefined && known > this.now()) return false;
    this.seen.set(key, expiresAt);
    writeSync(this.fd, `${expiresAt} ${JSON.stringify(key)}\n`);
    this.linesInFile++;
    return true;
  }

  /** Drops expired pairs; rewrites the log when it has grown well past what is still live. */
  sweep(): void {
    const now = this.now();
    for (const [key, expiresAt] of this.seen) if (expiresAt <= now) this.seen.delete(key);
    if (this.linesInFile > 2 * this.seen.size + 10_000) {
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

  private load(): void {
    if (!existsSync(this.path)) return;
    const now = this.now();
    for (const line of readFileSync(this.path, 'utf8').split('\n')) {
      const space = line.indexOf(' ');
      if (space < 0) continue;
      const expiresAt = Number(line.slice(0, space));
      try {
        const key = JSON.parse(line.slice(space + 1)) as unknown;
        // A torn last line after a crash is skipped: it was never acknowledged to anyone.
        if (typeof key === 'string' && expiresAt > now) this.seen.set(key, expiresAt);
      } catch {
        continue;
      }
    }
  }

  private compact(): void {
    const now = this.now();
    let text = '';
    for (const [key, expiresAt] of this.seen) {
      if (expiresAt > now) text += `${expiresAt} ${JSON.stringify(key)}\n`;
      else this.seen.delete(key);
    }
    writeFileAtomic(this.path, text);
    this.linesInFile = this.seen.size;
  }
}
