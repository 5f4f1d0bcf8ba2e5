import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server.js';
import { a2aClient } from '../helpers/a2a-agent.js';
import { asTask, send } from '../helpers/a2a-messages.js';
import { agentPool, type TestAgent } from '../helpers/agents.js';
import { replicaClient, startReplicas } from '../helpers/replicas.js';

// Security review, finding 2: a key holder attached four push configs with 240 KB URLs to each of its
// tasks (about 1 MB kept per task, 200 MB per caller at the task cap), and rewrote them as fast as it liked.
// The real app, its caller core and limits, the SDK's own client; the data dir, then Redis.
const TOKEN = 'gw-token-a2a-push-bounds';
let gateway: GatewayDouble;
let redis: RedisServer;
const agents = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
  redis = await startRedisServer();
});

afterAll(async () => {
  await agents.closeAll();
  await gateway.close();
  await redis.close();
});

const HOOK = 'http://127.0.0.1:9/';
/** What the review's caller sent: a loopback URL (allowed under --dev-http-peers) with 240 KB of path. */
const HUGE_URL = `${HOOK}${'a'.repeat(240 * 1024)}`;

function config(
  taskId: string,
  fields: Partial<TaskPushNotificationConfig> = {},
): TaskPushNotificationConfig {
  return { tenant: '', id: '', taskId, url: `${HOOK}hook`, token: 't', authentication: undefined, ...fields };
}

/** Every field at its bound: the most a caller can still make a task keep, per config. */
function atBounds(taskId: string, n: number): TaskPushNotificationConfig {
  return config(taskId, {
    id: `config-${n}-`.padEnd(128, 'i'),
    url: HOOK.padEnd(2048, 'u'),
    token: 't'.repeat(256),
    authentication: { scheme: 'S'.repeat(32), credentials: 'c'.repeat(2048) },
  });
}

const outcome = (attempt: Promise<unknown>) =>
  attempt.then(
    () => 'kept',
    (error: Error) => error.message,
  );

/** The bytes of push configs the task state keeps for a task (the data dir's memory and file, or Redis). */
async function keptBytes(agent: TestAgent, taskId: string): Promise<number> {
  return JSON.stringify(await agent.app.server.tasks.pushConfigs(taskId)).length;
}

/** The review's attack on one task: four configs with 240 KB URLs; what each attempt was answered. */
async function hoard(client: Client, taskId: string): Promise<string[]> {
  const answers: string[] = [];
  for (let i = 0; i < 4; i++) {
    answers.push(await outcome(client.createTaskPushNotificationConfig(config(taskId, { url: HUGE_URL }))));
  }
  return answers;
}

