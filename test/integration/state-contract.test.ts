import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { A2AKeys } from '../../src/access/a2a-keys.js';
import { ProtocolError } from '../../src/protocol/index.js';
import { A2AKeyFile, type A2AKeyRecords, type StoredA2AKey } from '../../src/state/a2a-key-store.js';
import { LocalCallLimits, type CallLimits, type CallVerdict } from '../../src/state/call-limits.js';
import { RedisA2AKeyRecords } from '../../src/state/redis-a2a-key-store.js';
import { RedisCallLimits } from '../../src/state/redis-call-limits.js';
import { RedisConnection, maskedRedisUrl } from '../../src/state/redis-connection.js';
import { RedisTaskStore } from '../../src/state/redis-task-store.js';
import { A2ARecords, type A2ATaskRecord } from '../../src/state/a2a-records.js';
import { TaskStore } from '../../src/state/task-store.js';
import type { A2APart, TaskState } from '../../src/state/tasks.js';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server.js';
import { tempDir } from '../helpers/agents.js';
import { dropOldestAtCap } from '../helpers/answered-tasks.js';
import { until } from '../helpers/polling.js';
import { monitorRedis } from '../helpers/redis-monitor.js';

// One contract, two homes: every state store behaves the same in the data dir (one process) and on a real
// redis-server (every replica); the Redis-only part is what replicas add: sharing, leases, outages.
let redis: RedisServer;
let admin: Redis;
const cleanups: (() => unknown)[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
  admin = new Redis(redis.url);
  admin.on('error', () => undefined); // the tests stop Redis on purpose
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  admin.disconnect();
  await redis.close();
});

const redisTtl = (key: string) => admin.pttl(key);

async function connection(
  options: { wipeHoldMs?: number; memoryFile?: string } = {},
): Promise<RedisConnection> {
  const made = new RedisConnection({ url: redis.url, ...options });
  await made.connect();
  cleanups.push(() => made.disconnect());
  return made;
}

