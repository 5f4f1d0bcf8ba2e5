import { join } from 'node:path';
import type { EnvelopeEvent } from '../agent/events.js';
import { safeJson } from '../lib/text.js';
import type { StatusResponse, TrafficEntry, TrafficFilter, TrafficMinute } from '../protocol/console-api.js';
import { RotatingFile } from './traffic-file.js';
import { compileFilter } from './traffic-filter.js';
import { readHistory } from './traffic-history.js';

export interface TrafficLogOptions {
  dataDir: string;
  /** Entries kept in memory; default 10,000. */
  capacity?: number;
  /** The file rotates before it passes this size; default 5 MiB. */
  maxFileBytes?: number;
  /** Old files kept (traffic.1.jsonl ...); default 3. */
  keepFiles?: number;
  /** Lines are written in batches: at most this long after they arrive ... */
  flushMs?: number;
  /** ... or as soon as this many bytes are waiting. */
  flushBytes?: number;
  /** Values that must never reach the log (the gateway and bearer tokens), masked wherever they appear. */
  secrets?: () => readonly string[];
  onError?: (error: unknown) => void;
  now?: () => number;
}

type Counts = { accepted: number; refused: number };

const MINUTES = 15;
const MINUTE_MS = 60_000;
// Bounds each entry's memory whatever a caller sends; previews are already cut to 500 characters.
const MAX_TEXT = 2000;
// A message carries at most 32 parts (calls/attachments.ts).
const MAX_FILES = 32;
// Shorter values are too common to mask without destroying the log (a one-letter test token, say).
const MIN_SECRET_LENGTH = 8;

/**
 * The operator's traffic log: the last `capacity` entries in memory (a ring buffer), every entry appended
 * to `<dataDir>/logs/traffic.jsonl` (rotated), per-minute counts, and a live feed for /api/events. It starts
 * with the newest `capacity` entries the files kept, so a restart loses none of the history they hold.
 */
export class TrafficLog {
  readonly file: RotatingFile;
  private readonly ring: (TrafficEntry | undefined)[];
  private start = 0;
  private count = 0;
  private nextId = 1;
  private readonly minutes = new Map<number, Counts>();
  private readonly totals: Counts = { accepted: 0, refused: 0 };
  private readonly listeners = new Set<(entry: TrafficEntry) => void>();
  private pending: string[] = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly options: Required<TrafficLogOptions>;

  constructor(options: TrafficLogOptions) {
    this.options = {
      capacity: 10_000,
      maxFileBytes: 5 * 1024 * 1024,
      keepFiles: 3,
      flushMs: 100,
      flushBytes: 64 * 1024,
      secrets: () => [],
      onError: (error) =>
        console.warn(
          `Traffic log: cannot write the log file (${String(error)}); the console keeps the entries in memory. Check the data directory's free space and permissions.`,
        ),
      now: Date.now,
      ...withoutUndefined(options),
    };
    if (!Number.isInteger(this.options.capacity) || this.options.capacity < 1)
      throw new Error(
        `Traffic log capacity must be a whole number of entries, 1 or more (got ${this.options.capacity}).`,
      );
    this.ring = new Array<TrafficEntry | undefined>(this.options.capacity);
    this.file = new RotatingFile({
      path: join(options.dataDir, 'logs', 'traffic.jsonl'),
      maxBytes: this.options.maxFileBytes,
      keep: this.options.keepFiles,
      onError: this.options.onError,
    });
    this.restore();
  }

  /** Records one envelope event; returns the entry as kept (only TrafficEntry's fields, secrets masked). */
  add(event: EnvelopeEvent): TrafficEntry {
    const entry = toEntry(this.nextId++, event, maskerFor(this.options.secrets()));
    this.push(entry);
    // The Overview's counts are calls to this agent; calls out are in the log, not in those counts.
    if (entry.direction !== 'out') this.countIn(entry);
    // One line each, read in terminals and editors: what JSON leaves raw (C1 controls, bidi marks) is escaped.
    if (!this.closed) this.queueLine(`${safeJson(JSON.stringify(entry))}\n`);
    for (const listener of this.listeners) listener(entry);
    return entry;
  }

