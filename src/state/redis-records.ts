import type { RedisConnection } from './redis-connection.js';
import { KEY_PREFIX, type ChangeTopic } from './redis-connection.js';

/** Lists of records, each with a unique `key` field, grouped by kind: `{ approved: [...], pending: [...] }`. */
export type RecordLists = Record<string, { key: string; value: unknown }[]>;

/**
 * Small record lists shared by every replica (the access lists, the registration): one Redis hash per
 * kind, field per record. A save writes only the records that changed since what Redis is known to hold (so
 * two replicas changing different senders never overwrite each other) and tells the other replicas, which
 * reload. Writes are queued in order; one that fails is kept and retried every second until Redis answers,
 * and a load first writes what is still owed, so a change made here is never undone by a reload.
 */
export class RedisRecords {
  /** What Redis holds, as far as this replica knows: the last load, plus every confirmed write since. */
  private written = new Map<string, string>();
  /** The lists as this replica last wanted them, when not yet confirmed written. */
  private owed: Map<string, string> | undefined;
  private queue: Promise<void> = Promise.resolve();
  private failing = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly redis: RedisConnection,
    private readonly topic: ChangeTopic,
    private readonly kinds: readonly string[],
  ) {}

  /** Redis's lists, after writing what this replica still owes them (throws while Redis does not answer). */
  async load(): Promise<Record<string, unknown[]>> {
    await this.queue;
    if (this.owed) await this.write(this.owed, true);
    const lists: Record<string, unknown[]> = {};
    const written = new Map<string, string>();
    for (const kind of this.kinds) {
      const hash = await this.redis.client.hgetall(this.hashKey(kind));
      lists[kind] = [];
      for (const [field, json] of Object.entries(hash)) {
        try {
          lists[kind].push(JSON.parse(json));
          written.set(`${kind}\n${field}`, json);
        } catch {
          continue; // Not ours to fix: a hand-edited value is skipped, never fatal.
        }
      }
    }
    this.written = written;
    return lists;
  }

  /** Queues the changes since what Redis holds; resolves once they are written (or kept for a retry). */
  save(lists: RecordLists): Promise<void> {
    const next = new Map<string, string>();
    for (const [kind, records] of Object.entries(lists))
      for (const record of records) next.set(`${kind}\n${record.key}`, JSON.stringify(record.value));
    this.owed = next;
    this.queue = this.queue.then(() => (this.owed ? this.write(this.owed, false) : undefined));
    return this.queue;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
  }

  private async write(next: Map<string, string>, rethrow: boolean): Promise<void> {
    const previous = this.written;
    const sets: [string, string, string][] = [];
    const deletes: [string, string][] = [];
    for (const [id, json] of next) {
      if (previous.get(id) === json) continue;
      const [kind, field] = id.split('\n') as [string, string];
      sets.push([this.hashKey(kind), field, json]);
    }
    for (const id of previous.keys()) {
      if (next.has(id)) continue;
      const [kind, field] = id.split('\n') as [string, string];
      deletes.push([this.hashKey(kind), field]);
    }
    try {
      if (sets.length + deletes.length > 0) {
        const write = this.redis.client.multi();
        for (const [key, field, json] of sets) write.hset(key, field, json);
        for (const [key, field] of deletes) write.hdel(key, field);
        await write.exec();
        await this.redis.announce(this.topic);
      }
      this.written = next;
      if (this.owed === next) this.owed = undefined;
      this.failing = false;
    } catch (error) {
      if (!this.closed) {
        clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(() => {
          if (this.owed)
            this.queue = this.queue.then(() => (this.owed ? this.write(this.owed, false) : undefined));
        }, 1000).unref();
      }
      if (!this.failing) {
        this.failing = true;
        console.error(
          `Agent: could not save the ${this.topic} records to Redis (${(error as Error).message}); kept, and written when it answers.`,
        );
      }
      if (rethrow) throw error;
    }
  }

  private hashKey(kind: string): string {
    return `${KEY_PREFIX}${this.topic}:${kind}`;
  }
}
