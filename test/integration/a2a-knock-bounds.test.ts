// Knocks are bounded like SAMVAD's pending senders (issue 28, item 1): per address and in all, in memory and on
// disk, and a knock past a bound costs the operator a counter, nothing else: no notice, no write, no task.
// A knock taken is not lost to a restart, nor is a key approved and not read yet. A real agent on a loopback
// port with small bounds, stopped and started again on its data dir; callers from different addresses come as
// a tunnel forwards them, through the A2A SDK's own client.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { AccessChange } from '../../src/access/access-control.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { a2aClient, type Transport } from '../helpers/a2a-agent.js';
import { asTask, replyText, send } from '../helpers/a2a-messages.js';
import { agentPool, tempDir, type TestAgent } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';
import { startReplicas } from '../helpers/replicas.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { startRedisServer } from '../fixtures/redis-server.js';

const TOKEN = 'gw-token-knock-bounds';
let gateway: GatewayDouble;
const agents = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));
const dataDir = tempDir('knock-bounds-');
let agent: TestAgent;

let offset = 0;
const start = () =>
  agents.start({
    dataDir,
    settings: { access: 'pairing' },
    knockLimits: { maxWaiting: 3, maxPerAddress: 2 },
    now: () => Date.now() + offset,
  });

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN, reply: (m) => `echo: ${m}` });
  agent = await start();
});

afterAll(async () => {
  await agents.closeAll();
  await gateway.close();
});

function from(address: string): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('x-forwarded-for', address);
    return fetch(input, { ...init, headers });
  };
}
const stranger = (address: string, transport: Transport = 'JSONRPC') =>
  a2aClient(agent.url, undefined, transport, { base: from(address) });
