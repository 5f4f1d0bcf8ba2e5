import { randomUUID } from 'node:crypto';
import type { ChainableCommander, Redis } from 'ioredis';
import { ProtocolError, type Envelope, type TaskRecord } from '../protocol/index.js';
import { KEY_PREFIX, unavailable, type RedisConnection } from './redis-connection.js';
import {
  TASK_ID,
  applyOutcome,
  isFinished,
  NONE_UNWRITTEN,
  pageA2A,
  protocolOf,
  senderAtCap,
  storeFull,
  taskView,
  type A2AIndexEntry,
  type A2AListQuery,
  type A2APart,
  type PushConfigEntry,
  type StoredTask,
  type TaskMeta,
  type TaskOutcome,
  type TaskProtocol,
  type TaskState,
  type Unwritten,
} from './tasks.js';

const ALL = `${KEY_PREFIX}tasks:all`;
const HELD = `${KEY_PREFIX}tasks:held`;
/** Tasks some replica answers for (running, or a callback owed), scored by when its lease runs out. */
const LEASES = `${KEY_PREFIX}tasks:leases`;
const OWNERS = `${KEY_PREFIX}tasks:owners`;
/** How many of an owner's oldest finished tasks a look at the cap reads at a time. */
const DROP_PAGE = 32;
/** Score of a task that has not finished: it counts against the caps until it does. */
const UNFINISHED = 1e15;

const taskKey = (id: string) => `${KEY_PREFIX}task:${id}`;
const senderKey = (sender: string) => `${KEY_PREFIX}tasks:sender:${sender}`;
/**
 * An A2A task's push configs, beside its value (a field per config): any replica adds or deletes one while
 * another writes the running task, so neither overwrites the other. It expires with the task.
 */
const pushKey = (id: string) => `${KEY_PREFIX}task:${id}:push`;
/** An A2A caller's tasks: a field per task holding what its lists filter and sort by (A2AIndexEntry). */
const ownerIndexKey = (owner: string) => `${KEY_PREFIX}tasks:a2a:${owner}`;
/** How long an owner's index outlives its last new task (its finished entries expire sooner). */
const INDEX_SLACK_MS = 24 * 3600_000;

/**
 * Writes the task only while it has not finished (a late progress report, or a replica that lost its lease,
 * never overwrites a result), and with it, for an A2A task, its owner's index entry. KEYS: task [, index].
 * ARGV: json, ttl ms (0: none) [, id, index entry]. Returns 1 when written.
 */
