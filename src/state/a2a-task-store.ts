import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDir, readJsonFile, writeFileAtomic } from '../lib/atomic-file.js';
import { TASK_ID, senderAtCap, storeFull, type Awaitable } from './tasks.js';

/**
 * One A2A task as the store keeps it: the index fields A2A lists by, and the task itself as an opaque
 * document (A2A's Task in ProtoJSON: status, history, artifacts) that only src/a2a reads.
 */
export interface A2ATaskRecord {
  id: string;
  /** The caller that created it (A2ACaller.id): nobody else reads, lists, cancels or continues it. */
  owner: string;
  contextId: string;
  /** A2A's state name, e.g. `TASK_STATE_WORKING`. */
  state: string;
  /** Completed, failed, canceled or rejected: the first terminal write stands. */
  terminal: boolean;
  /** The status timestamp (ISO 8601, UTC): lists sort on it, newest first. */
  updatedAt: string;
  doc: unknown;
}

export interface A2ATaskQuery {
  contextId?: string;
  state?: string;
  /** Only tasks whose status changed after this instant. */
  updatedAfter?: string;
  /** Continue after this task (the last of the previous page). */
  after?: { updatedAt: string; id: string };
  limit: number;
}

/**
 * Where A2A tasks live. The data-dir version below; a Redis twin (shared by replicas, leases on running
 * tasks as redis-task-store.ts has) implements the same contract.
 */
export interface A2ATaskRecords {
  /** Throws when `owner` may not start another task now: 429 at its own cap, 503 at the store's. */
  admit(owner: string, retentionMs: number): Awaitable<void>;
  /** False when the stored task is terminal already in another state (a late write changes nothing). */
  put(record: A2ATaskRecord): Awaitable<boolean>;
  get(id: string): Awaitable<A2ATaskRecord | undefined>;
  /** `owner`'s tasks matching `query`, newest first, and how many match in all. */
  list(owner: string, query: A2ATaskQuery): Awaitable<{ records: A2ATaskRecord[]; total: number }>;
  /** Tasks that were not finished when the store opened: their runs ended with the process. */
  interrupted(): Awaitable<A2ATaskRecord[]>;
  /** Forgets terminal tasks last changed more than `retentionMs` ago. */
  sweep(retentionMs: number): Awaitable<void>;
}

type Entry = Omit<A2ATaskRecord, 'doc'>;

/**
 * A2A tasks in `<dataDir>/a2a-tasks`, one file each, written atomically at every change of state (never
 * per reply token: the SDK-facing adapter keeps a running task's deltas in memory). Memory holds only
 * the index fields, so thousands of tasks stay small; documents are read from disk when asked for.
 * Tasks per owner and in all are capped, so a caller cannot grow the disk by starting tasks.
 */
export class A2ATaskFiles implements A2ATaskRecords {
  private readonly entries = new Map<string, Entry>();
  private readonly perOwner = new Map<string, number>();
  private readonly dir: string;
  private readonly opened: Entry[] = [];
  readonly maxPerOwner: number;
  readonly maxTotal: number;

  constructor(
    dataDir: string,
    private readonly options: { now?: () => number; maxPerOwner?: number; maxTotal?: number } = {},
  ) {
    this.maxPerOwner = options.maxPerOwner ?? 200;
    this.maxTotal = options.maxTotal ?? 5000;
    this.dir = join(dataDir, 'a2a-tasks');
    ensureDir(this.dir);
    for (const name of readdirSync(this.dir)) {
      if (!name.endsWith('.json')) continue;
      const record = this.read(name.slice(0, -'.json'.length));
      if (!record) continue;
      this.remember(record);
      if (!record.terminal) this.opened.push(lean(record));
    }
  }

  admit(owner: string, retentionMs: number): void {
    if ((this.perOwner.get(owner) ?? 0) >= this.maxPerOwner) {
      throw senderAtCap(owner, this.maxPerOwner, retentionMs, this.secondsUntilSlot(owner, retentionMs));
    }
    if (this.entries.size >= this.maxTotal) throw storeFull();
  }