function dataDir(): string {
  const dir = tempDir();
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

interface Home {
  limits(perMinute: number, perSender: number): Promise<CallLimits>;
  tasks(options?: { maxPerSender?: number; maxTotal?: number }): Promise<TaskState>;
  /** Each call: another reader and writer of the same keys (a replica, or another process on the data dir). */
  a2aKeys(): Promise<A2AKeyRecords>;
}

const homes: [string, () => Promise<Home>][] = [
  [
    'the data dir',
    async () => {
      const dir = dataDir();
      return {
        limits: async (perMinute, perSender) => {
          const limits = new LocalCallLimits(dir, { perMinute, perSender });
          cleanups.push(() => limits.close());
          return limits;
        },
        tasks: async (options) => new TaskStore(dir, options),
        a2aKeys: async () => new A2AKeyFile(dir),
      };
    },
  ],
  [
    'Redis',
    async () => {
      await admin.flushdb();
      const shared = await connection();
      return {
        limits: async (perMinute, perSender) => new RedisCallLimits(shared, { perMinute, perSender }),
        tasks: async (options) => {
          const tasks = new RedisTaskStore(shared, { ...options, retentionMs: () => 3600_000 });
          cleanups.push(() => tasks.close());
          return tasks;
        },
        a2aKeys: async () => new RedisA2AKeyRecords(await connection()),
      };
    },
  ],
];

const call = (sender: string, nonce?: string, tokensPerDay = 0) => ({
  sender,
  nonce,
  nonceExpiresAt: Date.now() + 60_000,
  tokensPerDay,
});
let counter = 0;
const fresh = () => `nonce-${counter++}`;

describe.each(homes)('call limits in %s', (_name, make) => {
  it('records each nonce once per sender', async () => {
    const limits = await (await make()).limits(100, 100);
    expect(await limits.check(call('agent://a.example', 'n1'))).toEqual({ ok: true });
    expect(await limits.check(call('agent://a.example', 'n1'))).toEqual({
      ok: false,
      refusal: 'replay',
      waitSeconds: 0,
    });
    expect(await limits.check(call('agent://b.example', 'n1'))).toEqual({ ok: true });
  });

  it("counts a sender's calls and everyone's, and a refused call costs no allowance", async () => {
    const limits = await (await make()).limits(5, 3);
    for (let i = 0; i < 3; i++)
      expect(await limits.check(call('agent://a.example', fresh()))).toEqual({ ok: true });
    const overSender = (await limits.check(call('agent://a.example', fresh()))) as CallVerdict & {
      ok: false;
    };
    expect(overSender).toMatchObject({ ok: false, refusal: 'sender' });
    expect(overSender.waitSeconds).toBeGreaterThanOrEqual(1);
    expect(overSender.waitSeconds).toBeLessThanOrEqual(20);
    // a's refused fourth call did not count against the agent's 5: b still gets two.
    expect(await limits.check(call('agent://b.example', fresh()))).toEqual({ ok: true });
    expect(await limits.check(call('agent://b.example', fresh()))).toEqual({ ok: true });
    expect(await limits.check(call('agent://c.example', fresh()))).toMatchObject({
      ok: false,
      refusal: 'global',
    });
  });

  it('refuses a sender past its daily token budget until UTC midnight', async () => {
    const limits = await (await make()).limits(100, 100);
    expect(await limits.check(call('agent://a.example', fresh(), 100))).toEqual({ ok: true });
    limits.addTokens('agent://a.example', 60);
    limits.addTokens('agent://a.example', 40);
    const midnight = new Date();
    midnight.setUTCHours(24, 0, 0, 0);
    const untilMidnight = Math.ceil((midnight.getTime() - Date.now()) / 1000);
    await until(
      async () => !(await limits.check(call('agent://a.example', fresh(), 100))).ok,
      2000,
      'budget',
    );
    const refused = (await limits.check(call('agent://a.example', fresh(), 100))) as CallVerdict & {
      ok: false;
    };
    expect(refused.refusal).toBe('budget');
    expect(Math.abs(refused.waitSeconds - untilMidnight)).toBeLessThanOrEqual(2);
    expect(await limits.check(call('agent://b.example', fresh(), 100))).toEqual({ ok: true });
  });

  it("refuses a replay before it costs the real sender's allowance", async () => {
    const limits = await (await make()).limits(100, 2);
    expect(await limits.check(call('agent://a.example', 'captured'))).toEqual({ ok: true });
    for (let i = 0; i < 3; i++)
      expect(await limits.check(call('agent://a.example', 'captured'))).toMatchObject({ refusal: 'replay' });
    expect(await limits.check(call('agent://a.example', fresh()))).toEqual({ ok: true });
  });

  it("charges strangers (senders not yet approved) to a bucket of their own, a tenth of the agent's", async () => {
    const limits = await (await make()).limits(20, 100);
    const stranger = (sender: string, nonce = fresh()) => ({ ...call(sender, nonce), stranger: true });
    expect(await limits.check(stranger('agent://s1.example', 'n-s1'))).toEqual({ ok: true });
    expect(await limits.check(stranger('agent://s2.example'))).toEqual({ ok: true });
    const full = (await limits.check(stranger('agent://s3.example'))) as CallVerdict & { ok: false };
    expect(full).toMatchObject({ ok: false, refusal: 'strangers' });
    // Two a minute: the next in at most 30 s.
    expect(full.waitSeconds).toBeGreaterThanOrEqual(1);
    expect(full.waitSeconds).toBeLessThanOrEqual(30);
    // A stranger's nonce is recorded as anyone's.
    expect(await limits.check(stranger('agent://s1.example', 'n-s1'))).toMatchObject({ refusal: 'replay' });
    // None of it came from the agent-wide bucket: approved senders still have all 20.
    for (let i = 0; i < 20; i++)
      expect(await limits.check(call(`agent://a${i}.example`, fresh()))).toEqual({ ok: true });
    expect(await limits.check(call('agent://a20.example', fresh()))).toMatchObject({ refusal: 'global' });
  });

  it('holds the tokens a call reserves against the budget until it is released (review of issue 15)', async () => {
    const limits = await (await make()).limits(100, 100);
    const reserving = (nonce: string) => ({ ...call('agent://a.example', nonce, 1000), reserve: 600 });
    const at = Date.now();
    // Two calls in flight: the second one still fits (the budget holds within one call's overshoot)...
    expect(await limits.check(reserving(fresh()))).toEqual({ ok: true });
    expect(await limits.check(reserving(fresh()))).toEqual({ ok: true });
    // ...a third does not, though nothing is charged yet: it may try again soon, when they may have ended.
    expect(await limits.check(reserving(fresh()))).toEqual({
      ok: false,
      refusal: 'budget-held',
      waitSeconds: 5,
    });
    // They end: one cost 300, the other nothing (refused by the gateway); the reservations are given back.
    limits.addTokens('agent://a.example', 300);
    limits.release('agent://a.example', 600, at);
    limits.release('agent://a.example', 600, at);
    await until(async () => (await limits.check(reserving(fresh()))).ok, 2000, 'the reservations released');
    // 300 spent and 600 held now. A release of a reservation made on a day that has ended takes nothing
    // from today's: one more call fits, then none.
    limits.release('agent://a.example', 600, at - 86_400_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await limits.check(reserving(fresh()))).toEqual({ ok: true });
    expect(await limits.check(reserving(fresh()))).toMatchObject({ ok: false, refusal: 'budget-held' });
  });

  it('keeps the smallest prompt the gateway reported as the prompt floor', async () => {
    const limits = await (await make()).limits(100, 100);
    expect(limits.promptFloor()).toBe(0);
    limits.notePrompt(0);
    limits.notePrompt(3000);
    limits.notePrompt(5000);
    expect(limits.promptFloor()).toBe(3000);
    limits.notePrompt(2500);
    expect(limits.promptFloor()).toBe(2500);
  });

  it("counts a sender's accounts (one per skill) apart, its nonces as one, and the agent's rate over all", async () => {
    const limits = await (await make()).limits(5, 2);
    const on = (account: string | undefined, nonce = fresh(), tokensPerDay = 0) => ({
      ...call('agent://a.example', nonce, tokensPerDay),
      ...(account ? { account } : {}),
    });
    // Two a minute on each account: the sender's own (the default skill) and its research account.
    expect(await limits.check(on(undefined))).toEqual({ ok: true });
    expect(await limits.check(on(undefined))).toEqual({ ok: true });
    expect(await limits.check(on(undefined))).toMatchObject({ refusal: 'sender' });
    expect(await limits.check(on('skill:research:agent://a.example', 'shared-nonce'))).toEqual({ ok: true });
    // A nonce the sender used on one skill is a replay on any other.
    expect(await limits.check(on(undefined, 'shared-nonce'))).toMatchObject({ refusal: 'replay' });
    expect(await limits.check(on('skill:research:agent://a.example'))).toEqual({ ok: true });
    expect(await limits.check(on('skill:research:agent://a.example'))).toMatchObject({ refusal: 'sender' });
    // The agent-wide rate counted all four: one more from anyone, then none.
    expect(await limits.check(call('agent://b.example', fresh()))).toEqual({ ok: true });
    expect(await limits.check(call('agent://c.example', fresh()))).toMatchObject({ refusal: 'global' });
  });

  it('keeps a budget per account: tokens spent on one skill leave the others whole', async () => {
    const limits = await (await make()).limits(100, 100);
    const research = 'skill:research:agent://a.example';
    const on = (account?: string) => ({
      ...call('agent://a.example', fresh(), 100),
      ...(account ? { account } : {}),
    });
    expect(await limits.check(on(research))).toEqual({ ok: true });
    limits.addTokens(research, 100);
    await until(async () => !(await limits.check(on(research))).ok, 2000, 'the research budget spent');
    expect(await limits.check(on(research))).toMatchObject({ refusal: 'budget' });
    expect(await limits.check(on())).toEqual({ ok: true });
    expect(await limits.check(on('skill:summary:agent://a.example'))).toEqual({ ok: true });
  });

  it('checks unsigned calls (no nonce) against the limits only', async () => {
    const limits = await (await make()).limits(100, 2);
    expect(await limits.check(call('unsigned:127.0.0.1'))).toEqual({ ok: true });
    expect(await limits.check(call('unsigned:127.0.0.1'))).toEqual({ ok: true });
    expect(await limits.check(call('unsigned:127.0.0.1'))).toMatchObject({ refusal: 'sender' });
  });
});

const meta = (sender: string, extra: object = {}) => ({
  sender,
  skill: 'chat',
  traceId: 'trace-1',
  spanId: 'span-1',
  ...extra,
});

describe.each(homes)('tasks in %s', (_name, make) => {
  it('keeps a task from pending to done, with the published fields only', async () => {
    const tasks = await (await make()).tasks();
    const task = await tasks.create(meta('agent://a.example'));
    const polled = await tasks.get(task.taskId);
    expect(await tasks.view(polled!)).toEqual({ taskId: task.taskId, status: 'pending' });
    expect(await tasks.start(task)).toBe(true);
    tasks.setProgress(task, 0.5);
    await until(
      async () => (await tasks.view((await tasks.get(task.taskId))!)).progress === 0.5,
      2000,
      'progress',
    );
    expect(await tasks.finish(task, { result: { reply: 'hi' } })).toBe(true);
    const done = await tasks.get(task.taskId);
    expect(await tasks.view(done!)).toEqual({ taskId: task.taskId, status: 'done', result: { reply: 'hi' } });
    expect(await tasks.get('not-a-task-id')).toBeUndefined();
  });

  it('lets only the first outcome stand', async () => {
    const tasks = await (await make()).tasks();
    const task = await tasks.create(meta('agent://a.example'));
    expect(await tasks.start(task)).toBe(true);
    const copy = (await tasks.get(task.taskId))!;
    expect(await tasks.finish(task, { result: 'first' })).toBe(true);
    expect(await tasks.finish(copy, { error: { code: 'AGENT_UNAVAILABLE', message: 'late' } })).toBe(false);
    expect(await tasks.view((await tasks.get(task.taskId))!)).toMatchObject({
      status: 'done',
      result: 'first',
    });
  });

  it('caps the tasks held per sender (429) and in all (503)', async () => {
    const tasks = await (await make()).tasks({ maxPerSender: 2, maxTotal: 3 });
    await tasks.admit('agent://a.example', 3600_000);
    await tasks.create(meta('agent://a.example'));
    await tasks.create(meta('agent://a.example'));
    await expect(
      Promise.resolve().then(() => tasks.admit('agent://a.example', 3600_000)),
    ).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      httpStatus: 429,
    });
    await tasks.admit('agent://b.example', 3600_000);
    await tasks.create(meta('agent://b.example'));
    await expect(
      Promise.resolve().then(() => tasks.admit('agent://c.example', 3600_000)),
    ).rejects.toMatchObject({
      code: 'AGENT_UNAVAILABLE',
      httpStatus: 503,
    });
  });

  it('lists held tasks until they run', async () => {
    const tasks = await (await make()).tasks();
    const held = await tasks.create(meta('agent://a.example', { held: { code: 'ABCD-EFGH' } }));
    await tasks.create(meta('agent://b.example'));
    expect((await tasks.heldTasks()).map((task) => task.taskId)).toEqual([held.taskId]);
    expect(await tasks.start(held)).toBe(true);
    expect(await tasks.heldTasks()).toEqual([]);
  });
});

const a2aMeta = (owner: string, part: Partial<A2APart> = {}) => ({
  sender: owner,
  skill: 'chat',
  traceId: '',
  spanId: '',
  protocol: 'a2a' as const,
  a2a: {
    contextId: 'ctx-1',
    state: 'TASK_STATE_WORKING',
    updatedAt: new Date().toISOString(),
    doc: { note: 'working' },
    ...part,
  },
});

const ended = (at: string, state = 'TASK_STATE_COMPLETED', contextId = 'ctx-1') => ({
  a2a: { contextId, state, updatedAt: at, doc: { note: state } },
  completed: state === 'TASK_STATE_COMPLETED',
});

const pushEntry = (id: string) => ({
  id,
  config: { url: `https://hooks.example.com/${id}`, token: `token-${id}` },
  wireVersion: '1.0',
});

