import type { Redis } from 'ioredis';
import {
  readA2AKeysFile,
  validStoredKey,
  type A2AKeyEntry,
  type A2AKeyRecords,
  type StoredA2AKey,
  type UsageBatch,
} from './a2a-key-store.js';
import { KEY_PREFIX, type ChangeTopic, type RedisConnection } from './redis-connection.js';

const TOPIC: ChangeTopic = 'a2a-keys';
/** Hashes, field per key id: the records (JSON), their calls, their last use (ms). */
const RECORDS = `${KEY_PREFIX}a2a-keys`;
const CALLS = `${KEY_PREFIX}a2a-keys:calls`;
const LAST_USED = `${KEY_PREFIX}a2a-keys:last-used`;

/**
 * One replica's usage since its last write, in one round trip: calls added, the latest use kept (another
 * replica may have written a later one), keys no longer kept skipped. KEYS: records, calls, last used.
 * ARGV: id, calls, used at, id, calls, used at...
 */
const ADD_USAGE = `
for i = 1, #ARGV, 3 do
  local id = ARGV[i]
  if redis.call('HEXISTS', KEYS[1], id) == 1 then
    redis.call('HINCRBY', KEYS[2], id, ARGV[i + 1])
    local last = tonumber(redis.call('HGET', KEYS[3], id) or '0')
    if tonumber(ARGV[i + 2]) > last then redis.call('HSET', KEYS[3], id, ARGV[i + 2]) end
  end
end
return 0
`;

type UsageCommand = (...keysThenArgs: (string | number)[]) => Promise<number>;

/**
 * The A2A keys every replica shares, in three Redis hashes. Each issue, revocation or removal is announced
 * (`a2a-keys`), so the other replicas drop what they hold at once; a replica that missed it reads again
 * within its bound anyway (A2AKeys' cache). Errors are the caller's to handle: a key cannot be checked, or
 * a change saved, while Redis does not answer.
 */
export class RedisA2AKeyRecords implements A2AKeyRecords {
  private readonly client: Redis & { agentBridgeKeyUsage?: UsageCommand };

  constructor(private readonly redis: RedisConnection) {
    this.client = redis.client;
    this.client.defineCommand('agentBridgeKeyUsage', { numberOfKeys: 3, lua: ADD_USAGE });
  }

  async add(key: StoredA2AKey): Promise<boolean> {
    const added = (await this.client.hsetnx(RECORDS, key.id, JSON.stringify(key))) === 1;
    if (added) await this.redis.announce(TOPIC);
    return added;
  }

  async get(id: string): Promise<StoredA2AKey | undefined> {
    return parse(await this.client.hget(RECORDS, id));
  }

  async list(): Promise<A2AKeyEntry[]> {
    const [records, calls, used] = await Promise.all(
      [RECORDS, CALLS, LAST_USED].map((key) => this.client.hgetall(key)),
    );
    return Object.values(records ?? {}).flatMap((json) => {
      const key = parse(json);
      if (!key) return [];
      const lastUsedAt = Number(used?.[key.id]);
      return [{ ...key, calls: Number(calls?.[key.id]) || 0, ...(lastUsedAt > 0 ? { lastUsedAt } : {}) }];
    });
  }

  async revoke(id: string, at: number): Promise<StoredA2AKey | undefined> {
    const key = parse(await this.client.hget(RECORDS, id));
    if (!key || key.revokedAt !== undefined) return key;
    // Read, then written whole: the only other write to a record is another revocation, with the same effect.
    const revoked = { ...key, revokedAt: at };
    await this.client.hset(RECORDS, id, JSON.stringify(revoked));
    await this.redis.announce(TOPIC);
    return revoked;
  }

  async addUsage(batch: UsageBatch): Promise<void> {
    if (batch.size === 0) return;
    const args = [...batch].flatMap(([id, use]) => [id, use.calls, use.lastUsedAt]);
    await (this.client.agentBridgeKeyUsage as UsageCommand)(RECORDS, CALLS, LAST_USED, ...args);
  }

  async remove(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.client
      .multi()
      .hdel(RECORDS, ...ids)
      .hdel(CALLS, ...ids)
      .hdel(LAST_USED, ...ids)
      .exec();
    await this.redis.announce(TOPIC);
  }

  onChange(listener: () => void): () => void {
    const changed = (topic: ChangeTopic) => {
      if (topic === TOPIC) listener();
    };
    this.redis.on('change', changed);
    return () => this.redis.off('change', changed);
  }

  /**
   * The keys an agent that ran alone issued (its data dir's file), brought into Redis once, with their usage
   * (a key already in Redis stays as it is there). Returns how many were added.
   */
  async importFile(path: string): Promise<number> {
    const entries = readA2AKeysFile(path);
    let added = 0;
    for (const { calls, lastUsedAt, ...key } of entries) {
      if (!(await this.add(key))) continue;
      added += 1;
      if (lastUsedAt !== undefined) await this.addUsage(new Map([[key.id, { calls, lastUsedAt }]]));
    }
    return added;
  }
}

function parse(json: string | null | undefined): StoredA2AKey | undefined {
  if (!json) return undefined;
  try {
    return validStoredKey(JSON.parse(json));
  } catch {
    return undefined; // Not ours to fix: a hand-edited value refuses its key, never the agent.
  }
}
