import type { RedisConnection } from './redis-connection.js';
import { KEY_PREFIX, type ChangeTopic } from './redis-connection.js';

/** Lists of records, each with a unique `key` field, grouped by kind: `{ approved: [...], pending: [...] }`. */
export type RecordLists = Record<string, { key: string; value: unknown }[]>;

/**
 * Small record lists shared by every replica (the access lists, the registration): one Redis hash per
 * kind, field per record. A save writes only the records that changed since the last one (so two replicas
 * changing different senders never overwrite each other) and tells the other replicas, which reload.
 * Writes are queued in order; a write that fails is retried with the next save and reported once.
 */
export class RedisRecords {
  private written = new Map<string, string>();
  private queue: Promise<void> = Promise.resolve();
  private failing = false;

  constructor(
    private readonly redis: RedisConnection,
    private readonly topic: ChangeTopic,
    private readonly kinds: readonly string[],
  ) {}

  async load(): Promise<Record<string, unknown[]>> {
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

  /** Queues the changes since the last save or load; resolves once they are in Redis. */
  save(lists: RecordLists): Promise<void> {
    const next = new Map<string, string>();
    for (const [kind, records] of Object.entries(lists))
      for (const record of records) next.set(`${kind}\n${record.key}`, JSON.stringify(record.value));
    const previous = this.written;
    this.written = next;
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
    if (sets.length + deletes.length === 0) return this.queue;
    const exec = () => {
      const write = this.redis.client.multi();
      for (const [key, field, json] of sets) write.hset(key, field, json);
      for (const [key, field] of deletes) write.hdel(key, field);
      return write.exec();
    };
    this.queue = this.queue
      .then(exec)
      .then(() => {
        this.failing = false;
        return this.redis.announce(this.topic);
      })
      .catch((error: Error) => {
        // Forget what was written, so the next save writes every record again.
        this.written = new Map();
        if (this.failing) return;
        this.failing = true;
        console.error(
          `Agent: could not save the ${this.topic} records to Redis (${error.message}); retrying with the next change.`,
        );
      });
    return this.queue;
  }

  private hashKey(kind: string): string {
    return `${KEY_PREFIX}${this.topic}:${kind}`;
  }
}
