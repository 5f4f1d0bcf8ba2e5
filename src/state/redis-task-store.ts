import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ProtocolError, type Envelope, type TaskRecord, type TaskStatus } from '../protocol/index.js';
import { KEY_PREFIX, unavailable, type RedisConnection } from './redis-connection.js';
import type { StoredTask } from './task-store.js';
import type { TaskOutcome, TaskState } from './tasks.js';

const TASK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ALL = `${KEY_PREFIX}tasks:all`;
const HELD = `${KEY_PREFIX}tasks:held`;
/** Tasks some replica answers for (running, or a callback owed), scored by when its lease runs out. */
const LEASES = `${KEY_PREFIX}tasks:leases`;
const OWNERS = `${KEY_PREFIX}tasks:owners`;
/** Score of a task that has not finished: it counts against the caps until it does. */
const UNFINISHED = 1e15;

const taskKey = (id: string) => `${KEY_PREFIX}task:${id}`;
const senderKey = (sender: string) => `${KEY_PREFIX}tasks:sender:${sender}`;

/**
 * Writes the task only while it has not finished (a late progress report, or a replica that lost its lease,
 * never overwrites a result). KEYS: task. ARGV: json, ttl ms (0: none). Returns 1 when written.
 */
const SAVE_ACTIVE = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local status = cjson.decode(current).status
if status == 'done' or status == 'failed' then return 0 end
if tonumber(ARGV[2]) > 0 then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else redis.call('SET', KEYS[1], ARGV[1]) end
return 1
`;

/**
 * Finishes a task once: the first replica to finish it wins. KEYS: task, all, sender, held, leases, owners.
 * ARGV: json, ttl ms, id, expiry score, keep lease (1 when a callback is still owed). Returns 1 when finished.
 */
const FINISH = `
local current = redis.call('GET', KEYS[1])
if current then
  local status = cjson.decode(current).status
  if status == 'done' or status == 'failed' then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[3])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
redis.call('SREM', KEYS[4], ARGV[3])
if ARGV[5] ~= '1' then
  redis.call('ZREM', KEYS[5], ARGV[3])
  redis.call('HDEL', KEYS[6], ARGV[3])
end
return 1
`;

/**
 * Takes over a task whose lease ran out. KEYS: leases, owners. ARGV: id, now, new lease end, replica.
 * Returns 1 when this replica now holds it.
 */
const CLAIM = `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) > tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
return 1
`;

/** Extends the leases this replica still holds. KEYS: leases, owners. ARGV: new lease end, replica, ids... */
const RENEW = `
for i = 3, #ARGV do
  if redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[2] then redis.call('ZADD', KEYS[1], 'XX', ARGV[1], ARGV[i]) end
