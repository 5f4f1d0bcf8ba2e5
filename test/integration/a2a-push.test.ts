import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import { a2aClient, KEYS, startA2AAgent, type A2AAgent, type StartOptions } from '../helpers/a2a-agent.js';
import { asTask, send } from '../helpers/a2a-messages.js';
import { until } from '../helpers/polling.js';
import {
  startWebhookReceiver,
  type ReceivedPost,
  type WebhookReceiver,
} from '../helpers/webhook-receiver.js';

// Push notifications, delivered for real: to a receiver on a loopback port, reachable only under
// --dev-http-peers (no public https host can be reached from here). Replicas: a2a-replicas.test.ts.
const open: { close(): Promise<void> }[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function agent(options: StartOptions = {}): Promise<A2AAgent> {
  const started = await startA2AAgent({ ...options, push: { devHttpPeers: true, ...options.push } });
  open.push(started);
  return started;
}

async function receiver(): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver();
  open.push(started);
  return started;
}

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-push-'));
  dirs.push(dir);
  return dir;
}

const config = (url: string) => ({
  tenant: '',
  id: '',
  taskId: '',
  url,
  token: 'receiver-token',
  authentication: { scheme: 'Bearer', credentials: 'receiver-secret' },
});

const kind = (post: ReceivedPost) => Object.keys(post.json)[0];
const isFinal = (post: ReceivedPost) =>
  kind(post) === 'statusUpdate' &&
  ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED'].includes(
    (post.json.statusUpdate as { status: { state: string } }).status.state,
  );