describe.each(homes)('A2A tasks in %s', (_name, make) => {
  it('are served by their own door only: SAMVAD never reads an A2A task, nor A2A a SAMVAD one', async () => {
    const tasks = await (await make()).tasks();
    const a2a = await tasks.create(a2aMeta('a2a-key:alice'));
    const samvad = await tasks.create(meta('agent://a.example'));
    expect(await tasks.get(a2a.taskId)).toBeUndefined();
    expect(await tasks.getA2A(samvad.taskId)).toBeUndefined();
    expect(await tasks.getA2A(a2a.taskId)).toMatchObject({
      protocol: 'a2a',
      sender: 'a2a-key:alice',
      a2a: { state: 'TASK_STATE_WORKING', doc: { note: 'working' } },
    });
    expect((await tasks.get(samvad.taskId))?.taskId).toBe(samvad.taskId);
  });

  it('write a running task until it finishes, and the first terminal write stands', async () => {
    const tasks = await (await make()).tasks();
    const task = await tasks.create(a2aMeta('a2a-key:alice'));
    // Never held: it runs from the start.
    expect(task.status).toBe('running');
    expect(await tasks.start(task)).toBe(false);
    const part = { contextId: 'ctx-1', state: 'TASK_STATE_WORKING', updatedAt: new Date().toISOString() };
    expect(await tasks.saveA2A(task, { ...part, doc: { note: 'half a reply' } })).toBe(true);
    expect((await tasks.getA2A(task.taskId))?.a2a?.doc).toEqual({ note: 'half a reply' });
    const late = (await tasks.getA2A(task.taskId))!;
    expect(await tasks.finish(task, ended(new Date().toISOString(), 'TASK_STATE_CANCELED'))).toBe(true);
    expect(await tasks.finish(late, ended(new Date().toISOString()))).toBe(false);
    expect(await tasks.saveA2A(late, { ...part, doc: { note: 'too late' } })).toBe(false);
    expect(await tasks.getA2A(task.taskId)).toMatchObject({
      status: 'failed',
      a2a: { state: 'TASK_STATE_CANCELED', doc: { note: 'TASK_STATE_CANCELED' } },
    });
  });

  it('create a task that ended before it was first written in one write, owing its notification if it has configs', async () => {
    const tasks = await (await make()).tasks();
    const at = new Date().toISOString();
    const quiet = await tasks.create(a2aMeta('a2a-key:alice'), undefined, ended(at));
    expect(await tasks.getA2A(quiet.taskId)).toMatchObject({
      status: 'done',
      a2a: { state: 'TASK_STATE_COMPLETED', updatedAt: at, doc: { note: 'TASK_STATE_COMPLETED' } },
    });
    expect((await tasks.getA2A(quiet.taskId))?.callback).toBeUndefined();
    expect(tasks.activeCount).toBe(0);
    expect(await tasks.finish(quiet, ended(at, 'TASK_STATE_CANCELED'))).toBe(false);
    expect((await tasks.listA2A('a2a-key:alice', { state: 'TASK_STATE_COMPLETED', limit: 10 })).total).toBe(
      1,
    );
    const pushed = await tasks.create(
      a2aMeta('a2a-key:alice', { push: [pushEntry('p0')] }),
      undefined,
      ended(at, 'TASK_STATE_FAILED'),
    );
    expect(await tasks.getA2A(pushed.taskId)).toMatchObject({
      status: 'failed',
      callback: { state: 'pending', attempts: 0 },
    });
    expect((await tasks.pushConfigs(pushed.taskId)).map((entry) => entry.id)).toEqual(['p0']);
  });

  it("list an owner's tasks newest first, filtered, in pages that meet exactly", async () => {
    const tasks = await (await make()).tasks();
    const at = (second: string) => `2026-01-01T00:00:${second}.000Z`;
    for (const second of ['01', '02', '03', '04', '05']) {
      const task = await tasks.create(a2aMeta('a2a-key:alice', { updatedAt: at(second) }));
      await tasks.finish(task, ended(at(second)));
    }
    await tasks.create(a2aMeta('a2a-key:bob', { updatedAt: at('09') }));
    const other = await tasks.create(a2aMeta('a2a-key:alice', { contextId: 'ctx-2', updatedAt: at('06') }));
    await tasks.finish(other, ended(at('06'), 'TASK_STATE_FAILED', 'ctx-2'));
    await tasks.create(meta('a2a-key:alice')); // a SAMVAD task is never in an A2A list

    const seconds = (page: { tasks: { a2a?: { updatedAt: string } }[] }) =>
      page.tasks.map((task) => task.a2a!.updatedAt.slice(17, 19));
    const first = await tasks.listA2A('a2a-key:alice', { contextId: 'ctx-1', limit: 2 });
    expect(first.total).toBe(5);
    expect(seconds(first)).toEqual(['05', '04']);
    expect(first.tasks[0]?.a2a?.doc).toEqual({ note: 'TASK_STATE_COMPLETED' });
    const last = first.tasks.at(-1)!;
    const after = { updatedAt: last.a2a!.updatedAt, id: last.taskId };
    const second = await tasks.listA2A('a2a-key:alice', { contextId: 'ctx-1', limit: 10, after });
    expect(seconds(second)).toEqual(['03', '02', '01']);
    const failed = await tasks.listA2A('a2a-key:alice', { state: 'TASK_STATE_FAILED', limit: 10 });
    expect(failed.tasks.map((task) => task.taskId)).toEqual([other.taskId]);
    // At or after (A2A's statusTimestampAfter: "greater than or equal to this value"): 04, 05 and 06.
    expect((await tasks.listA2A('a2a-key:alice', { updatedAfter: at('04'), limit: 10 })).total).toBe(3);
    expect((await tasks.listA2A('a2a-key:bob', { limit: 10 })).tasks.map((t) => t.sender)).toEqual([
      'a2a-key:bob',
    ]);
  });

  it('keep at most `max` push configs per task, and a finished task with some owes its final notification', async () => {
    const tasks = await (await make()).tasks();
    const task = await tasks.create(a2aMeta('a2a-key:alice', { push: [pushEntry('p0')] }));
    for (const id of ['p1', 'p2', 'p3'])
      expect(await tasks.savePushConfig(task.taskId, pushEntry(id), 4)).toBe('saved');
    expect(await tasks.savePushConfig(task.taskId, pushEntry('p4'), 4)).toBe('full');
    expect(await tasks.savePushConfig(task.taskId, { ...pushEntry('p1'), wireVersion: '0.3' }, 4)).toBe(
      'saved',
    );
    await tasks.deletePushConfig(task.taskId, 'p2');
    const kept = await tasks.pushConfigs(task.taskId);
    expect(kept.map((entry) => entry.id).sort()).toEqual(['p0', 'p1', 'p3']);
    expect(kept.find((entry) => entry.id === 'p1')?.wireVersion).toBe('0.3');
    expect(await tasks.savePushConfig('9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d', pushEntry('x'), 4)).toBe(
      'missing',
    );
    // The running task's writes never drop a config another replica added meanwhile.
    await tasks.start(task);
    await tasks.saveA2A(task, {
      contextId: 'ctx-1',
      state: 'TASK_STATE_WORKING',
      updatedAt: new Date().toISOString(),
      doc: {},
    });
    expect(await tasks.finish(task, ended(new Date().toISOString()))).toBe(true);
    expect((await tasks.pushConfigs(task.taskId)).map((entry) => entry.id).sort()).toEqual([
      'p0',
      'p1',
      'p3',
    ]);
    expect((await tasks.getA2A(task.taskId))?.callback).toEqual({ state: 'pending', attempts: 0 });
    const quiet = await tasks.create(a2aMeta('a2a-key:alice'));
    await tasks.finish(quiet, ended(new Date().toISOString()));
    expect((await tasks.getA2A(quiet.taskId))?.callback).toBeUndefined();
  });

  it("bind a conversation minted here to its owner while its tasks are kept (a keyless caller's)", async () => {
    const tasks = await (await make()).tasks();
    const records = new A2ARecords(tasks, { retentionMs: () => 3600_000 });
    const anon = 'a2a-anon:127.0.0.1';
    const record = (contextId: string, extra: Partial<A2ATaskRecord> = {}): A2ATaskRecord => ({
      id: randomUUID(),
      owner: anon,
      contextId,
      state: 'TASK_STATE_WORKING',
      terminal: false,
      updatedAt: new Date().toISOString(),
      doc: {},
      ...extra,
    });
    const running = record('ctx-minted', { mintedContext: true });
    await records.create(running, []);
    // A blocking send's task, written once when it ended.
    const done = { state: 'TASK_STATE_COMPLETED', terminal: true };
    await records.create(record('ctx-answered', { mintedContext: true, ...done }), []);
    // Unmarked: written before conversations were minted (a name the caller chose). It binds nothing.
    await records.create(record('support', done), []);
    const bound = (owner: string, contextId: string) => records.hasMintedContext(owner, contextId);
    expect(await bound(anon, 'ctx-minted')).toBe(true);
    expect(await bound(anon, 'ctx-answered')).toBe(true);
    expect(await bound(anon, 'support')).toBe(false);
    expect(await bound(anon, 'ctx-unknown')).toBe(false);
    expect(await bound('a2a-anon:10.0.0.2', 'ctx-minted')).toBe(false);
    // The task's own writes keep the mark, to its end.
    expect(await records.update({ ...running, updatedAt: new Date().toISOString() })).toBe(true);
    await records.finish({ ...running, ...done, updatedAt: new Date().toISOString() });
    expect(await bound(anon, 'ctx-minted')).toBe(true);
  });

  it('count against the same caps as SAMVAD tasks', async () => {
    const tasks = await (await make()).tasks({ maxPerSender: 1, maxTotal: 2 });
    await tasks.create(a2aMeta('a2a-key:alice'));
    await expect(Promise.resolve().then(() => tasks.admit('a2a-key:alice', 3600_000))).rejects.toMatchObject({
      httpStatus: 429,
    });
    await tasks.create(meta('agent://a.example'));
    await expect(Promise.resolve().then(() => tasks.admit('a2a-key:bob', 3600_000))).rejects.toMatchObject({
      httpStatus: 503,
    });
  });

  it("at an owner's cap, the oldest finished one makes room, never an unfinished or a SAMVAD one", async () => {
    const tasks = await (await make()).tasks({ maxPerSender: 3, maxTotal: 100 });
    const records = new A2ARecords(tasks, { retentionMs: () => 3600_000 });
    const [older, newer, running] = [
      await tasks.create(a2aMeta('a2a-key:alice')),
      await tasks.create(a2aMeta('a2a-key:alice')),
      await tasks.create(a2aMeta('a2a-key:alice')),
    ];
    await tasks.finish(older, ended(new Date(Date.now() - 2000).toISOString()));
    await new Promise((resolve) => setTimeout(resolve, 5));
    await tasks.finish(newer, ended(new Date().toISOString()));
    await records.admit('a2a-key:alice');
    expect(await tasks.getA2A(older.taskId)).toBeUndefined();
    expect(await tasks.getA2A(newer.taskId)).toBeDefined();
    expect((await tasks.listA2A('a2a-key:alice', { limit: 10 })).total).toBe(2);
    await tasks.create(a2aMeta('a2a-key:alice'));
    await records.admit('a2a-key:alice');
    expect(await tasks.getA2A(newer.taskId)).toBeUndefined();
    // Only unfinished tasks left: the cap holds.
    await tasks.create(a2aMeta('a2a-key:alice'));
    await expect(records.admit('a2a-key:alice')).rejects.toMatchObject({ httpStatus: 429 });
    expect(await tasks.getA2A(running.taskId)).toBeDefined();
    // A SAMVAD sender's finished results are never dropped for room.
    const samvad = [];
    for (let i = 0; i < 3; i++) {
      const task = await tasks.create(meta('agent://a.example'));
      await tasks.start(task);
      await tasks.finish(task, { result: { reply: 'kept' } });
      samvad.push(task);
    }
    await expect(records.admit('agent://a.example')).rejects.toMatchObject({ httpStatus: 429 });
    for (const task of samvad) expect(await tasks.get(task.taskId)).toBeDefined();
  });

  it("make room for several tasks at once (a caller's blocking sends, written as they end, come together)", async () => {
    const tasks = await (await make()).tasks({ maxPerSender: 2, maxTotal: 100 });
    const records = new A2ARecords(tasks, { retentionMs: () => 3600_000 });
    const at = (ms: number) => new Date(Date.now() - ms).toISOString();
    const finished = [];
    for (const age of [4000, 3000, 2000, 1000]) {
      finished.push(await tasks.create(a2aMeta('a2a-key:alice'), undefined, ended(at(age))));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await records.admit('a2a-key:alice');
    const left = await tasks.listA2A('a2a-key:alice', { limit: 10 });
    expect(left.tasks.map((task) => task.taskId)).toEqual([finished[3]!.taskId]);
  });

  it('drop nothing for a task they still refuse, nor a task that owes its final notification', async () => {
    const tasks = await (await make()).tasks({ maxPerSender: 3, maxTotal: 100 });
    const records = new A2ARecords(tasks, { retentionMs: () => 3600_000 });
    const at = (ms: number) => new Date(Date.now() - ms).toISOString();
    const older = await tasks.create(a2aMeta('a2a-key:alice'), undefined, ended(at(3000)));
    await new Promise((resolve) => setTimeout(resolve, 2));
    const newer = await tasks.create(a2aMeta('a2a-key:alice'), undefined, ended(at(2000)));
    await tasks.create(a2aMeta('a2a-key:alice'));
    // Two of her runs unwritten: even both results dropped would leave no room, so both stay.
    await expect(records.admit('a2a-key:alice', { mine: 2, all: 2 })).rejects.toMatchObject({
      httpStatus: 429,
    });
    expect(await tasks.getA2A(older.taskId)).toBeDefined();
    expect(await tasks.getA2A(newer.taskId)).toBeDefined();
    await records.admit('a2a-key:alice', { mine: 1, all: 1 });
    expect(await tasks.getA2A(older.taskId)).toBeUndefined();
    expect(await tasks.getA2A(newer.taskId)).toBeUndefined();

    // Bob's oldest result still owes its final notification: the next one makes room instead.
    const owing = await tasks.create(
      a2aMeta('a2a-key:bob', { push: [pushEntry('p0')] }),
      undefined,
      ended(at(3000)),
    );
    await new Promise((resolve) => setTimeout(resolve, 2));
    const plain = await tasks.create(a2aMeta('a2a-key:bob'), undefined, ended(at(2000)));
    await tasks.create(a2aMeta('a2a-key:bob'));
    await records.admit('a2a-key:bob');
    expect(await tasks.getA2A(plain.taskId)).toBeUndefined();
    expect(await tasks.getA2A(owing.taskId)).toBeDefined();
    await tasks.create(a2aMeta('a2a-key:bob'));
    await expect(records.admit('a2a-key:bob')).rejects.toMatchObject({ httpStatus: 429 });
    // Delivered, it may go; a late record of its delivery, after, does not bring it back.
    await tasks.setCallback(owing, 'delivered', 1);
    await records.admit('a2a-key:bob');
    expect(await tasks.getA2A(owing.taskId)).toBeUndefined();
    await tasks.setCallback(owing, 'failed', 2);
    expect(await tasks.getA2A(owing.taskId)).toBeUndefined();
  });

  it('count tasks admitted and not yet written (running blocking sends) against both caps', async () => {
    const tasks = await (await make()).tasks({ maxPerSender: 3, maxTotal: 4 });
    const records = new A2ARecords(tasks, { retentionMs: () => 3600_000 });
    const done = await tasks.create(a2aMeta('a2a-key:alice'), undefined, ended(new Date().toISOString()));
    // One more of alice's runs unwritten: room is made by dropping her finished task, the cap holds.
    await records.admit('a2a-key:alice', { mine: 1, all: 1 });
    expect(await tasks.getA2A(done.taskId)).toBeDefined();
    await records.admit('a2a-key:alice', { mine: 2, all: 2 });
    expect(await tasks.getA2A(done.taskId)).toBeUndefined();
    await expect(records.admit('a2a-key:alice', { mine: 3, all: 3 })).rejects.toMatchObject({
      httpStatus: 429,
    });
    // The store's cap counts everyone's unwritten runs.
    await tasks.create(a2aMeta('a2a-key:bob'));
    await expect(records.admit('a2a-key:carol', { mine: 0, all: 3 })).rejects.toMatchObject({
      httpStatus: 503,
    });
    await records.admit('a2a-key:carol', { mine: 0, all: 2 });
  });
});

describe.each(homes)('finished tasks in %s', (_name, make) => {
  it('keep their result after their callback is recorded', async () => {
    const tasks = await (await make()).tasks();
    const task = await tasks.create(meta('agent://a.example', { callbackUrl: 'https://caller.example/cb' }));
    await tasks.start(task);
    await tasks.finish(task, { result: { reply: 'kept' } });
    await tasks.setCallback(task, 'delivered', 1);
    expect(await tasks.view((await tasks.get(task.taskId))!)).toEqual({
      taskId: task.taskId,
      status: 'done',
      result: { reply: 'kept' },
    });
  });
});

describe("the data dir's finished A2A tasks", () => {
  it('make room at the cap even after a task this store does not hold was finished through it', () => {
    const tasks = new TaskStore(dataDir(), { maxPerSender: 2 });
    const foreign = new TaskStore(dataDir()).create(a2aMeta('a2a-key:alice'));
    tasks.finish(foreign, ended(new Date().toISOString()));
    const done = tasks.create(a2aMeta('a2a-key:alice'), undefined, ended(new Date().toISOString()));
    expect(dropOldestAtCap(tasks)).toBe(true);
    expect(tasks.getA2A(done.taskId)).toBeUndefined();
    expect(dropOldestAtCap(tasks)).toBe(false);
  });

  it("drop none of a caller's results when the store as a whole has no room for the new task", () => {
    const tasks = new TaskStore(dataDir(), { maxPerSender: 2, maxTotal: 3 });
    const done = [0, 1].map(() =>
      tasks.create(a2aMeta('a2a-key:alice'), undefined, ended(new Date().toISOString())),
    );
    tasks.create(a2aMeta('a2a-key:bob'));
    // A run of someone's not yet written: even with one result of hers dropped, the store would be full.
    expect(() => tasks.admitA2A('a2a-key:alice', 3600_000, { mine: 0, all: 1 })).toThrow(
      /already has 2 tasks/,
    );
    for (const task of done) expect(tasks.getA2A(task.taskId)).toBeDefined();
    tasks.admitA2A('a2a-key:alice', 3600_000);
    expect(tasks.getA2A(done[0]!.taskId)).toBeUndefined();
  });
});

describe('the data dir across a restart', () => {
  it('keeps minted conversations bound, from task files and the journal of answered tasks alike', () => {
    const dir = dataDir();
    const before = new TaskStore(dir);
    const anon = 'a2a-anon:127.0.0.1';
    before.create(a2aMeta(anon, { contextId: 'ctx-running', mintedContext: true }));
    const answered = {
      contextId: 'ctx-answered',
      state: 'TASK_STATE_COMPLETED',
      mintedContext: true as const,
    };
    const outcome = { a2a: { ...answered, updatedAt: new Date().toISOString(), doc: {} }, completed: true };
    before.create(a2aMeta(anon, answered), undefined, outcome);
    before.close();
    const after = new TaskStore(dir);
    expect(after.hasMintedContext(anon, 'ctx-running')).toBe(true);
    expect(after.hasMintedContext(anon, 'ctx-answered')).toBe(true);
    after.close();
  });

  it('loads SAMVAD tasks written before A2A existed, and each protocol recovers its own tasks, once', async () => {
    const dir = dataDir();
    const before = new TaskStore(dir);
    const legacyId = '0f8fad5b-d9cb-469f-a165-70867728950e';
    mkdirSync(join(dir, 'tasks'), { recursive: true });
    writeFileSync(
      join(dir, 'tasks', `${legacyId}.json`),
      JSON.stringify({
        taskId: legacyId,
        status: 'done',
        createdAt: 1,
        finishedAt: 2,
        sender: 'agent://old.example',
        skill: 'chat',
        traceId: 't',
        spanId: 's',
        result: { reply: 'old' },
      }),
    );
    const running = before.create(a2aMeta('a2a-key:alice', { push: [pushEntry('p1')] }));
    before.start(running);
    const samvad = before.create(meta('agent://a.example'));
    before.start(samvad);

    const after = new TaskStore(dir);
    expect(after.view(after.get(legacyId)!)).toEqual({
      taskId: legacyId,
      status: 'done',
      result: { reply: 'old' },
    });
    expect(after.recover('samvad')).toEqual([]);
    expect(after.get(samvad.taskId)?.status).toBe('failed');
    expect(after.getA2A(running.taskId)?.status).toBe('running');
    const owed = after.recover('a2a');
    expect(owed.map((task) => task.taskId)).toEqual([running.taskId]);
    expect(after.getA2A(running.taskId)).toMatchObject({
      status: 'failed',
      error: { message: expect.stringMatching(/restarted/) },
      a2a: { state: 'TASK_STATE_FAILED', doc: { note: 'working' } },
      callback: { state: 'pending' },
    });
    after.setCallback(owed[0]!, 'delivered', 1);
    expect(new TaskStore(dir).recover('a2a')).toEqual([]);
    expect(new TaskStore(dir).getA2A(running.taskId)?.a2a?.doc).toEqual({ note: 'working' });
  });
});

const storedKey = (id: string, extra: Partial<StoredA2AKey> = {}): StoredA2AKey => ({
  id,
  name: `Agent ${id}`,
  hash: 'x'.repeat(43),
  createdAt: 1_700_000_000_000,
  limits: {},
  ...extra,
});

/** The same keys, without the announcements of changes made elsewhere (a subscriber reconnecting). */
function deaf(records: A2AKeyRecords): A2AKeyRecords {
  return {
    add: (key) => records.add(key),
    get: (id) => records.get(id),
    list: () => records.list(),
    revoke: (id, at) => records.revoke(id, at),
    addUsage: (batch) => records.addUsage(batch),
    remove: (ids) => records.remove(ids),
  };
}

describe.each(homes)('A2A keys in %s', (_name, make) => {
  it('keeps a key as issued, under an id nothing else takes', async () => {
    const keys = await (await make()).a2aKeys();
    // Its scope too: the skills it opens (issue 27).
    const key = storedKey('0123456789ab', {
      expiresAt: 1_800_000_000_000,
      limits: { requestsPerMinute: 5 },
      skills: ['research', 'summary'],
    });
    expect(await keys.add(key)).toBe(true);
    expect(await keys.add(storedKey('0123456789ab', { name: 'Another' }))).toBe(false);
    expect(await keys.get('0123456789ab')).toEqual(key);
    expect(await keys.get('ffffffffffff')).toBeUndefined();
    expect(await keys.list()).toEqual([{ ...key, calls: 0 }]);
  });

  it('lets the first revocation stand', async () => {
    const keys = await (await make()).a2aKeys();
    await keys.add(storedKey('aaaaaaaaaaaa'));
    expect(await keys.revoke('aaaaaaaaaaaa', 1_700_000_001_000)).toMatchObject({
      revokedAt: 1_700_000_001_000,
    });
    expect(await keys.revoke('aaaaaaaaaaaa', 1_700_000_002_000)).toMatchObject({
      revokedAt: 1_700_000_001_000,
    });
    expect(await keys.get('aaaaaaaaaaaa')).toMatchObject({ revokedAt: 1_700_000_001_000 });
    expect(await keys.revoke('bbbbbbbbbbbb', 1_700_000_002_000)).toBeUndefined();
    expect(await keys.get('bbbbbbbbbbbb')).toBeUndefined();
  });

  it('adds the usage several writers counted, keeping the latest use, and none for keys it does not keep', async () => {
    const home = await make();
    const [a, b] = [await home.a2aKeys(), await home.a2aKeys()];
    await a.add(storedKey('aaaaaaaaaaaa'));
    await a.addUsage(new Map([['aaaaaaaaaaaa', { calls: 3, lastUsedAt: 1_700_000_005_000 }]]));
    await b.addUsage(
      new Map([
        ['aaaaaaaaaaaa', { calls: 2, lastUsedAt: 1_700_000_004_000 }],
        ['cccccccccccc', { calls: 9, lastUsedAt: 1_700_000_009_000 }],
      ]),
    );
    expect(await a.list()).toEqual([
      { ...storedKey('aaaaaaaaaaaa'), calls: 5, lastUsedAt: 1_700_000_005_000 },
    ]);
    expect(await b.get('cccccccccccc')).toBeUndefined();
  });

  it('shows every change to the other readers, and forgets removed keys with their usage', async () => {
    const home = await make();
    const [a, b] = [await home.a2aKeys(), await home.a2aKeys()];
    expect(await b.list()).toEqual([]);
    await a.add(storedKey('aaaaaaaaaaaa'));
    await a.add(storedKey('bbbbbbbbbbbb'));
    expect(await b.get('aaaaaaaaaaaa')).toEqual(storedKey('aaaaaaaaaaaa'));
    await b.revoke('aaaaaaaaaaaa', 1_700_000_003_000);
    expect(await a.get('aaaaaaaaaaaa')).toMatchObject({ revokedAt: 1_700_000_003_000 });
    await a.addUsage(new Map([['aaaaaaaaaaaa', { calls: 1, lastUsedAt: 1_700_000_004_000 }]]));
    await b.remove(['aaaaaaaaaaaa']);
    expect((await a.list()).map((key) => key.id)).toEqual(['bbbbbbbbbbbb']);
    expect(await a.get('aaaaaaaaaaaa')).toBeUndefined();
    // Issued again under the same id (a draw that repeats), it starts with no usage.
    await a.add(storedKey('aaaaaaaaaaaa'));
    expect((await b.list()).find((key) => key.id === 'aaaaaaaaaaaa')).toMatchObject({ calls: 0 });
    expect((await b.list()).find((key) => key.id === 'aaaaaaaaaaaa')?.lastUsedAt).toBeUndefined();
  });

  it('refuses a key revoked elsewhere within a second, even when no announcement arrives', async () => {
    const home = await make();
    let clock = Date.now();
    // This reader hears nothing from the others: only its bound on what it read protects it.
    const here = new A2AKeys({ records: deaf(await home.a2aKeys()), now: () => clock });
    const elsewhere = new A2AKeys({ records: await home.a2aKeys(), now: () => clock });
    cleanups.push(
      () => here.close(),
      () => elsewhere.close(),
    );
    const { key, secret } = await elsewhere.issue({ name: 'Research agent' });
    expect(await here.verify(secret)).toMatchObject({ ok: true, key: { id: key.id } });
    await elsewhere.revoke(key.id);
    expect((await elsewhere.verify(secret)).ok).toBe(false);
    clock += 999;
    expect((await here.verify(secret)).ok).toBe(true);
    clock += 2;
    expect(await here.verify(secret)).toMatchObject({ ok: false, refusal: 'revoked' });
  });
});

describe('Redis: what replicas share', () => {
  it('an A2A key revoked at one replica is refused at the others at once (announced)', async () => {
    await admin.flushdb();
    const clock = Date.now();
    // A clock that stands still: what the replicas read is never stale by time, only by the announcement.
    const replica = async () => {
      const keys = new A2AKeys({ records: new RedisA2AKeyRecords(await connection()), now: () => clock });
      cleanups.push(() => keys.close());
      return keys;
    };
    const [a, b, c] = [await replica(), await replica(), await replica()];
    const { key, secret } = await a.issue({ name: 'Research agent' });
    for (const each of [a, b, c]) expect((await each.verify(secret)).ok).toBe(true);
    await b.revoke(key.id);
    await until(
      async () => (await Promise.all([a, c].map((each) => each.verify(secret)))).every((v) => !v.ok),
      1000,
      'the revocation at every replica',
    );
    expect(await c.verify(secret)).toMatchObject({ refusal: 'revoked' });
  });

  it('the prompt floor one replica learned comes to another with its next check', async () => {
    await admin.flushdb();
    const shared = await connection();
    const a = new RedisCallLimits(shared, { perMinute: 100, perSender: 100 });
    const b = new RedisCallLimits(await connection(), { perMinute: 100, perSender: 100 });
    a.notePrompt(4000);
    await until(async () => (await admin.get('agent-bridge:prompt-floor')) === '4000', 2000, 'written');
    expect(b.promptFloor()).toBe(0);
    expect(await b.check(call('agent://a.example', fresh()))).toEqual({ ok: true });
    expect(b.promptFloor()).toBe(4000);
    // Never raised: a bigger prompt seen elsewhere leaves it.
    b.notePrompt(9000);
    a.notePrompt(3500);
    await until(async () => (await admin.get('agent-bridge:prompt-floor')) === '3500', 2000, 'lowered');
  });

  it('a nonce used at one replica is a replay at another, and the limits count both', async () => {
    await admin.flushdb();
    const a = new RedisCallLimits(await connection(), { perMinute: 100, perSender: 3 });
    const b = new RedisCallLimits(await connection(), { perMinute: 100, perSender: 3 });
    expect(await a.check(call('agent://p.example', 'shared'))).toEqual({ ok: true });
    expect(await b.check(call('agent://p.example', 'shared'))).toMatchObject({ refusal: 'replay' });
    expect(await b.check(call('agent://p.example', fresh()))).toEqual({ ok: true });
    expect(await a.check(call('agent://p.example', fresh()))).toEqual({ ok: true });
    expect(await b.check(call('agent://p.example', fresh()))).toMatchObject({ refusal: 'sender' });
    expect(await a.check(call('agent://p.example', fresh()))).toMatchObject({ refusal: 'sender' });
  });

  it("fails a stopped replica's running task once its lease runs out, and hands its callback to one replica", async () => {
    await admin.flushdb();
    const lease = { retentionMs: () => 3600_000, leaseMs: 300 };
    const a = new RedisTaskStore(await connection(), lease);
    const b = new RedisTaskStore(await connection(), lease);
    const c = new RedisTaskStore(await connection(), lease);
    cleanups.push(
      () => b.close(),
      () => c.close(),
    );
    const task = await a.create(meta('agent://a.example', { callbackUrl: 'https://caller.example/cb' }));
    expect(await a.start(task)).toBe(true);
    const other = await a.create(meta('agent://a.example'));
    expect(await a.start(other)).toBe(true);
    // While a renews, nobody takes it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await b.recover()).toEqual([]);
    expect((await b.get(task.taskId))?.status).toBe('running');

    a.close(); // a stops renewing, as a replica killed with -9 would.
    await new Promise((resolve) => setTimeout(resolve, 400));
    const [fromB, fromC] = await Promise.all([b.recover(), c.recover()]);
    const owed = [...fromB, ...fromC];
    expect(owed.map((t) => t.taskId)).toEqual([task.taskId]);
    const failed = await c.get(task.taskId);
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'AGENT_UNAVAILABLE', message: expect.stringMatching(/replica .* stopped/) },
    });
    expect((await b.get(other.taskId))?.status).toBe('failed');
    // The callback is delivered by whoever claimed it; then nobody owes it any more.
    const owner = fromB.length > 0 ? b : c;
    await owner.setCallback(owed[0]!, 'delivered', 1);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect([...(await b.recover()), ...(await c.recover())]).toEqual([]);
    // The late replica cannot overwrite the outcome the others recorded.
    expect(await a.finish(task, { result: 'too late' })).toBe(false);
  });

  it("fails a stopped replica's A2A task once its lease runs out, and hands its final notification to one replica", async () => {
    await admin.flushdb();
    const lease = { retentionMs: () => 3600_000, leaseMs: 300 };
    const a = new RedisTaskStore(await connection(), lease);
    const b = new RedisTaskStore(await connection(), lease);
    const c = new RedisTaskStore(await connection(), lease);
    cleanups.push(
      () => b.close(),
      () => c.close(),
    );
    const task = await a.create(a2aMeta('a2a-key:alice', { push: [pushEntry('p1')] }));
    a.close();
    await new Promise((resolve) => setTimeout(resolve, 400));
    // SAMVAD's recovery leaves it to A2A's (the final notification is A2A's to send).
    expect(await b.recover('samvad')).toEqual([]);
    expect((await b.getA2A(task.taskId))?.status).toBe('running');
    const [fromB, fromC] = await Promise.all([b.recover('a2a'), c.recover('a2a')]);
    expect([...fromB, ...fromC].map((t) => t.taskId)).toEqual([task.taskId]);
    expect(await c.getA2A(task.taskId)).toMatchObject({
      status: 'failed',
      a2a: { state: 'TASK_STATE_FAILED', doc: { note: 'working' } },
      callback: { state: 'pending' },
    });
    const listed = await c.listA2A('a2a-key:alice', { state: 'TASK_STATE_FAILED', limit: 10 });
    expect(listed.tasks.map((t) => t.taskId)).toEqual([task.taskId]);
    const owner = fromB.length > 0 ? b : c;
    await owner.setCallback([...fromB, ...fromC][0]!, 'delivered', 1);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect([...(await b.recover('a2a')), ...(await c.recover('a2a'))]).toEqual([]);
    expect(await redisTtl(`agent-bridge:task:${task.taskId}:push`)).toBeGreaterThan(0);
  });

  it('writes an A2A task that ended before it was first written in one transaction, leased only while it owes a notification', async () => {
    await admin.flushdb();
    const monitor = await monitorRedis(redis.url);
    cleanups.push(() => monitor.close());
    const { commands } = monitor;
    const lease = { retentionMs: () => 3600_000, leaseMs: 300 };
    const a = new RedisTaskStore(await connection(), lease);
    const at = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 50));
    commands.length = 0;
    const quiet = await a.create(a2aMeta('a2a-key:alice'), undefined, ended(at));
    // Redis shows a monitor each command as it runs it: EXEC is the last this write may send.
    await until(() => commands.includes('exec'), 5000, 'EXEC seen by MONITOR');
    await new Promise((resolve) => setTimeout(resolve, 50)); // and anything a wrong write would send after
    // Nothing between MULTI and EXEC is seen half-done by another replica; no script, no second step.
    expect(commands.filter((name) => ['multi', 'exec', 'evalsha', 'eval'].includes(name))).toEqual([
      'multi',
      'exec',
    ]);
    const ttl = await redisTtl(`agent-bridge:task:${quiet.taskId}`);
    expect(ttl).toBeGreaterThan(3500_000);
    expect(ttl).toBeLessThanOrEqual(3600_000);
    expect(await admin.zscore('agent-bridge:tasks:leases', quiet.taskId)).toBeNull();
    const pushed = await a.create(
      a2aMeta('a2a-key:alice', { push: [pushEntry('p0')] }),
      undefined,
      ended(at, 'TASK_STATE_FAILED'),
    );
    expect(await admin.zscore('agent-bridge:tasks:leases', pushed.taskId)).not.toBeNull();
    expect(await redisTtl(`agent-bridge:task:${pushed.taskId}:push`)).toBeGreaterThan(0);
    // Stopped before delivering, the notification it owes passes to another replica; the quiet one is no one's.
    a.close();
    await new Promise((resolve) => setTimeout(resolve, 400));
    const b = new RedisTaskStore(await connection(), lease);
    cleanups.push(() => b.close());
    expect((await b.recover('a2a')).map((task) => task.taskId)).toEqual([pushed.taskId]);
    expect((await b.getA2A(quiet.taskId))?.status).toBe('done');
  });

  it("makes room at an owner's cap by clearing entries whose task is gone (evicted, or dropped by another replica)", async () => {
    await admin.flushdb();
    const tasks = new RedisTaskStore(await connection(), { retentionMs: () => 3600_000, maxPerSender: 2 });
    cleanups.push(() => tasks.close());
    const at = (ms: number) => new Date(Date.now() - ms).toISOString();
    const gone = await tasks.create(a2aMeta('a2a-key:alice'), undefined, ended(at(2000)));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const kept = await tasks.create(a2aMeta('a2a-key:alice'), undefined, ended(at(1000)));
    await admin.del(`agent-bridge:task:${gone.taskId}`);
    // Clearing the entry whose task is gone makes the room: the live result stays.
    await tasks.admitA2A('a2a-key:alice', 3600_000);
    expect(await tasks.getA2A(kept.taskId)).toBeDefined();
    expect(await admin.zscore('agent-bridge:tasks:sender:a2a-key:alice', gone.taskId)).toBeNull();
    expect(await admin.hexists('agent-bridge:tasks:a2a:a2a-key:alice', gone.taskId)).toBe(0);
  });

  it("binds a keyless caller's conversation no longer than its tasks are kept, and clears expired entries", async () => {
    await admin.flushdb();
    let now = Date.now();
    const tasks = new RedisTaskStore(await connection(), { retentionMs: () => 3600_000, now: () => now });
    cleanups.push(() => tasks.close());
    const anon = 'a2a-anon:127.0.0.1';
    const part = { contextId: 'ctx-minted', mintedContext: true as const };
    const outcome = {
      a2a: { ...part, state: 'TASK_STATE_COMPLETED', updatedAt: new Date(now).toISOString() },
    };
    await tasks.create(a2aMeta(anon, part), undefined, { ...outcome, completed: true });
    expect(await tasks.hasMintedContext(anon, 'ctx-minted')).toBe(true);
    now += 3600_000 + 1;
    expect(await tasks.hasMintedContext(anon, 'ctx-minted')).toBe(false);
    expect(await admin.hlen(`agent-bridge:tasks:a2a:${anon}`)).toBe(0);
  });

  it('drops no live result when clearing entries whose task is gone made more room than needed', async () => {
    await admin.flushdb();
    const tasks = new RedisTaskStore(await connection(), { retentionMs: () => 3600_000, maxPerSender: 5 });
    cleanups.push(() => tasks.close());
    const made = [];
    for (let i = 0; i < 5; i++) {
      made.push(await tasks.create(a2aMeta('a2a-key:alice'), undefined, ended(new Date().toISOString())));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    for (const gone of made.slice(0, 3)) await admin.del(`agent-bridge:task:${gone.taskId}`);
    // One run of hers unwritten: two places needed, three entries cleared.
    await tasks.admitA2A('a2a-key:alice', 3600_000, { mine: 1, all: 1 });
    for (const kept of made.slice(3)) expect(await tasks.getA2A(kept.taskId)).toBeDefined();
  });

  it('finds droppable results behind many that still owe their final notification', async () => {
    await admin.flushdb();
    const tasks = new RedisTaskStore(await connection(), { retentionMs: () => 3600_000, maxPerSender: 36 });
    cleanups.push(() => tasks.close());
    const at = (ms: number) => new Date(Date.now() - ms).toISOString();
    for (let i = 0; i < 34; i++) {
      const push = { push: [pushEntry('p0')] };
      await tasks.create(a2aMeta('a2a-key:alice', push), undefined, ended(at(9000)));
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
    const plain = await tasks.create(a2aMeta('a2a-key:alice'), undefined, ended(at(1000)));
    await tasks.create(a2aMeta('a2a-key:alice'));
    await tasks.admitA2A('a2a-key:alice', 3600_000);
    expect(await tasks.getA2A(plain.taskId)).toBeUndefined();
    expect(await admin.zcard('agent-bridge:tasks:sender:a2a-key:alice')).toBe(35);
  });

  it('loads SAMVAD tasks written before A2A existed', async () => {
    await admin.flushdb();
    const tasks = new RedisTaskStore(await connection(), { retentionMs: () => 3600_000 });
    cleanups.push(() => tasks.close());
    const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
    await admin.set(
      `agent-bridge:task:${id}`,
      JSON.stringify({
        taskId: id,
        status: 'done',
        createdAt: 1,
        finishedAt: 2,
        sender: 'agent://old.example',
        skill: 'chat',
        traceId: 't',
        spanId: 's',
        result: { reply: 'old' },
      }),
    );
    expect(await tasks.view((await tasks.get(id))!)).toEqual({
      taskId: id,
      status: 'done',
      result: { reply: 'old' },
    });
    expect(await tasks.getA2A(id)).toBeUndefined();
  });

  it('refuses with 503 and Retry-After while Redis is down, and is back by itself, nonces kept', async () => {
    await admin.flushdb();
    const shared = await connection();
    const limits = new RedisCallLimits(shared, { perMinute: 1000, perSender: 1000 });
    expect(await limits.check(call('agent://p.example', 'before'))).toEqual({ ok: true });
    await redis.stop();
    await until(() => !shared.health().up, 5000, 'down');
    expect(shared.health().problem).toMatch(/does not answer.*503.*Start Redis/);
    const refusal = await Promise.resolve()
      .then(() => limits.check(call('agent://p.example', fresh())))
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ProtocolError);
    expect(refusal).toMatchObject({ code: 'AGENT_UNAVAILABLE', httpStatus: 503 });
    expect((refusal as ProtocolError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    await redis.restart();
    await until(() => shared.health().up, 10_000, 'back up');
    expect(await limits.check(call('agent://p.example', fresh()))).toEqual({ ok: true });
    // The append-only file kept the nonce window: the envelope accepted before the outage is still spent.
    expect(await limits.check(call('agent://p.example', 'before'))).toMatchObject({ refusal: 'replay' });
  });

  it('checks no A2A key and changes none while Redis is down (503), and is back by itself', async () => {
    await admin.flushdb();
    const shared = await connection();
    const keys = new A2AKeys({
      records: new RedisA2AKeyRecords(shared),
      unavailable: () => shared.health().problem,
      // No trust in what was read: every check goes to Redis.
      cacheMs: 0,
    });
    cleanups.push(() => keys.close());
    const { key, secret } = await keys.issue({ name: 'Partner' });
    await redis.stop();
    await until(() => !shared.health().up, 5000, 'down');
    const refusal = await keys.verify(secret).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ProtocolError);
    expect(refusal).toMatchObject({
      code: 'AGENT_UNAVAILABLE',
      httpStatus: 503,
      message: 'This agent cannot check A2A keys right now; retry shortly.',
    });
    for (const change of [
      () => keys.issue({ name: 'Another' }),
      () => keys.revoke(key.id),
      () => keys.list(),
    ]) {
      expect(await change().catch((error: unknown) => error)).toMatchObject({
        status: 503,
        message: expect.stringMatching(
          /^(Not issued|Not revoked|Cannot list the A2A keys): Redis at .* does not answer/,
        ),
        fix: 'Try again once Redis answers.',
      });
    }
    await redis.restart();
    await until(() => shared.health().up, 10_000, 'back up');
    expect((await keys.verify(secret)).ok).toBe(true);
    expect((await keys.list()).map((each) => each.status)).toEqual(['active']);
  });

  it('holds calls for the nonce window when Redis comes back without its data', async () => {
    await admin.flushdb();
    const shared = await connection({ wipeHoldMs: 1500 });
    const limits = new RedisCallLimits(shared, { perMinute: 1000, perSender: 1000 });
    expect(await limits.check(call('agent://p.example', 'spent'))).toEqual({ ok: true });
    await admin.flushall();
    await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await until(() => shared.health().problem?.includes('without its data'), 5000, 'the wipe noticed');
    await expect(
      Promise.resolve().then(() => limits.check(call('agent://p.example', 'spent'))),
    ).rejects.toMatchObject({
      code: 'AGENT_UNAVAILABLE',
    });
    await until(() => shared.health().up, 5000, 'the hold over');
    expect(await limits.check(call('agent://p.example', fresh()))).toEqual({ ok: true });
  });
});

