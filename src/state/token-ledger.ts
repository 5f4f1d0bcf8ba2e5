import { join } from 'node:path';
import { readJsonFile, writeFileAtomic } from '../lib/atomic-file.js';

interface LedgerFile {
  day: string;
  used: Record<string, number>;
  /** The smallest prompt the gateway reported (any day): see CallLimits.promptFloor. */
  promptFloor?: number;
}

/**
 * Tokens each sender spent today (UTC), as the gateway reported them, and the tokens held for its calls in
 * flight (in memory: a call does not outlive its process). Persisted, so a restart does not hand every
 * sender a fresh budget; writes are batched because every accepted call adds to it.
 */
export class TokenLedger {
  private day: string;
  private used = new Map<string, number>();
  private readonly reserved = new Map<string, number>();
  private floor = 0;
  private readonly path: string;
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;
  private dayEndsAt: number;

  constructor(
    dataDir: string,
    private readonly now: () => number = Date.now,
  ) {
    this.path = join(dataDir, 'token-usage.json');
    this.day = utcDay(this.now());
    this.dayEndsAt = nextUtcMidnight(this.now());
    const saved = readJsonFile<LedgerFile>(this.path);
    if (saved?.day === this.day) this.used = new Map(Object.entries(saved.used));
    if (typeof saved?.promptFloor === 'number' && saved.promptFloor > 0) this.floor = saved.promptFloor;
  }

  spent(sender: string): number {
    this.rollOver();
    return this.used.get(sender) ?? 0;
  }

  /** What counts against the sender's budget now: spent, and held for its calls in flight. */
  committed(sender: string): number {
    this.rollOver();
    return (this.used.get(sender) ?? 0) + (this.reserved.get(sender) ?? 0);
  }

  reserve(sender: string, tokens: number): void {
    this.rollOver();
    this.reserved.set(sender, (this.reserved.get(sender) ?? 0) + tokens);
  }

  /** Gives back a reservation made at `reservedAt`; one of an earlier day went with that day's counts. */
  release(sender: string, tokens: number, reservedAt: number): void {
    this.rollOver();
    if (reservedAt < this.dayEndsAt - DAY_MS) return;
    const left = (this.reserved.get(sender) ?? 0) - tokens;
    if (left > 0) this.reserved.set(sender, left);
    else this.reserved.delete(sender);
  }

  get promptFloor(): number {
    return this.floor;
  }

  notePrompt(tokens: number): void {
    if (!(tokens > 0) || (this.floor > 0 && tokens >= this.floor)) return;
    this.floor = tokens;
    this.dirty = true;
    this.timer ??= setTimeout(() => this.flush(), 1000).unref();
  }

  add(sender: string, tokens: number): void {
    if (!(tokens > 0)) return;
    this.rollOver();
    this.used.set(sender, (this.used.get(sender) ?? 0) + tokens);
    this.dirty = true;
    this.timer ??= setTimeout(() => this.flush(), 1000).unref();
  }

  /** Seconds until the budget resets at UTC midnight. */
  secondsUntilReset(): number {
    return secondsUntilUtcMidnight(this.now());
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.dirty) return;
    this.dirty = false;
    const file: LedgerFile = { day: this.day, used: Object.fromEntries(this.used) };
    if (this.floor > 0) file.promptFloor = this.floor;
    writeFileAtomic(this.path, JSON.stringify(file));
  }

  // Cheap on every request: a comparison, until the day actually ends.
  private rollOver(): void {
    const now = this.now();
    if (now < this.dayEndsAt) return;
    this.day = utcDay(now);
    this.dayEndsAt = nextUtcMidnight(now);
    this.used.clear();
    this.reserved.clear();
    this.dirty = true;
  }
}

const DAY_MS = 86_400_000;

/** Seconds until the daily budgets reset at UTC midnight (at least one). */
export function secondsUntilUtcMidnight(now: number): number {
  return Math.max(1, Math.ceil((nextUtcMidnight(now) - now) / 1000));
}

let today = { start: Number.NaN, text: '' };

/**
 * The UTC date of `time`, `YYYY-MM-DD`. Asked several times per call (budgets, skill usage): the current
 * day's bounds and text are kept, so only a new day formats a date (a Date and an ISO string per ask cost
 * about 1% of a call). A JavaScript time has no leap seconds: every UTC day is DAY_MS long from the epoch.
 */
export function utcDay(time: number): string {
  if (time >= today.start && time < today.start + DAY_MS) return today.text;
  const start = time - (((time % DAY_MS) + DAY_MS) % DAY_MS);
  if (!Number.isFinite(start)) return new Date(time).toISOString().slice(0, 10);
  today = { start, text: new Date(start).toISOString().slice(0, 10) };
  return today.text;
}

function nextUtcMidnight(time: number): number {
  const day = new Date(time);
  return Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + 1);
}