end
return 1
`;

type Script = (...keysThenArgs: (string | number)[]) => Promise<number>;
interface ScriptedRedis extends Redis {
  agentBridgeSaveActive: Script;
  agentBridgeFinish: Script;
  agentBridgeClaim: Script;
  agentBridgeRenew: Script;
}

export interface RedisTaskStoreOptions {
  now?: () => number;
  maxPerSender?: number;
  maxTotal?: number;
  /** How long a replica answers for a task without renewing; another replica fails it after that. */
  leaseMs?: number;
  /** How long finished results are kept (Redis expires them). */
  retentionMs(): number;
}

/**
 * Async tasks on Redis, shared by every replica: one JSON value per task (result and held envelope in it),
 * a sorted set per sender and one in all for the caps, and leases. A replica that runs a task (or owes its
 * callback) renews its lease every third of it; when one stops, another claims the lapsed lease, fails the
 * task and delivers the callback, once: finishing is atomic and only the first finish counts.
 */
export class RedisTaskStore implements TaskState {
  private readonly client: ScriptedRedis;
  private readonly now: () => number;
  private readonly replica = randomUUID();
  private readonly leaseMs: number;
  /** Tasks this replica holds a lease on (running here, or delivering their callback). */
  private readonly held = new Set<string>();
  private readonly renewTimer: NodeJS.Timeout;
  readonly maxPerSender: number;
  readonly maxTotal: number;

  constructor(
    private readonly redis: RedisConnection,
    private readonly options: RedisTaskStoreOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.maxPerSender = options.maxPerSender ?? 200;
    this.maxTotal = options.maxTotal ?? 5000;
    this.leaseMs = options.leaseMs ?? 30_000;
    const client = redis.client;
    client.defineCommand('agentBridgeSaveActive', { numberOfKeys: 1, lua: SAVE_ACTIVE });
    client.defineCommand('agentBridgeFinish', { numberOfKeys: 6, lua: FINISH });
    client.defineCommand('agentBridgeClaim', { numberOfKeys: 2, lua: CLAIM });
    client.defineCommand('agentBridgeRenew', { numberOfKeys: 2, lua: RENEW });
    this.client = client as ScriptedRedis;
    this.renewTimer = setInterval(() => void this.renew(), Math.max(100, this.leaseMs / 3));
    this.renewTimer.unref();
  }

  async admit(sender: string, retentionMs: number): Promise<void> {
    const now = this.now();
    const replies = await this.run((c) =>
      c
        .multi()
        .zremrangebyscore(senderKey(sender), '-inf', now)
        .zremrangebyscore(ALL, '-inf', now)
        .zcard(senderKey(sender))
        .zcard(ALL)
        .exec(),
    );
    const mine = Number(replies?.[2]?.[1] ?? 0);
    const all = Number(replies?.[3]?.[1] ?? 0);
    if (mine >= this.maxPerSender) {
      throw new ProtocolError(
        'RATE_LIMITED',
        429,
        `${sender} already has ${this.maxPerSender} tasks held here (waiting, running or finished within ` +
          `${Math.round(retentionMs / 3600_000)} h); poll them, and submit more once older results expire.`,
        { step: 'rate-limit', retryAfterSeconds: 60 },
      );
    }
    if (all >= this.maxTotal) {
      throw new ProtocolError(
        'AGENT_UNAVAILABLE',
        503,
        'This agent holds as many tasks as it can right now; retry later or call in sync mode.',
        { step: 'rate-limit', retryAfterSeconds: 300 },
      );
    }
  }

  async create(
    meta: Pick<StoredTask, 'sender' | 'skill' | 'traceId' | 'spanId' | 'callbackUrl' | 'held'>,
    taskId: string = randomUUID(),
  ): Promise<StoredTask> {
    if (!TASK_ID.test(taskId)) throw new Error('A task id must be a random UUIDv4.');
    const task: StoredTask = { taskId, status: 'pending', createdAt: this.now(), ...meta };
    if (meta.callbackUrl) task.callback = { state: 'pending', attempts: 0 };
    await this.run((c) => {
      const write = c
        .multi()
        .set(taskKey(taskId), JSON.stringify(task), 'NX')
        .zadd(ALL, UNFINISHED, taskId)
        .zadd(senderKey(task.sender), UNFINISHED, taskId);
      // A held task waits for the operator, not for a replica: no lease until it runs.
      if (task.held) write.sadd(HELD, taskId);
      return write.exec();
    });
    return task;
  }

  async get(taskId: string): Promise<StoredTask | undefined> {
    if (!TASK_ID.test(taskId)) return undefined;
    const json = await this.run((c) => c.get(taskKey(taskId)));
    return json ? (JSON.parse(json) as StoredTask) : undefined;
  }

  view(task: StoredTask): TaskRecord {
    const record: TaskRecord = { taskId: task.taskId, status: task.status };
    if (task.status === 'running' && task.progress !== undefined) record.progress = task.progress;
    if (task.status === 'done') record.result = task.result;
    if (task.status === 'failed' && task.error) record.error = task.error;
    return record;
  }

  async setStatus(task: StoredTask, status: TaskStatus): Promise<void> {
    task.status = status;
    if (status !== 'pending') delete task.held;
    if (status === 'running') await this.lease(task.taskId);
    await this.run((c) => c.agentBridgeSaveActive(taskKey(task.taskId), JSON.stringify(task), 0));
    await this.run((c) => c.srem(HELD, task.taskId));
  }

  heldEnvelope(task: StoredTask): Envelope | undefined {
    return task.held?.envelope;
  }

  async heldTasks(): Promise<StoredTask[]> {
    const ids = await this.run((c) => c.smembers(HELD));
    const tasks = await Promise.all(ids.map((id) => this.get(id)));
    return tasks.filter((task): task is StoredTask => task?.status === 'pending' && task.held !== undefined);
  }

  /** Written through (another replica may answer the poll); a report after the finish is dropped. */
  setProgress(task: StoredTask, fraction: number): void {
    task.progress = Math.min(1, Math.max(0, fraction));
    this.client.agentBridgeSaveActive(taskKey(task.taskId), JSON.stringify(task), 0).catch(() => undefined);
  }

  async finish(task: StoredTask, outcome: TaskOutcome): Promise<boolean> {
    if ('result' in outcome) {
      task.status = 'done';
      task.result = outcome.result;
    } else {
      task.status = 'failed';
      task.error = outcome.error;
    }
    delete task.progress;
    delete task.held;
    task.finishedAt = this.now();
    const retention = Math.max(1000, this.options.retentionMs());
    const owesCallback = task.callback?.state === 'pending';
    if (owesCallback) await this.lease(task.taskId);
    const finished = await this.run((c) =>
      c.agentBridgeFinish(
        taskKey(task.taskId),
        ALL,
        senderKey(task.sender),
        HELD,
        LEASES,
        OWNERS,
        JSON.stringify(task),
        retention,
        task.taskId,
        task.finishedAt! + retention,
        owesCallback ? '1' : '0',
      ),
    );
    if (!owesCallback || finished !== 1) this.held.delete(task.taskId);
    return finished === 1;
  }

  result(task: StoredTask): unknown {
    return task.status === 'done' ? task.result : undefined;
  }

  async setCallback(
    task: StoredTask,
    state: 'pending' | 'delivered' | 'failed',
    attempts: number,
  ): Promise<void> {
    task.callback = { state, attempts };
    await this.run((c) => {
      const write = c.multi().set(taskKey(task.taskId), JSON.stringify(task), 'KEEPTTL');
      if (state !== 'pending') write.zrem(LEASES, task.taskId).hdel(OWNERS, task.taskId);
      return write.exec();
    });
    if (state !== 'pending') this.held.delete(task.taskId);
  }

  async recover(): Promise<StoredTask[]> {
    const now = this.now();
    const lapsed = await this.run((c) => c.zrangebyscore(LEASES, '-inf', now, 'LIMIT', 0, 100));
    const owed: StoredTask[] = [];
    for (const id of lapsed) {
      const claimed = await this.run((c) =>
        c.agentBridgeClaim(LEASES, OWNERS, id, now, now + this.leaseMs, this.replica),
      );
      if (claimed !== 1) continue;
      this.held.add(id);
      const task = await this.get(id);
      if (!task) {
        await this.release(id);
        continue;
      }
      if (task.status === 'pending' || task.status === 'running') {
        const failed = await this.finish(task, {
          error: {
            code: 'AGENT_UNAVAILABLE',
            message: 'The replica running this task stopped before it finished; submit it again.',
          },
        });
        if (!failed) continue;
      }
      if (task.callback?.state === 'pending') owed.push(task);
      else await this.release(id);
    }
    return owed;
  }

  get activeCount(): number {
    return this.held.size;
  }

  /** Redis expires results and prunes the caps' sets by score (in `admit`). */
  sweep(): void {}

  close(): void {
    clearInterval(this.renewTimer);
  }

  private async lease(id: string): Promise<void> {
    this.held.add(id);
    await this.run((c) =>
      c
        .multi()
        .zadd(LEASES, this.now() + this.leaseMs, id)
        .hset(OWNERS, id, this.replica)
        .exec(),
    );
  }

  private async release(id: string): Promise<void> {
    this.held.delete(id);
    await this.run((c) => c.multi().zrem(LEASES, id).hdel(OWNERS, id).exec());
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0) return;
    await this.client
      .agentBridgeRenew(LEASES, OWNERS, this.now() + this.leaseMs, this.replica, ...this.held)
      .catch(() => undefined); // Redis down: the next renewal tries again; the lease outlives a short gap.
  }

  // Every command fails at once while Redis is down; the caller turns that into a 503.
  private async run<T>(command: (client: ScriptedRedis) => Promise<T>): Promise<T> {
    this.redis.assertUp();
    try {
      return await command(this.client);
    } catch (error) {
      if (error instanceof ProtocolError) throw error;
      throw unavailable();
    }
  }
}