const SAVE_ACTIVE = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local status = cjson.decode(current).status
if status == 'done' or status == 'failed' then return 0 end
if tonumber(ARGV[2]) > 0 then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else redis.call('SET', KEYS[1], ARGV[1]) end
if KEYS[2] then redis.call('HSET', KEYS[2], ARGV[3], ARGV[4]) end
return 1
`;

/**
 * Adds or replaces a push config of a task that exists, up to `max` per task; it expires with the task.
 * KEYS: task, push. ARGV: config id, json, max. Returns 1 when saved, 0 when full, -1 without the task.
 */
const SAVE_PUSH = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 and redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
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
 * sender, held, leases, owners [, A2A owner index]. ARGV: json, ttl ms, id, expiry score, owes a callback
 * ('1'), replica, lease ms [, index entry]. Returns 1 when finished.
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
if KEYS[7] then redis.call('HSET', KEYS[7], ARGV[3], ARGV[8]) end
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
type ScriptedMulti = ChainableCommander & {
  agentBridgeFinishA2A(...keysThenArgs: (string | number)[]): ChainableCommander;
};
interface ScriptedRedis extends Redis {
  agentBridgeSaveActive: Script;
  agentBridgeSaveActiveA2A: Script;
  agentBridgeSavePush: Script;
  agentBridgeStart: Script;
  agentBridgeFinish: Script;
  agentBridgeFinishA2A: Script;
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
 * Async tasks (SAMVAD's and A2A's) on Redis, shared by every replica: one JSON value per task (result, held
 * envelope or A2A document in it), a sorted set per sender and one in all for the caps, leases, and for A2A
 * an index per owner and the push configs beside each task. A replica that runs a task (or owes its
 * callback or final push notification) renews its lease every third of it; when one stops, another claims
 * the lapsed lease, fails the task and delivers what is owed, once: finishing is atomic and only the first
 * finish counts. Each A2A write carries its index entry in the same script, so a list never disagrees with
 * the task.
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
    client.defineCommand('agentBridgeSaveActiveA2A', { numberOfKeys: 2, lua: SAVE_ACTIVE });
    client.defineCommand('agentBridgeSavePush', { numberOfKeys: 2, lua: SAVE_PUSH });
    client.defineCommand('agentBridgeStart', { numberOfKeys: 4, lua: START });
    client.defineCommand('agentBridgeFinish', { numberOfKeys: 6, lua: FINISH });
    client.defineCommand('agentBridgeFinishA2A', { numberOfKeys: 7, lua: FINISH });
    client.defineCommand('agentBridgeRelease', { numberOfKeys: 2, lua: RELEASE });
    client.defineCommand('agentBridgeLapsed', { numberOfKeys: 1, lua: LAPSED });
    client.defineCommand('agentBridgeClaim', { numberOfKeys: 2, lua: CLAIM });
    client.defineCommand('agentBridgeRenew', { numberOfKeys: 2, lua: RENEW });
    this.client = client as ScriptedRedis;
    this.renewTimer = setInterval(() => void this.renew(), Math.max(100, this.leaseMs / 3));
    this.renewTimer.unref();
  }

  async admit(sender: string, retentionMs: number, unwritten: Unwritten = NONE_UNWRITTEN): Promise<void> {
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
    const mine = Number(replies?.[2]?.[1] ?? 0) + unwritten.mine;
    const all = Number(replies?.[3]?.[1] ?? 0) + unwritten.all;
    if (mine >= this.maxPerSender) {
      throw senderAtCap(sender, this.maxPerSender, retentionMs, 60);
    }
    if (all >= this.maxTotal) {
      throw storeFull();
    }
  }

  async admitA2A(owner: string, retentionMs: number, unwritten = NONE_UNWRITTEN): Promise<void> {
    try {
      return await this.admit(owner, retentionMs, unwritten);
    } catch (error) {
      if (!(error instanceof ProtocolError && error.httpStatus === 429)) throw error;
      const held = await this.run((c) => c.zcard(senderKey(owner)));
      const need = held + unwritten.mine + 1 - this.maxPerSender;
      // Room is made only when it can be: a refusal never costs the caller its results. Entries whose
      // task was gone, cleared on the way, made room too.
      const { droppable, cleared } = await this.oldestDroppable(owner, need);
      if (droppable.length + cleared < need) throw error;
      await this.forgetA2A(owner, droppable.slice(0, Math.max(0, need - cleared)));
    }
    // Another replica may have taken the room meanwhile: this check is the one that counts.
    return this.admit(owner, retentionMs, unwritten);
  }

  /**
   * Up to `count` of the owner's finished A2A tasks, oldest first, that may be dropped for room: not a
   * SAMVAD one (it is in no A2A index), nor one still owing its final push notification (leased to the
   * replica delivering it, which would write it back). Entries whose task is gone are cleared on the way,
   * and count towards `count` as room made (`cleared`: how many).
   */
  private async oldestDroppable(
    owner: string,
    count: number,
  ): Promise<{ droppable: string[]; cleared: number }> {
    const found: string[] = [];
    const stale: string[] = [];
    const enough = () => found.length + stale.length >= count;
    // Page by page (the set is not changed until the end, so offsets hold): tasks owing a notification
    // may stand in front of droppable ones for minutes. The set holds about maxPerSender entries.
    for (let offset = 0; count > 0 && !enough(); offset += DROP_PAGE) {
      // Finished tasks are scored by when they expire: the lowest scores below UNFINISHED finished first.
      const page = await this.run((c) =>
        c.zrangebyscore(senderKey(owner), '-inf', `(${UNFINISHED}`, 'LIMIT', offset, DROP_PAGE),
      );
      if (page.length === 0) break;
      const replies = await this.run((c) => {
        const look = c.multi();
        for (const id of page) look.exists(taskKey(id)).hexists(ownerIndexKey(owner), id).zscore(LEASES, id);
        return look.exec();
      });
      if (!replies) break;
      for (const [i, id] of page.entries()) {
        const [stored, a2a, leased] = [3 * i, 3 * i + 1, 3 * i + 2].map((at) => replies[at]?.[1]);
        if (stored === 0) stale.push(id);
        else if (stored === 1 && a2a === 1 && leased === null) found.push(id);
        if (enough()) break;
      }
      if (page.length < DROP_PAGE) break;
    }
    await this.forgetA2A(owner, stale);
    return { droppable: found, cleared: stale.length };
  }

  private async forgetA2A(owner: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.run((c) => {
      const write = c.multi();
      for (const id of ids) {
        write
          .del(taskKey(id), pushKey(id))
          .zrem(senderKey(owner), id)
          .zrem(ALL, id)
          .hdel(ownerIndexKey(owner), id);
      }
      return write.exec();
    });
  }

  async create(meta: TaskMeta, taskId: string = randomUUID(), outcome?: TaskOutcome): Promise<StoredTask> {
    if (!TASK_ID.test(taskId)) throw new Error('A task id must be a random UUIDv4.');
    const { push = [], ...part } = meta.a2a ?? {};
    const status = protocolOf(meta) === 'a2a' ? 'running' : 'pending';
    const task: StoredTask = { taskId, status, createdAt: this.now(), ...meta };
    if (meta.a2a) task.a2a = structuredClone(part as A2APart);
    if (meta.callbackUrl) task.callback = { state: 'pending', attempts: 0 };
    // A task that ended before it was first written (a blocking A2A send) is written finished, at once.
    if (outcome) applyOutcome(task, outcome, this.now(), push.length > 0);
    const retention = outcome ? Math.max(1000, this.options.retentionMs()) : undefined;
    const score = retention === undefined ? UNFINISHED : task.finishedAt! + retention;
    // A running task is this replica's; a finished one only while it owes its final notification.
    const leased = !task.held && (!outcome || task.callback?.state === 'pending');
    await this.run((c) => {
      const write = c.multi();
      if (retention === undefined) write.set(taskKey(taskId), JSON.stringify(task), 'NX');
      else write.set(taskKey(taskId), JSON.stringify(task), 'PX', retention, 'NX');
      write.zadd(ALL, score, taskId).zadd(senderKey(task.sender), score, taskId);
      if (retention !== undefined) write.pexpire(senderKey(task.sender), retention);
      if (task.a2a) {
        const index = ownerIndexKey(task.sender);
        write
          .hset(index, taskId, indexEntry(task, retention))
          .pexpire(index, this.options.retentionMs() + INDEX_SLACK_MS);
        for (const entry of push) write.hset(pushKey(taskId), entry.id, JSON.stringify(entry));
        if (retention !== undefined && push.length > 0) write.pexpire(pushKey(taskId), retention);
      }
      // A held task waits for the operator, not for a replica: no lease until it runs. Any other is this
      // replica's from now: if it stops before the task starts, the others fail it once the lease lapses.
      if (task.held) write.sadd(HELD, taskId);
      else if (leased)
        write.zadd(LEASES, this.now() + this.leaseMs, taskId).hset(OWNERS, taskId, this.replica);
      return write.exec();
    });
    if (leased) this.held.add(taskId);
    return task;
  }

  async get(taskId: string): Promise<StoredTask | undefined> {
    const task = await this.load(taskId);
    return task && protocolOf(task) === 'samvad' ? task : undefined;
  }

  async getA2A(taskId: string): Promise<StoredTask | undefined> {
    const task = await this.load(taskId);
    return task && protocolOf(task) === 'a2a' ? task : undefined;
  }

  /** Written through (another replica may answer a poll or a list); dropped once the task finished. */
  async saveA2A(task: StoredTask, part: A2APart): Promise<boolean> {
    if (isFinished(task)) return false;
    task.a2a = part;
    const written = await this.run((c) =>
      c.agentBridgeSaveActiveA2A(
        taskKey(task.taskId),
        ownerIndexKey(task.sender),
        JSON.stringify(task),
        0,
        task.taskId,
        indexEntry(task),
      ),
    );
    return written === 1;
  }

  async listA2A(owner: string, query: A2AListQuery): Promise<{ tasks: StoredTask[]; total: number }> {
    const index = ownerIndexKey(owner);
    const fields = await this.run((c) => c.hgetall(index));
    const now = this.now();
    const entries: A2AIndexEntry[] = [];
    const gone: string[] = [];
    for (const [id, json] of Object.entries(fields)) {
      const entry = parseIndexEntry(id, json);
      if (entry && (entry.expiresAt === undefined || entry.expiresAt > now)) entries.push(entry);
      else gone.push(id);
    }
    const { page, total } = pageA2A(entries, query);
    const values = page.length > 0 ? await this.run((c) => c.mget(page.map((e) => taskKey(e.id)))) : [];
    const tasks: StoredTask[] = [];
    values.forEach((json, i) => {
      const task = json ? (JSON.parse(json) as StoredTask) : undefined;
      if (task && protocolOf(task) === 'a2a' && task.sender === owner) tasks.push(task);
      else gone.push(page[i]!.id);
    });
    // Tasks Redis expired (or never finished writing): their entries go too.
    if (gone.length > 0) await this.run((c) => c.hdel(index, ...gone));
    return { tasks, total };
  }

  /**
   * From the owner's index, whose finished entries carry their expiry. Expired entries go on the way: a
   * keyless owner never lists (the one read that cleared them), and its index is read here at every
   * continuation.
   */
  async hasMintedContext(owner: string, contextId: string): Promise<boolean> {
    const index = ownerIndexKey(owner);
    const fields = await this.run((c) => c.hgetall(index));
    const now = this.now();
    let found = false;
    const gone: string[] = [];
    for (const [id, json] of Object.entries(fields)) {
      const entry = parseIndexEntry(id, json);
      if (!entry || (entry.expiresAt !== undefined && entry.expiresAt <= now)) gone.push(id);
      else if (entry.mintedContext === true && entry.contextId === contextId) found = true;
    }
    if (gone.length > 0) await this.run((c) => c.hdel(index, ...gone));
    return found;
  }

  async pushConfigs(taskId: string): Promise<PushConfigEntry[]> {
    if (!TASK_ID.test(taskId)) return [];
    const fields = await this.run((c) => c.hvals(pushKey(taskId)));
    return fields.map((json) => JSON.parse(json) as PushConfigEntry);
  }

  async savePushConfig(
    taskId: string,
    entry: PushConfigEntry,
    max: number,
  ): Promise<'saved' | 'full' | 'missing'> {
    if (!TASK_ID.test(taskId)) return 'missing';
    const saved = await this.run((c) =>
      c.agentBridgeSavePush(taskKey(taskId), pushKey(taskId), entry.id, JSON.stringify(entry), max),
    );
    return saved === 1 ? 'saved' : saved === 0 ? 'full' : 'missing';
  }

  async deletePushConfig(taskId: string, configId: string): Promise<void> {
    if (TASK_ID.test(taskId)) await this.run((c) => c.hdel(pushKey(taskId), configId));
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
    const a2a = protocolOf(task) === 'a2a';
    const owesPush = a2a && (await this.persist(() => this.client.hlen(pushKey(task.taskId)))) > 0;
    applyOutcome(task, outcome, this.now(), owesPush);
    const retention = Math.max(1000, this.options.retentionMs());
    const owesCallback = task.callback?.state === 'pending';
    const json = JSON.stringify(task);
    const keys = [taskKey(task.taskId), ALL, senderKey(task.sender), HELD, LEASES, OWNERS];
    const args = [
      json,
      retention,
      task.taskId,
      task.finishedAt! + retention,
      owesCallback ? '1' : '0',
      this.replica,
      this.leaseMs,
    ];
    const finished = await this.persist(async () => {
      if (!a2a) return this.client.agentBridgeFinish(...keys, ...args);
      // The push configs expire with the task.
      const [finish] = (await (this.client.multi() as ScriptedMulti)
        .agentBridgeFinishA2A(...keys, ownerIndexKey(task.sender), ...args, indexEntry(task, retention))
        .pexpire(pushKey(task.taskId), retention)
        .exec()) as [Error | null, number][];
      if (finish?.[0]) throw finish[0];
      return finish?.[1];
    });
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
    // Only while it is kept (XX): a task that expired meanwhile is not written back, to live forever.
    await this.persist(() => this.client.set(taskKey(task.taskId), json, 'KEEPTTL', 'XX'));
    if (state === 'pending') return;
    await this.persist(() => this.client.agentBridgeRelease(LEASES, OWNERS, task.taskId, this.replica));
    this.held.delete(task.taskId);
  }

  async recover(protocol: TaskProtocol = 'samvad'): Promise<StoredTask[]> {
    const lapsed = await this.run((c) => c.agentBridgeLapsed(LEASES, 100));
    const owed: StoredTask[] = [];
    for (const id of lapsed) {
      // The other protocol's recovery takes it: what is owed is its to deliver.
      const found = await this.load(id);
      if (found && protocolOf(found) !== protocol) continue;
      const claimed = await this.run((c) =>
        c.agentBridgeClaim(LEASES, OWNERS, id, this.replica, this.leaseMs),
      );
      if (claimed !== 1) continue;
      this.held.add(id);
      const task = await this.load(id);
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

  /** Any task, whichever its protocol. */
  private async load(taskId: string): Promise<StoredTask | undefined> {
    if (!TASK_ID.test(taskId)) return undefined;
    const json = await this.run((c) => c.get(taskKey(taskId)));
    return json ? (JSON.parse(json) as StoredTask) : undefined;
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

/**
 * What an A2A list filters and sorts by, whether its conversation was minted here (hasMintedContext), and
 * (once finished) when Redis forgets the task.
 */
function indexEntry(task: StoredTask, retentionMs?: number): string {
  const { contextId, state, updatedAt, mintedContext } = task.a2a!;
  const expiresAt =
    retentionMs !== undefined && task.finishedAt !== undefined ? task.finishedAt + retentionMs : undefined;
  return JSON.stringify({ contextId, state, updatedAt, mintedContext, expiresAt });
}

function parseIndexEntry(id: string, json: string): (A2AIndexEntry & { expiresAt?: number }) | undefined {
  try {
    const entry = JSON.parse(json) as Omit<A2AIndexEntry, 'id'> & { expiresAt?: number };
    return typeof entry.updatedAt === 'string' ? { ...entry, id } : undefined;
  } catch {
    return undefined;
  }
}
