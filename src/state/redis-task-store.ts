import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ProtocolError, type Envelope, type TaskRecord } from '../protocol/index.js';
import { KEY_PREFIX, unavailable, type RedisConnection } from './redis-connection.js';
import {
  TASK_ID,
  senderAtCap,
  storeFull,
  taskView,
  type StoredTask,
  type TaskOutcome,
  type TaskState,
} from './tasks.js';

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

// Redis's own clock, in ms: the replicas' clocks may differ, and a lease is compared across them.
const NOW = `local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)`;

/**
 * Starts a task, once, for this replica: only a `pending` task whose lease is free, lapsed or ours (a held
 * task approved at two replicas at once runs at one). KEYS: task, leases, owners, held.
 * ARGV: json (running), id, replica, lease ms. Returns 1 when this replica runs it.
 */
const START = `
${NOW}
local current = redis.call('GET', KEYS[1])
if not current or cjson.decode(current).status ~= 'pending' then return 0 end
local owner = redis.call('HGET', KEYS[3], ARGV[2])
local score = redis.call('ZSCORE', KEYS[2], ARGV[2])
if owner and owner ~= ARGV[3] and score and tonumber(score) > now then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[2])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
redis.call('SREM', KEYS[4], ARGV[2])
return 1
`;

/**
 * Finishes a task once: the first replica to finish it wins, and only the winner takes the lease for the
 * callback it owes (a late replica never touches the lease of one that is delivering). KEYS: task, all,
 * sender, held, leases, owners. ARGV: json, ttl ms, id, expiry score, owes a callback ('1'), replica, lease
 * ms. Returns 1 when finished.
 */
const FINISH = `
${NOW}
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
if ARGV[5] == '1' then
  redis.call('ZADD', KEYS[5], now + tonumber(ARGV[7]), ARGV[3])
  redis.call('HSET', KEYS[6], ARGV[3], ARGV[6])
else
  redis.call('ZREM', KEYS[5], ARGV[3])
  redis.call('HDEL', KEYS[6], ARGV[3])
end
return 1
`;

/** Lets a lease go, if it is still ours. KEYS: leases, owners. ARGV: id, replica. */
const RELEASE = `
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
`;

/** Lapsed leases, oldest first. KEYS: leases. ARGV: how many. */
const LAPSED = `
${NOW}
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, ARGV[1])
`;

/**
 * Takes over a task whose lease ran out. KEYS: leases, owners. ARGV: id, replica, lease ms.
 * Returns 1 when this replica now holds it.
 */
const CLAIM = `
${NOW}
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) > now then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
`;

/** Extends the leases this replica still holds. KEYS: leases, owners. ARGV: lease ms, replica, ids... */
const RENEW = `
${NOW}
for i = 3, #ARGV do
  if redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[2] then
    redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i])
  end
end
return 1
`;