const knockCode = (task: Task) =>
  /knock ([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(
    task.status?.message?.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('') ??
      '',
  )?.[1] ?? '';
const files = () => ({
  tasks: readdirSync(join(dataDir, 'tasks')).sort(),
  knocks: readFileSync(join(dataDir, 'a2a-knocks.json'), 'utf8'),
});
const chats = () => gateway.requests.filter((r) => r.path === '/v1/chat/completions');

const taken: { task: Task; address: string; transport: Transport }[] = [];

describe('bounds', () => {
  it('per address and in all: past either, 429 and a counter, and nothing else (no notice, no write)', async () => {
    const knock = async (address: string, transport: Transport) => {
      const task = asTask(await (await stranger(address, transport)).sendMessage(send(`from ${address}`)));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
      taken.push({ task, address, transport });
    };
    await knock('203.0.113.1', 'JSONRPC');
    await knock('203.0.113.1', 'HTTP+JSON');
    // The third from one address: its bound (2).
    const events: AccessChange[] = [];
    agent.app.on('access', (change) => events.push(change));
    const before = files();
    const third = await stranger('203.0.113.1');
    await expect(third.sendMessage(send('one more'))).rejects.toThrow(
      /Your address has 2 knocks waiting for this agent's operator already/,
    );
    expect(files()).toEqual(before);
    expect(events).toEqual([]);

    // Another address fills the list (3 in all); a fourth address finds it full.
    await knock('198.51.100.1', 'HTTP+JSON');
    const full = files();
    const flood = await stranger('192.0.2.1', 'HTTP+JSON');
    for (let i = 0; i < 5; i++) {
      await expect(flood.sendMessage(send(`flood ${i}`))).rejects.toThrow(/too many requests waiting/);
    }
    expect(files()).toEqual(full);
    expect(events).toHaveLength(1);
    const view = agent.app.a2a.knocks!;
    expect(view.view()).toHaveLength(3);
    expect(view.refused).toBe(6);
    expect(view.summary()).toMatchObject({ waiting: 3, newest: { address: '198.51.100.1' } });
    expect(chats()).toEqual([]);
  });
});

describe('across a restart', () => {
  it('knocks taken wait on, their tasks too; an approved key not yet read is read after the restart', async () => {
    // Approved before the restart, read after it.
    const [first, second, third] = taken;
    await agent.app.a2a.knocks!.approve(knockCode(first!.task), { skills: ['chat'] });
    await until(() => agent.app.a2a.knocks!.activeRuns === 0, 5000, 'the approved run');
    await agent.stop();

    agent = await start();
    const knocks = agent.app.a2a.knocks!;
    expect(
      knocks
        .view()
        .map((k) => k.address)
        .sort(),
    ).toEqual(['198.51.100.1', '203.0.113.1']);
    // The bounds count the knocks from before it: one more from 203.0.113.1 fits, then that address is full.
    const again = await stranger('203.0.113.1');
    const fourth = asTask(await again.sendMessage(send('and again')));
    await expect(again.sendMessage(send('and again'))).rejects.toThrow(/Your address has 2 knocks/);

    const client = await stranger(first!.address, first!.transport);
    const answered = await client.getTask({ tenant: '', id: first!.task.id });
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyText(answered)).toBe('echo: from 203.0.113.1');
    expect(answered.artifacts.map((a) => a.artifactId)).toEqual(['reply', 'a2a-key']);
    expect(
      (await client.getTask({ tenant: '', id: first!.task.id })).artifacts.map((a) => a.artifactId),
    ).toEqual(['reply']);

    // A knock from before the restart, approved after it: its message runs, the caller reads it.
    const waiting = await stranger(second!.address, second!.transport);
    expect((await waiting.getTask({ tenant: '', id: second!.task.id })).status?.state).toBe(
      TaskState.TASK_STATE_AUTH_REQUIRED,
    );
    await knocks.approve(knockCode(second!.task), {});
    await until(() => knocks.activeRuns === 0, 5000, 'the approved run');
    const ran = await waiting.getTask({ tenant: '', id: second!.task.id });
    expect(ran.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(ran.artifacts.map((a) => a.artifactId)).toEqual(['reply', 'a2a-key']);

    // And one denied after it ends rejected.
    await knocks.deny(knockCode(third!.task), 'Not now.');
    await knocks.deny(knockCode(fourth), 'Not now either.');
    const denied = await (
      await stranger(third!.address, third!.transport)
    ).getTask({
      tenant: '',
      id: third!.task.id,
    });
    expect(denied.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(knocks.view()).toEqual([]);
  });
});

describe('expiry', () => {
  it('a knock nobody decided in time ends rejected, and leaves the list', async () => {
    const client = await stranger('192.0.2.77', 'HTTP+JSON');
    const task = asTask(await client.sendMessage(send('anyone there?')));
    const knocks = agent.app.a2a.knocks!;
    expect(knocks.view().map((k) => k.address)).toEqual(['192.0.2.77']);
    offset = 24 * 3600_000 + 1000;
    try {
      await knocks.sweep();
    } finally {
      offset = 0;
    }
    expect(knocks.view()).toEqual([]);
    const ended = await client.getTask({ tenant: '', id: task.id });
    expect(ended.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(ended.status?.message?.parts[0]?.content?.value).toMatch(
      /did not decide on your knock in time \(24 h\)/,
    );
  });
});

describe('a push config', () => {
  it("tells the knock's outcome, never the key: the caller reads that in its task", async () => {
    const hooks = await startWebhookReceiver();
    try {
      const client = await stranger('192.0.2.88');
      const config = {
        tenant: '',
        id: '',
        taskId: '',
        url: hooks.url('knock'),
        token: 'hook-token',
        authentication: undefined,
      };
      const task = asTask(
        await client.sendMessage(
          send('tell me when', {
            configuration: { returnImmediately: true, taskPushNotificationConfig: config },
          }),
        ),
      );
      expect(task.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
      const knocks = agent.app.a2a.knocks!;
      await knocks.approve(knockCode(task), { skills: ['chat'] });
      const completed = (post: { json: Record<string, unknown> }) =>
        JSON.stringify(post.json).includes('TASK_STATE_COMPLETED');
      await until(() => hooks.received.some(completed), 5000, 'the final notification');
      const posts = JSON.stringify(hooks.received.map((post) => post.json));
      expect(posts).toContain(task.id);
      expect(posts).not.toContain('abk_');
      expect(hooks.received.every((post) => post.headers['x-a2a-notification-token'] === 'hook-token')).toBe(
        true,
      );
      const read = await client.getTask({ tenant: '', id: task.id });
      expect(read.artifacts.map((a) => a.artifactId)).toEqual(['reply', 'a2a-key']);
    } finally {
      await hooks.close();
    }
  });
});

describe('the rate of knocks', () => {
  it("spends the strangers' bucket, counted like the other refusals, never the rate approved callers share", async () => {
    const knocks = agent.app.a2a.knocks!;
    const refused = knocks.refused;
    // A tenth of the agent's requests per minute: 1 now. One knock takes it; the next, from another
    // address, finds the bucket empty.
    agent.app.updateSettings({ rpm: 10 });
    try {
      await (await stranger('192.0.2.98')).sendMessage(send('first'));
      const client = await stranger('192.0.2.99');
      await expect(client.sendMessage(send('knock knock'))).rejects.toThrow(
        /limit of requests per minute from senders its operator has not approved yet/,
      );
      expect(knocks.refused).toBe(refused + 1);
      const { secret } = await agent.app.a2aKeys.issue({ name: 'Approved caller' });
      const approved = await a2aClient(agent.url, secret);
      expect(asTask(await approved.sendMessage(send('still served'))).status?.state).toBe(
        TaskState.TASK_STATE_COMPLETED,
      );
    } finally {
      agent.app.updateSettings({ rpm: 10_000 });
    }
  });
});

describe('with replicas (Redis)', () => {
  it('no knocks yet: there is no knock list, and a keyless caller is refused as under allowlist', async () => {
    const redis = await startRedisServer();
    try {
      const [replica] = await startReplicas(1, { redis, gateway, settings: { access: 'pairing' } });
      expect(replica!.app.a2a.knocks).toBeUndefined();
      const response = await fetch(`${replica!.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'knock?' }] } },
        }),
      });
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
        /holders of an A2A key only: ask the operator/,
      );
    } finally {
      await redis.close();
    }
  });
});