/** Lets late duplicates arrive before counting (a delivery is never expected this late). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 400));

describe('push notifications to a loopback receiver under --dev-http-peers', () => {
  it('post the task, the whole reply and the final status, each once, authenticated per config', async () => {
    const hooks = await receiver();
    const a = await agent();
    const client = await a2aClient(a.url, KEYS.alice, 'HTTP+JSON');
    const push = config(hooks.url('a2a'));
    const task = asTask(
      await client.sendMessage(send('hi', { configuration: { taskPushNotificationConfig: push } })),
    );
    await until(() => hooks.received.some(isFinal), 5000, 'the final notification');
    await settle();
    expect(hooks.received.map(kind)).toEqual(['task', 'artifactUpdate', 'statusUpdate']);
    const [working, reply, done] = hooks.received.map(
      (post) => post.json as Record<string, Record<string, unknown>>,
    );
    expect(working?.task).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_WORKING' } });
    expect(reply?.artifactUpdate).toMatchObject({
      lastChunk: true,
      artifact: { parts: [{ text: 'Hello, alice.' }] },
    });
    expect(done?.statusUpdate).toMatchObject({ taskId: task.id, status: { state: 'TASK_STATE_COMPLETED' } });
    for (const post of hooks.received) {
      expect(post.path).toBe('/a2a');
      expect(post.headers).toMatchObject({
        'content-type': 'application/a2a+json',
        authorization: 'Bearer receiver-secret',
        'x-a2a-notification-token': 'receiver-token',
      });
    }
    // Each attempt reaches the operator's callback log; the final delivery is recorded with the task.
    expect(a.deliveries.map((event) => [event.taskId, event.outcome, event.attempt])).toEqual([
      [task.id, 'delivered', 1],
      [task.id, 'delivered', 1],
      [task.id, 'delivered', 1],
    ]);
    expect((await a.taskState.getA2A(task.id))?.callback).toEqual({ state: 'delivered', attempts: 1 });
  });

  it('post v0.3 shapes to a webhook a v0.3 caller registered', async () => {
    const hooks = await receiver();
    const a = await agent();
    await fetch(`${a.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${KEYS.alice}`,
        'Content-Type': 'application/json',
        'A2A-Version': '0.3',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'message/send',
        params: {
          message: {
            kind: 'message',
            messageId: 'v03-push',
            role: 'user',
            parts: [{ kind: 'text', text: 'hi' }],
          },
          configuration: {
            blocking: true,
            pushNotificationConfig: { url: hooks.url('v03'), token: 'v03-token' },
          },
        },
      }),
    });
    await until(() => hooks.received.length >= 3, 5000, 'three push notifications');
    await settle();
    // The SDK's v0.3 serializer sends the whole task each time (the v0.3 webhook convention).
    const bodies = hooks.received.map((post) => post.json as { kind: string; status: { state: string } });
    expect(bodies.map((body) => body.kind)).toEqual(['task', 'task', 'task']);
    expect(bodies.at(-1)).toMatchObject({
      status: { state: 'completed' },
      artifacts: [{ parts: [{ text: 'Hello, alice.' }] }],
    });
    expect(hooks.received[0]?.headers).toMatchObject({
      'content-type': 'application/json',
      'x-a2a-notification-token': 'v03-token',
    });
  });

  it('retry a final notification the receiver did not take, with backoff, and record how it went', async () => {
    const hooks = await receiver();
    let finals = 0;
    hooks.answer((post) => (isFinal(post) && finals++ === 0 ? 503 : 200));
    const a = await agent({ push: { backoffMs: [50, 50] } });
    const client = await a2aClient(a.url, KEYS.alice);
    const task = asTask(
      await client.sendMessage(
        send('hi', { configuration: { taskPushNotificationConfig: config(hooks.url('retry')) } }),
      ),
    );
    await until(
      async () => (await a.taskState.getA2A(task.id))?.callback?.state === 'delivered',
      5000,
      'delivered',
    );
    await settle();
    expect(hooks.received.filter(isFinal)).toHaveLength(2);
    expect(a.deliveries.slice(-2).map((event) => [event.outcome, event.attempt, event.status])).toEqual([
      ['retrying', 1, 503],
      ['delivered', 2, 200],
    ]);
    expect((await a.taskState.getA2A(task.id))?.callback).toEqual({ state: 'delivered', attempts: 2 });
  });

  it('deliver the final notification a restart left owed, once, from the agent that recovered the task', async () => {
    const hooks = await receiver();
    const dir = dataDir();
    const before = await agent({ dataDir: dir });
    const client = await a2aClient(before.url, KEYS.alice);
    const push = config(hooks.url('owed'));
    const later = { returnImmediately: true, taskPushNotificationConfig: push };
    const task = asTask(await client.sendMessage(send('hold', { configuration: later })));
    await until(() => hooks.received.length === 1, 5000, 'the working notification');
    // The first agent never finishes (as if its process died); a second one opens the same data dir.
    before.a2a.close();
    const after = await agent({ dataDir: dir });
    await until(() => hooks.received.some(isFinal), 5000, 'the owed final notification');
    await settle();
    expect(hooks.received.filter(isFinal).map((post) => post.json)).toEqual([
      {
        statusUpdate: expect.objectContaining({
          taskId: task.id,
          status: expect.objectContaining({ state: 'TASK_STATE_FAILED' }),
        }),
      },
    ]);
    const failed = await (await a2aClient(after.url, KEYS.alice)).getTask({ tenant: '', id: task.id });
    expect(failed.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect((await after.taskState.getA2A(task.id))?.callback).toEqual({ state: 'delivered', attempts: 1 });
  });
});

describe('push notifications without --dev-http-peers', () => {
  it('refuse a loopback or private URL when it is set, with an A2A error that says why', async () => {
    const hooks = await receiver();
    const a = await agent({ push: { devHttpPeers: false } });
    const client = await a2aClient(a.url, KEYS.alice);
    const task = asTask(await client.sendMessage(send('hi')));
    const refused = (url: string) =>
      client
        .createTaskPushNotificationConfig({ ...config(url), taskId: task.id })
        .catch((error: Error) => error);
    expect(await refused(hooks.url('x'))).toMatchObject({
      message: expect.stringMatching(/URL refused: the URL must be an https:\/\/ URL/),
    });
    expect(await refused('https://127.0.0.1:8443/x')).toMatchObject({
      message: expect.stringMatching(/public address.*--dev-http-peers/),
    });
    expect(await refused('https://10.0.0.8/hook')).toMatchObject({
      message: expect.stringMatching(/must point to a public address/),
    });
    const sent = await client
      .sendMessage(
        send('hi', { configuration: { taskPushNotificationConfig: config('https://192.168.1.4/x') } }),
      )
      .catch((error: Error) => error);
    expect(sent).toMatchObject({ message: expect.stringMatching(/public address/) });
    expect(hooks.received).toEqual([]);
  });

  it('refuse a name that resolves to a private address when it is delivered, and record it', async () => {
    const a = await agent({
      push: { devHttpPeers: false, resolveHost: async () => [{ address: '10.0.0.8', family: 4 }] },
    });
    const client = await a2aClient(a.url, KEYS.alice);
    const push = config('https://hooks.example.com/a2a');
    const task = asTask(
      await client.sendMessage(send('hi', { configuration: { taskPushNotificationConfig: push } })),
    );
    await until(
      async () => (await a.taskState.getA2A(task.id))?.callback?.state === 'failed',
      5000,
      'given up',
    );
    expect(a.deliveries.map((event) => event.outcome)).toEqual(['refused', 'refused', 'refused']);
    expect(a.deliveries[0]?.message).toMatch(/resolves to 10\.0\.0\.8, which is not a public address/);
  });
});
