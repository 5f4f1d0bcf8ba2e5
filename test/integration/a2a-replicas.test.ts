import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import { RedisConnection } from '../../src/state/redis-connection.js';
import { RedisTaskStore } from '../../src/state/redis-task-store.js';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server.js';
import { a2aClient, KEYS, startA2AAgent, type A2AAgent, type StartOptions } from '../helpers/a2a-agent.js';
import { asTask, collect, describeEvent, replyText, send } from '../helpers/a2a-messages.js';
import { until } from '../helpers/polling.js';
import {
  startWebhookReceiver,
  type ReceivedPost,
  type WebhookReceiver,
} from '../helpers/webhook-receiver.js';

// Replicas of the A2A front door in this process, each with its own Redis connection and task store, on one
// real redis-server: a task started at one is read, listed, followed, canceled and notified about from
// another. The chat core is a fake per replica (tests/helpers/a2a-agent.ts).
let redis: RedisServer;
let admin: Redis;
const open: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
  admin = new Redis(redis.url);
});

beforeEach(async () => {
  await admin.flushall();
});

afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close().catch(() => undefined);
});

afterAll(async () => {
  admin.disconnect();
  await redis.close();
});

interface Replica extends A2AAgent {
  tasks: RedisTaskStore;
  /** Stops it as a killed process would: no more lease renewals, relayed cancels or deliveries. */
  crash(): void;
}

async function replica(options: StartOptions & { onSave?(): void } = {}): Promise<Replica> {
  const connection = new RedisConnection({ url: redis.url });
  await connection.connect();
  const tasks = new RedisTaskStore(connection, { retentionMs: () => 3600_000, leaseMs: 600 });
  const counted = Object.assign(Object.create(tasks) as RedisTaskStore, {
    saveA2A: (...args: Parameters<RedisTaskStore['saveA2A']>) => {
      options.onSave?.();
      return tasks.saveA2A(...args);
    },
  });
  const agent = await startA2AAgent({
    taskState: counted,
    redis: { connection, recoverEveryMs: 200 },
    push: { devHttpPeers: true },
    ...options,
  });
  open.push({
    close: async () => {
      await agent.close();
      tasks.close();
      connection.disconnect();
    },
  });
  return {
    ...agent,
    tasks,
    crash: () => {
      tasks.close();
      agent.a2a.close();
    },
  };
}

async function receiver(): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver();
  open.push(started);
  return started;
}

const later = { returnImmediately: true };
const isFinal = (post: ReceivedPost) => 'statusUpdate' in post.json;
const stateOf = (post: ReceivedPost) =>
  (post.json.statusUpdate as { status: { state: string } }).status.state;
const settle = () => new Promise((resolve) => setTimeout(resolve, 500));
const pushTo = (url: string) => ({
  tenant: '',
  id: '',
  taskId: '',
  url,
  token: 't',
  authentication: undefined,
});