type Script = (...keysThenArgs: (string | number)[]) => Promise<number>;
interface ScriptedRedis extends Redis {
  agentBridgeSaveActive: Script;
  agentBridgeStart: Script;
  agentBridgeFinish: Script;
  agentBridgeRelease: Script;
  agentBridgeLapsed: (...keysThenArgs: (string | number)[]) => Promise<string[]>;
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
  private closed = false;
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
    client.defineCommand('agentBridgeStart', { numberOfKeys: 4, lua: START });
    client.defineCommand('agentBridgeFinish', { numberOfKeys: 6, lua: FINISH });
    client.defineCommand('agentBridgeRelease', { numberOfKeys: 2, lua: RELEASE });
    client.defineCommand('agentBridgeLapsed', { numberOfKeys: 1, lua: LAPSED });
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
      throw senderAtCap(sender, this.maxPerSender, retentionMs, 60);
    }
    if (all >= this.maxTotal) {
      throw storeFull();
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
      // A held task waits for the operator, not for a replica: no lease until it runs. Any other is this
      // replica's from now: if it stops before the task starts, the others fail it once the lease lapses.
      if (task.held) write.sadd(HELD, taskId);
      else write.zadd(LEASES, this.now() + this.leaseMs, taskId).hset(OWNERS, taskId, this.replica);
      return write.exec();
    });
    if (!task.held) this.held.add(taskId);
    return task;
  }

  async get(taskId: string): Promise<StoredTask | undefined> {
    if (!TASK_ID.test(taskId)) return undefined;
    const json = await this.run((c) => c.get(taskKey(taskId)));
    return json ? (JSON.parse(json) as StoredTask) : undefined;
  }

  view(task: StoredTask): TaskRecord {
    return taskView(task, () => task.result);
  }

  async start(task: StoredTask): Promise<boolean> {
    const running: StoredTask = { ...task, status: 'running' };
    delete running.held;
    const started = await this.run((c) =>
      c.agentBridgeStart(
        taskKey(task.taskId),
        LEASES,
        OWNERS,
        HELD,
        JSON.stringify(running),
        task.taskId,
        this.replica,
        this.leaseMs,
      ),
    );
    if (started !== 1) return false;
    task.status = 'running';
    delete task.held;
    this.held.add(task.taskId);
    return true;
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

  /**
   * Records the outcome, waiting for Redis if it does not answer (the lease is renewed meanwhile, so the
   * others do not fail a task that ended well). False when the task had finished already (another replica
   * failed it after this one's lease lapsed): the callback is then theirs.
   */
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
    const json = JSON.stringify(task);
    const finished = await this.persist(() =>
      this.client.agentBridgeFinish(
        taskKey(task.taskId),
        ALL,
        senderKey(task.sender),
        HELD,
        LEASES,
        OWNERS,
        json,
        retention,
        task.taskId,
        task.finishedAt! + retention,
        owesCallback ? '1' : '0',
        this.replica,
        this.leaseMs,
      ),
    );
    if (finished === 1 && owesCallback) this.held.add(task.taskId);
    else this.held.delete(task.taskId);
    return finished === 1;
  }

  result(task: StoredTask): unknown {
    return task.status === 'done' ? task.result : undefined;
  }

  /** Written once Redis answers: a delivery left unrecorded would be made again by another replica. */
  async setCallback(
    task: StoredTask,
    state: 'pending' | 'delivered' | 'failed',
    attempts: number,
  ): Promise<void> {
    task.callback = { state, attempts };
    const json = JSON.stringify(task);
    await this.persist(() => this.client.set(taskKey(task.taskId), json, 'KEEPTTL'));
    if (state === 'pending') return;
    await this.persist(() => this.client.agentBridgeRelease(LEASES, OWNERS, task.taskId, this.replica));
    this.held.delete(task.taskId);
  }

  async recover(): Promise<StoredTask[]> {
    const lapsed = await this.run((c) => c.agentBridgeLapsed(LEASES, 100));
    const owed: StoredTask[] = [];
    for (const id of lapsed) {
      const claimed = await this.run((c) =>
        c.agentBridgeClaim(LEASES, OWNERS, id, this.replica, this.leaseMs),
      );
      if (claimed !== 1) continue;
      this.held.add(id);
      const task = await this.get(id);
      if (!task) {
        await this.release(id);
        continue;
      }
      if (task.status === 'pending' || task.status === 'running') {
        // Claimed, so ours to fail: a plain write (FINISH would refuse nothing here) that keeps the lease
        // when the callback is owed.
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
    this.closed = true;
    clearInterval(this.renewTimer);
    this.held.clear();
  }

  private async release(id: string): Promise<void> {
    this.held.delete(id);
    await this.run((c) => c.agentBridgeRelease(LEASES, OWNERS, id, this.replica));
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0) return;
    await this.client
      .agentBridgeRenew(LEASES, OWNERS, this.leaseMs, this.replica, ...this.held)
      .catch(() => undefined); // Redis down: the next renewal tries again; the lease outlives a short gap.
  }

  /** Retries a write that must not be lost until Redis answers (or the store closes: then it throws). */
  private async persist<T>(write: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        this.redis.assertUp();
        return await write();
      } catch (error) {
        if (this.closed) throw error instanceof ProtocolError ? error : unavailable();
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
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