describe('Redis: losing its data, outages and late replicas (review findings)', () => {
  it('a flush while every replica runs is noticed at the next call, and the hold reaches every replica', async () => {
    await admin.flushall();
    const a = new RedisCallLimits(await connection({ wipeHoldMs: 1500 }), {
      perMinute: 1000,
      perSender: 1000,
    });
    const bConnection = await connection({ wipeHoldMs: 1500 });
    const b = new RedisCallLimits(bConnection, { perMinute: 1000, perSender: 1000 });
    expect(await a.check(call('agent://p.example', 'spent'))).toEqual({ ok: true });
    await admin.flushall(); // no reconnection: only the calls can tell
    for (const replica of [a, b])
      await expect(
        Promise.resolve().then(() => replica.check(call('agent://p.example', 'spent'))),
      ).rejects.toMatchObject({
        code: 'AGENT_UNAVAILABLE',
        httpStatus: 503,
      });
    expect(bConnection.health().problem).toMatch(/without its data/);
    const passes = () =>
      b.check(call('agent://p.example', fresh())).then(
        (verdict) => verdict.ok,
        () => false,
      );
    await until(passes, 5000, 'the hold over');
  });

  it('a replica restarted after a wipe remembers the data it saw, and holds', async () => {
    await admin.flushall();
    const memoryFile = join(dataDir(), 'redis-sentinel');
    const before = await connection({ wipeHoldMs: 1500, memoryFile });
    expect(before.health().up).toBe(true);
    before.disconnect();
    await admin.flushall();
    const after = await connection({ wipeHoldMs: 1500, memoryFile });
    expect(after.health()).toMatchObject({ up: false, problem: expect.stringMatching(/without its data/) });
    const limits = new RedisCallLimits(after, { perMinute: 1000, perSender: 1000 });
    await expect(
      Promise.resolve().then(() => limits.check(call('agent://p.example', fresh()))),
    ).rejects.toMatchObject({
      code: 'AGENT_UNAVAILABLE',
    });
    // A replica that never saw this Redis trusts a first start on it.
    await admin.flushall();
    expect(
      (await connection({ wipeHoldMs: 1500, memoryFile: join(dataDir(), 'redis-sentinel') })).health().up,
    ).toBe(true);
  });

  it('records a task that finishes while Redis is down once it is back, not as failed', async () => {
    await admin.flushall();
    const shared = await connection();
    const tasks = new RedisTaskStore(shared, { retentionMs: () => 3600_000, leaseMs: 3000 });
    cleanups.push(() => tasks.close());
    const task = await tasks.create(meta('agent://a.example'));
    expect(await tasks.start(task)).toBe(true);
    await redis.stop();
    await until(() => !shared.health().up, 5000, 'down');
    const finishing = tasks.finish(task, { result: 'made it' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    await redis.restart();
    expect(await finishing).toBe(true);
    expect(await tasks.view((await tasks.get(task.taskId))!)).toEqual({
      taskId: task.taskId,
      status: 'done',
      result: 'made it',
    });
    expect(tasks.activeCount).toBe(0);
  });

  it('a replica that finishes after its lease was taken over leaves the callback to the one that took it', async () => {
    await admin.flushall();
    const lease = { retentionMs: () => 3600_000, leaseMs: 300 };
    const a = new RedisTaskStore(await connection(), lease);
    const b = new RedisTaskStore(await connection(), lease);
    const c = new RedisTaskStore(await connection(), lease);
    cleanups.push(
      () => a.close(),
      () => b.close(),
      () => c.close(),
    );
    const task = await a.create(meta('agent://a.example', { callbackUrl: 'https://caller.example/cb' }));
    expect(await a.start(task)).toBe(true);
    // a stalls (its renewals stop reaching Redis) long enough for b to take over and owe the callback.
    const renew = (a as unknown as { held: Set<string> }).held;
    renew.clear();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await b.recover()).map((t) => t.taskId)).toEqual([task.taskId]);
    expect(await a.finish(task, { result: 'late' })).toBe(false);
    // b keeps its lease while it delivers: nobody else takes the callback over.
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(await c.recover()).toEqual([]);
    expect(await a.recover()).toEqual([]);
  });

  it('starts a held task at one replica only, however many approve it', async () => {
    await admin.flushall();
    const a = new RedisTaskStore(await connection(), { retentionMs: () => 3600_000 });
    const b = new RedisTaskStore(await connection(), { retentionMs: () => 3600_000 });
    cleanups.push(
      () => a.close(),
      () => b.close(),
    );
    const held = await a.create(meta('agent://a.example', { held: { code: 'ABCD-EFGH' } }));
    const [atA, atB] = await Promise.all([a.start({ ...held }), b.start({ ...held })]);
    expect([atA, atB].filter(Boolean)).toHaveLength(1);
  });

  it('never shows the password of a Redis URL, wherever it is written', () => {
    for (const url of [
      'redis://:s3cret@10.0.0.5:6379/0',
      'redis://user:s3cret@10.0.0.5:6379/0',
      'redis://10.0.0.5:6379/0?password=s3cret',
      'rediss://10.0.0.5:6379?username=u&password=s3cret',
    ]) {
      const shown = maskedRedisUrl(url);
      expect(shown).not.toContain('s3cret');
      expect(shown).toContain('10.0.0.5:6379');
    }
    expect(maskedRedisUrl('redis://10.0.0.5:6379/2')).toBe('redis://10.0.0.5:6379/2');
  });
});