  put(record: A2ATaskRecord): boolean {
    if (!TASK_ID.test(record.id)) throw new Error('An A2A task id must be a random UUIDv4.');
    const known = this.entries.get(record.id);
    if (known && known.owner !== record.owner) throw new Error('An A2A task never changes owner.');
    if (known?.terminal && known.state !== record.state) return false;
    writeFileAtomic(this.file(record.id), JSON.stringify(record));
    if (!known) this.remember(record);
    else this.entries.set(record.id, lean(record));
    return true;
  }

  get(id: string): A2ATaskRecord | undefined {
    return this.entries.has(id) ? this.read(id) : undefined;
  }

  list(owner: string, query: A2ATaskQuery): { records: A2ATaskRecord[]; total: number } {
    const matching = [...this.entries.values()]
      .filter(
        (entry) =>
          entry.owner === owner &&
          (!query.contextId || entry.contextId === query.contextId) &&
          (!query.state || entry.state === query.state) &&
          (!query.updatedAfter || entry.updatedAt > query.updatedAfter),
      )
      .sort(newestFirst);
    const after = query.after;
    const start = after ? matching.findIndex((entry) => newestFirst(entry, { ...after }) > 0) : 0;
    const page = (start < 0 ? [] : matching.slice(start, start + query.limit))
      .map((entry) => this.read(entry.id))
      .filter((record): record is A2ATaskRecord => record !== undefined);
    return { records: page, total: matching.length };
  }

  interrupted(): A2ATaskRecord[] {
    return this.opened
      .splice(0)
      .map((entry) => this.read(entry.id))
      .filter((record): record is A2ATaskRecord => record !== undefined && !record.terminal);
  }

  sweep(retentionMs: number): void {
    const cutoff = new Date(this.now() - retentionMs).toISOString();
    for (const entry of this.entries.values()) {
      if (!entry.terminal || entry.updatedAt >= cutoff) continue;
      this.forget(entry);
      rmSync(this.file(entry.id), { force: true });
    }
  }

  private read(id: string): A2ATaskRecord | undefined {
    if (!TASK_ID.test(id)) return undefined;
    try {
      const record = readJsonFile<A2ATaskRecord>(this.file(id));
      return record && record.id === id && typeof record.owner === 'string' ? record : undefined;
    } catch {
      // A torn file cannot be a task anyone was told is finished: skip it.
      return undefined;
    }
  }

  private remember(record: A2ATaskRecord): void {
    this.entries.set(record.id, lean(record));
    this.perOwner.set(record.owner, (this.perOwner.get(record.owner) ?? 0) + 1);
  }

  private forget(entry: Entry): void {
    if (!this.entries.delete(entry.id)) return;
    const left = (this.perOwner.get(entry.owner) ?? 1) - 1;
    if (left > 0) this.perOwner.set(entry.owner, left);
    else this.perOwner.delete(entry.owner);
  }

  // When the owner's oldest finished task leaves the store (or a minute, if none has finished yet).
  private secondsUntilSlot(owner: string, retentionMs: number): number {
    let oldest = Infinity;
    for (const entry of this.entries.values()) {
      if (entry.owner === owner && entry.terminal) oldest = Math.min(oldest, Date.parse(entry.updatedAt));
    }
    if (!Number.isFinite(oldest)) return 60;
    return Math.max(1, Math.ceil((oldest + retentionMs - this.now()) / 1000));
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private file(id: string): string {
    return join(this.dir, `${id}.json`);
  }
}

function lean({ doc: _onDisk, ...entry }: A2ATaskRecord): Entry {
  return entry;
}

// Newest status first; the id breaks ties, so a page boundary is exact.
function newestFirst(a: Pick<Entry, 'updatedAt' | 'id'>, b: Pick<Entry, 'updatedAt' | 'id'>): number {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt < b.updatedAt ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