describe('push config bounds in the data dir', () => {
  it('four configs with 240 KB URLs are refused, and a task keeps at most four configs at their bounds', async () => {
    const agent = await agents.start({ settings: { access: 'pairing' } });
    const { secret } = await agent.app.a2aKeys.issue({ name: 'Hoarder' });
    const client = await a2aClient(agent.url, secret);
    const task = asTask(await client.sendMessage(send('hi')));
    const answers = await hoard(client, task.id);
    // Without the URL's bound this is about 1 MB (four 240 KB URLs), kept for the task's retention.
    expect(await keptBytes(agent, task.id)).toBeLessThan(100);
    expect(answers).toEqual(
      Array(4).fill(expect.stringMatching(/push notification URL has 245779 characters; at most 2048/)),
    );
    // Every field at its bound, as many configs as a task takes: about 18 KB in all, where 1 MB was.
    for (let i = 0; i < 4; i++) await client.createTaskPushNotificationConfig(atBounds(task.id, i));
    expect(await keptBytes(agent, task.id)).toBeLessThan(20_000);
    expect(await outcome(client.createTaskPushNotificationConfig(atBounds(task.id, 5)))).toMatch(
      /at most 4 push notification configs; delete one first/,
    );
  });

  it.each([
    ['URL', { url: HOOK.padEnd(2049, 'u') }, /URL has 2049 characters; at most 2048/],
    ['id', { id: 'i'.repeat(129) }, /config id has 129 characters; at most 128/],
    ['token', { token: 't'.repeat(257) }, /token has 257 characters; at most 256/],
    [
      'scheme',
      { authentication: { scheme: 'S'.repeat(33), credentials: 'c' } },
      /scheme has 33 .* at most 32/,
    ],
    [
      'credentials',
      { authentication: { scheme: 'Bearer', credentials: 'c'.repeat(2049) } },
      /credentials have 2049 characters; at most 2048/,
    ],
    ['tenant', { tenant: 'x'.repeat(1000) }, /no tenants: leave "tenant" empty/],
  ])('one past the bound of its %s is refused, saying the bound', async (_field, fields, message) => {
    const agent = await agents.start({ settings: { access: 'pairing' } });
    const { secret } = await agent.app.a2aKeys.issue({ name: 'Just over' });
    // JSON-RPC: over HTTP+JSON the SDK's client puts a tenant in the path.
    const client = await a2aClient(agent.url, secret);
    const task = asTask(await client.sendMessage(send('hi')));
    expect(await outcome(client.createTaskPushNotificationConfig(config(task.id, fields)))).toMatch(message);
    // The same config sent with a message is refused the same way, before any task exists.
    const sent = send('hi', { configuration: { taskPushNotificationConfig: config('', fields) } });
    expect(await outcome(client.sendMessage(sent))).toMatch(message);
    expect(await agent.app.server.tasks.pushConfigs(task.id)).toEqual([]);
  });

  it('a v0.3 config whose URL is not a string is refused (an array of one 240 KB string is no short URL)', async () => {
    const agent = await agents.start({ settings: { access: 'pairing' } });
    const { secret } = await agent.app.a2aKeys.issue({ name: 'Old shapes' });
    const task = asTask(await (await a2aClient(agent.url, secret)).sendMessage(send('hi')));
    // The SDK's v0.3 conversion passes the config's fields on as they came: no client sends this shape.
    const response = await fetch(`${agent.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${secret}`,
        'Content-Type': 'application/json',
        'A2A-Version': '0.3',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tasks/pushNotificationConfig/set',
        params: {
          taskId: task.id,
          pushNotificationConfig: { url: [HUGE_URL], token: 't' },
        },
      }),
    });
    expect(await keptBytes(agent, task.id)).toBeLessThan(100);
    expect(((await response.json()) as { error?: { message: string } }).error?.message).toMatch(
      /url, id, token, scheme and credentials must be strings/,
    );
  });

  it("a config write, create or delete, counts against the key's requests per minute; reads do not", async () => {
    const agent = await agents.start({ settings: { access: 'pairing' } });
    const { key, secret } = await agent.app.a2aKeys.issue({
      name: 'Rewriter',
      limits: { requestsPerMinute: 4 },
    });
    const responses: Response[] = [];
    const client = await a2aClient(agent.url, secret, 'JSONRPC', { seen: (r) => responses.push(r) });
    const task = asTask(await client.sendMessage(send('hi')));
    const write = (id: string) => client.createTaskPushNotificationConfig(config(task.id, { id }));
    const remove = (id: string) =>
      client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id });
    await write('one');
    await remove('one');
    await write('two');
    // The fifth request of the minute: the review rewrote a config 100 times in 4.7 s.
    expect(await outcome(write('three'))).toMatch(
      new RegExp(`a2a-key:${key.id} is over its per-sender limit`),
    );
    expect(responses.at(-1)?.status).toBe(429);
    expect(Number(responses.at(-1)?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await outcome(remove('two'))).toMatch(/over its per-sender limit/);
    expect(responses.at(-1)?.status).toBe(429);
    const listed = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    expect(listed.configs.map((kept) => kept.id)).toEqual(['two']);
  });
});

describe('push config bounds on Redis', () => {
  it('the attack is refused and Redis keeps no more than the bounds; writes count at every replica', async () => {
    const [a, b] = await startReplicas(2, { redis, gateway: { url: gateway.url, token: TOKEN } });
    const { key, secret } = await a!.app.a2aKeys.issue({ name: 'Hoarder', limits: { requestsPerMinute: 4 } });
    const atA = await replicaClient(a!, secret);
    const atB = await replicaClient(b!, secret, 'HTTP+JSON');
    const task = asTask(await atA.sendMessage(send('hi')));
    const admin = new Redis(redis.url);
    try {
      const pushKey = `agent-bridge:task:${task.id}:push`;
      const answers = await hoard(atB, task.id);
      // Without the bound Redis holds about 1 MB here, until the task expires.
      const used = async () => Number(await admin.call('MEMORY', 'USAGE', pushKey));
      expect(await used()).toBeLessThan(100);
      expect(answers).toEqual(
        Array(4).fill(expect.stringMatching(/URL has 245779 characters; at most 2048/)),
      );
      await atB.createTaskPushNotificationConfig(atBounds(task.id, 1));
      await atA.createTaskPushNotificationConfig(atBounds(task.id, 2));
      expect(await keptBytes(b!, task.id)).toBeLessThan(10_000);
      expect(await used()).toBeLessThan(12_000);
      // A send and three config writes, at either replica: the fifth request of the minute is refused.
      await atB.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: atBounds('', 1).id });
      expect(await outcome(atB.createTaskPushNotificationConfig(atBounds(task.id, 3)))).toMatch(
        new RegExp(`a2a-key:${key.id} is over its per-sender limit`),
      );
    } finally {
      admin.disconnect();
    }
  });
});
