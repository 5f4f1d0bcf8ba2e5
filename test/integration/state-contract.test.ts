import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/protocol/index.js';
import { LocalCallLimits, type CallLimits, type CallVerdict } from '../../src/state/call-limits.js';
import { RedisCallLimits } from '../../src/state/redis-call-limits.js';
import { RedisConnection, maskedRedisUrl } from '../../src/state/redis-connection.js';
import { RedisTaskStore } from '../../src/state/redis-task-store.js';
import { TaskStore } from '../../src/state/task-store.js';
import type { TaskState } from '../../src/state/tasks.js';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server.js';
import { tempDir } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';

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

describe('Redis: what replicas share', () => {
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