  /** Calls `listener` with each new entry; returns the unsubscribe function. */
  subscribe(listener: (entry: TrafficEntry) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The id of the newest entry, 0 before the first. */
  get lastId(): number {
    return this.nextId - 1;
  }

  /** How many entries are in memory. */
  get size(): number {
    return this.count;
  }

  /** Matching entries, newest first, at most `limit`. */
  query(filter: TrafficFilter = {}, limit = this.options.capacity): TrafficEntry[] {
    const matches = compileFilter(filter);
    const found: TrafficEntry[] = [];
    for (let i = this.count - 1; i >= 0 && found.length < limit; i--) {
      const entry = this.at(i);
      if (matches(entry)) found.push(entry);
    }
    return found;
  }

  /** Every entry in memory, oldest first. */
  all(): TrafficEntry[] {
    return Array.from({ length: this.count }, (_, i) => this.at(i));
  }

  /** The last 15 minutes, oldest first (zeros where nothing came), and totals since start. */
  counters(): StatusResponse['traffic'] {
    const current = Math.floor(this.options.now() / MINUTE_MS);
    const perMinute: TrafficMinute[] = [];
    for (let minute = current - MINUTES + 1; minute <= current; minute++) {
      const counts = this.minutes.get(minute) ?? { accepted: 0, refused: 0 };
      perMinute.push({ minute: new Date(minute * MINUTE_MS).toISOString(), ...counts });
    }
    return { perMinute, ...this.totals };
  }

  /** Writes what is waiting; resolves once it is on disk. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const lines = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    return this.file.write(lines);
  }

  /** Flushes and stops writing; the in-memory log stays readable. */
  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    await this.flush();
  }

  /**
   * The entries the files kept, oldest first, before any new one. Ids keep increasing: a file's own id is
   * kept when it follows the one before (the files of earlier versions started again from 1 at each run),
   * and new entries follow the last. They count in the per-minute chart at their own time; the totals stay
   * those since this start.
   */
  private restore(): void {
    const { capacity, keepFiles, onError } = this.options;
    const files = Array.from({ length: keepFiles + 1 }, (_, generation) => this.file.fileAt(generation));
    const mask = maskerFor(this.options.secrets());
    for (const line of readHistory(files, capacity, onError)) {
      const id = Math.max(Number.isSafeInteger(line.id) ? (line.id as number) : 0, this.nextId);
      let entry: TrafficEntry;
      try {
        entry = toEntry(id, line as unknown as EnvelopeEvent, mask);
      } catch {
        continue;
      }
      this.nextId = id + 1;
      this.push(entry);
      if (entry.direction !== 'out') this.countMinute(entry, Date.parse(entry.time));
    }
  }

  private at(index: number): TrafficEntry {
    return this.ring[(this.start + index) % this.options.capacity] as TrafficEntry;
  }

  private push(entry: TrafficEntry): void {
    const { capacity } = this.options;
    if (this.count < capacity) {
      this.ring[(this.start + this.count) % capacity] = entry;
      this.count++;
    } else {
      // Full: the oldest slot takes the newest entry.
      this.ring[this.start] = entry;
      this.start = (this.start + 1) % capacity;
    }
  }

  private countIn(entry: TrafficEntry): void {
    this.totals[entry.verdict === 'accepted' ? 'accepted' : 'refused']++;
    this.countMinute(entry, this.options.now());
  }

  private countMinute(entry: TrafficEntry, at: number): void {
    const current = Math.floor(this.options.now() / MINUTE_MS);
    const minute = Math.min(Math.floor(at / MINUTE_MS), current);
    if (minute <= current - MINUTES) return;
    const counts = this.minutes.get(minute) ?? { accepted: 0, refused: 0 };
    counts[entry.verdict === 'accepted' ? 'accepted' : 'refused']++;
    this.minutes.set(minute, counts);
    for (const old of this.minutes.keys()) if (old <= current - MINUTES) this.minutes.delete(old);
  }