describe('A2A replicas on one Redis', () => {
  it('serve a task started at another: get, list, and its progress within about a second', async () => {
    const [a, b] = [await replica(), await replica()];
    const atA = await a2aClient(a.url, KEYS.alice);
    const atB = await a2aClient(b.url, KEYS.alice);
    const task = asTask(await atA.sendMessage(send('hold', { configuration: later })));
    expect((await atB.getTask({ tenant: '', id: task.id })).status?.state).toBe(TaskState.TASK_STATE_WORKING);
    // The reply so far reaches B through the running replica's once-a-second write.
    await until(
      async () => replyText(await atB.getTask({ tenant: '', id: task.id })) === 'Holding',
      3000,
      'progress',
    );
    const listed = await atB.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_WORKING,
      pageToken: '',
      statusTimestampAfter: undefined,
    });
    expect(listed.tasks.map((t) => t.id)).toEqual([task.id]);
    await expect((await a2aClient(b.url, KEYS.bob)).getTask({ tenant: '', id: task.id })).rejects.toThrow(
      /not found/i,
    );
    a.core.release();
    await until(
      async () =>
        (await atB.getTask({ tenant: '', id: task.id })).status?.state === TaskState.TASK_STATE_COMPLETED,
      3000,
      'completed at B',
    );
    expect(replyText(await atB.getTask({ tenant: '', id: task.id }))).toBe('HoldingHello, alice.');
  });

  it('write a running task at most once a second, and only when it changed, never per reply token', async () => {
    let saves = 0;
    const a = await replica({ onSave: () => saves++ });
    const atA = await a2aClient(a.url, KEYS.alice);
    const task = asTask(await atA.sendMessage(send('hold', { configuration: later })));
    // The first delta is written within a second; nothing changes after it, so nothing more is written.
    await until(() => saves === 1, 3000, 'the first delta written');
    await new Promise((resolve) => setTimeout(resolve, 2200));
    expect(saves).toBe(1);
    // The rest of the reply (four deltas at once) and the end: at most one more write, then the finish.
    a.core.release();
    await until(
      async () =>
        (await atA.getTask({ tenant: '', id: task.id })).status?.state === TaskState.TASK_STATE_COMPLETED,
      3000,
      'completed',
    );
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(saves).toBeLessThanOrEqual(2);
  });

  it('cancel a run at the replica running it, wherever the cancel arrives; the caller gets the canceled task', async () => {
    const hooks = await receiver();
    const [a, b] = [await replica(), await replica()];
    const push = pushTo(hooks.url('cancel'));
    const atA = await a2aClient(a.url, KEYS.alice);
    const task = asTask(
      await atA.sendMessage(send('hold', { configuration: { ...later, taskPushNotificationConfig: push } })),
    );
    // Twice, over both transports: the second finds it canceled already.
    for (const transport of ['HTTP+JSON', 'JSONRPC'] as const) {
      const atB = await a2aClient(b.url, KEYS.alice, transport);
      const canceled = await atB.cancelTask({ tenant: '', id: task.id, metadata: undefined });
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    }
    // The run stopped where it ran (the gateway call is aborted), and stays canceled.
    expect(a.core.turns.at(-1)?.aborted).toBe(true);
    expect(b.core.turns).toEqual([]);
    expect((await atA.getTask({ tenant: '', id: task.id })).status?.state).toBe(
      TaskState.TASK_STATE_CANCELED,
    );
    await until(() => hooks.received.some(isFinal), 3000, 'the final notification');
    await settle();
    expect(hooks.received.filter(isFinal).map(stateOf)).toEqual(['TASK_STATE_CANCELED']);
    expect(b.deliveries).toEqual([]);
  });

  it('answer a cancel that no replica confirms with 503 and what to do, never a canceled task still running', async () => {
    const [a, b] = [await replica(), await replica({ cancelWaitMs: 600 })];
    const atA = await a2aClient(a.url, KEYS.alice);
    const task = asTask(await atA.sendMessage(send('hold', { configuration: later })));
    a.a2a.close(); // A no longer hears relayed cancels (its run and lease go on)
    const response = await fetch(`${b.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${KEYS.alice}`,
        'Content-Type': 'application/json',
        'A2A-Version': '1.0',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'CancelTask', params: { id: task.id } }),
    });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    const { error } = (await response.json()) as { error: { code: number; message: string } };
    expect(error).toMatchObject({
      code: -32000,
      message: expect.stringMatching(/did not confirm the cancel/),
    });
    expect((await atA.getTask({ tenant: '', id: task.id })).status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(a.core.turns.at(-1)?.aborted).toBe(false);
  });

  it('follow a task running at another replica for a resubscribed caller, until it ends', async () => {
    const [a, b] = [await replica(), await replica()];
    const task = asTask(
      await (await a2aClient(a.url, KEYS.alice)).sendMessage(send('hold', { configuration: later })),
    );
    const atB = await a2aClient(b.url, KEYS.alice);
    const events: string[] = [];
    const following = (async () => {
      for await (const event of atB.resubscribeTask({ tenant: '', id: task.id }))
        events.push(describeEvent(event));
    })();
    await until(() => events.some((e) => e.startsWith('artifact:=Holding')), 3000, 'progress at B');
    a.core.release();
    await following;
    expect(events[0]).toBe('task:working');
    expect(events.slice(-2)).toEqual(['artifact:=HoldingHello, alice.|last', 'status:completed']);
    await expect(
      collect((await a2aClient(b.url, KEYS.bob)).resubscribeTask({ tenant: '', id: task.id })),
    ).rejects.toThrow(/not found/i);
  });

  it('deliver each final notification once: from the replica that ended the task, or one that recovered it', async () => {
    const hooks = await receiver();
    const [a, b, c] = [await replica(), await replica(), await replica()];
    const atA = await a2aClient(a.url, KEYS.alice);
    const done = asTask(
      await atA.sendMessage(
        send('hi', { configuration: { taskPushNotificationConfig: pushTo(hooks.url('done')) } }),
      ),
    );
    const cut = asTask(
      await atA.sendMessage(
        send('hold', { configuration: { ...later, taskPushNotificationConfig: pushTo(hooks.url('cut')) } }),
      ),
    );
    await until(() => hooks.received.some((post) => post.path === '/cut'), 3000, 'the working notification');
    a.crash();
    await until(
      () => hooks.received.some((post) => post.path === '/cut' && isFinal(post)),
      5000,
      'the owed one',
    );
    await settle();
    const finals = hooks.received.filter(isFinal);
    expect(finals.map((post) => [post.path, stateOf(post)])).toEqual([
      ['/done', 'TASK_STATE_COMPLETED'],
      ['/cut', 'TASK_STATE_FAILED'],
    ]);
    expect([...b.deliveries, ...c.deliveries].map((event) => [event.taskId, event.outcome])).toEqual([
      [cut.id, 'delivered'],
    ]);
    const failed = await (await a2aClient(b.url, KEYS.alice)).getTask({ tenant: '', id: cut.id });
    expect(failed.status).toMatchObject({
      state: TaskState.TASK_STATE_FAILED,
      message: {
        parts: [{ content: { value: expect.stringMatching(/replica running this task stopped/) } }],
      },
    });
    expect((await b.tasks.getA2A(done.id))?.callback).toEqual({ state: 'delivered', attempts: 1 });
  });
});