  private queueLine(line: string): void {
    this.pending.push(line);
    this.pendingBytes += line.length;
    if (this.pendingBytes >= this.options.flushBytes) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.options.flushMs);
      this.timer.unref();
    }
  }
}

type Mask = (text: string | undefined) => string | undefined;

function maskerFor(secrets: readonly string[]): Mask {
  const masked = secrets.filter((secret) => secret.length >= MIN_SECRET_LENGTH);
  return (text) => {
    if (text === undefined) return undefined;
    let clean = text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}...` : text;
    for (const secret of masked) clean = clean.replaceAll(secret, '[secret]');
    return clean;
  };
}

/** How one field of an event is kept: as it is, masked (a text), or rebuilt (an object's own fields). */
type Keep<T> = (value: T, mask: Mask) => T | undefined;
const same = <T>(value: T): T => value;
// A text read back from the file is checked too: a line another version wrote may hold something else.
const text: Keep<string> = (value, mask) => (typeof value === 'string' ? mask(value) : undefined);

/**
 * Every field an event carries, with how it is kept. The type names every key of EnvelopeEvent, so a field
 * added to the event fails to compile until it is listed here: nothing the pipeline knew is silently dropped
 * from the log, the file or the API. Only these keys are read, so nothing else on an event is ever kept.
 */
const FIELDS: { [K in keyof EnvelopeEvent]-?: Keep<NonNullable<EnvelopeEvent[K]>> } = {
  time: same,
  endpoint: text,
  sender: text,
  skill: text,
  mode: same,
  signatureForm: same,
  verdict: same,
  code: same,
  status: same,
  message: text,
  durationMs: same,
  bytesIn: same,
  bytesOut: same,
  traceId: text,
  forwardedFor: text,
  diagnosis: text,
  taskId: text,
  preview: (preview, mask) =>
    withoutUndefined({ payload: mask(preview.payload), reply: mask(preview.reply) }),
  screen: (screen, mask) => ({ rule: mask(screen.rule) ?? '' }),
  admittedBy: same,
  held: same,
  direction: same,
  callee: text,
  replySignature: same,
  onBehalfOf: text,
  // Checked at the door (call-chain.ts); a line read back from the file keeps an id and a number only.
  chain: (chain, mask) =>
    typeof chain.id === 'string' && typeof chain.hop === 'number'
      ? { id: mask(chain.id) ?? '', hop: chain.hop }
      : undefined,
  protocol: same,
  // The method, version, transport and step come from fixed sets; the context is the caller's text.
  a2a: (a2a, mask) =>
    withoutUndefined({
      method: a2a.method,
      version: a2a.version,
      transport: a2a.transport,
      taskState: a2a.taskState,
      contextId: mask(a2a.contextId),
      failedAt: a2a.failedAt,
    }),
  callerName: text,
  keyStatus: same,
  // Step names from fixed sets; a line read back from the file keeps only names.
  passed: (steps) => (Array.isArray(steps) ? steps.filter((step) => typeof step === 'string') : undefined),
  // Names and types came escaped (calls/attachments.ts); a line read back keeps only these fields, bounded.
  files: (files, mask) =>
    Array.isArray(files)
      ? files.slice(0, MAX_FILES).map((file) =>
          withoutUndefined({
            name: mask(typeof file.name === 'string' ? file.name : '') ?? '',
            type: mask(typeof file.type === 'string' ? file.type : '') ?? '',
            bytes: typeof file.bytes === 'number' ? file.bytes : 0,
            fetched: file.fetched === true ? true : undefined,
          }),
        )
      : undefined,
};
const FIELD_NAMES = Object.keys(FIELDS) as (keyof EnvelopeEvent)[];

function toEntry(id: number, event: EnvelopeEvent, mask: Mask): TrafficEntry {
  const entry: Record<string, unknown> = { id };
  for (const name of FIELD_NAMES) {
    const value = event[name];
    if (value === undefined) continue;
    const kept = (FIELDS[name] as Keep<unknown>)(value, mask);
    if (kept !== undefined) entry[name] = kept;
  }
  return entry as unknown as TrafficEntry;
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T;
}
