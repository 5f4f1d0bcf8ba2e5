import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisCallLimits } from '../../src/state/redis-call-limits.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server.js';
import type { TestAgent } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';
import { startReplicas } from '../helpers/replicas.js';

// The real app's A2A tasks on Redis (--redis-url): a key issued at one replica is honoured at another, a
// task started at one is read at another, and a cancel sent to another stops the gateway call where it runs.
let redis: RedisServer;
let gateway: GatewayDouble;

beforeAll(async () => {
  redis = await startRedisServer();
  gateway = await startGatewayDouble({ token: 'gw-token-a2a-replicas' });
});

afterAll(async () => {
  await gateway.close();
  await redis.close();
});

const replicas = (count: number) => startReplicas(count, { redis, gateway });

async function rpc(agent: TestAgent, key: string, method: string, params: object) {
  const response = await fetch(`${agent.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', Authorization: `Bearer ${key}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: response.status, json: (await response.json()) as RpcReply };
}

/** The parts of a JSON-RPC answer (ProtoJSON task) these tests read. */
interface RpcReply {
  result?: {
    task?: { id: string };
    status?: { state: string };
    artifacts?: { parts: { text: string }[] }[];
  };
}

const message = (text: string) => ({
  message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }] },
  configuration: { returnImmediately: true },
});

describe('A2A on replicas', () => {
  it('a task sent to one replica is read at another, with the key issued at a third', async () => {
    const [a, b, c] = await replicas(3);
    const { secret } = await c!.app.a2aKeys.issue({ name: 'Everywhere' });
    gateway.set({ deltas: () => ['slow ', 'reply'], deltaDelayMs: 200 });
    const sent = await rpc(a!, secret, 'SendMessage', message('hello replicas'));
    expect(sent.status).toBe(200);
    const id = sent.json.result!.task!.id;
    await until(
      async () => {
        const got = await rpc(b!, secret, 'GetTask', { id });
        return got.json.result?.status?.state === 'TASK_STATE_COMPLETED';
      },
      5000,
      'the task completed, read at another replica',
    );
    const got = await rpc(b!, secret, 'GetTask', { id });
    expect(got.json.result?.artifacts?.[0]?.parts[0]?.text).toBe('slow reply');
  });

  it("a key's own limit and budget hold across replicas", async () => {
    const [a, b] = await replicas(2);
    const once = await a!.app.a2aKeys.issue({ name: 'Once a minute', limits: { requestsPerMinute: 1 } });
    gateway.set({ deltas: (reply) => [reply], deltaDelayMs: 0 });
    expect((await rpc(a!, once.secret, 'SendMessage', message('one'))).status).toBe(200);
    const again = await rpc(b!, once.secret, 'SendMessage', message('two'));
    expect(again.status).toBe(429);
    // The double reports 15 tokens a turn: a budget of 10 allows one turn, wherever the next one arrives.
    const thrifty = await b!.app.a2aKeys.issue({ name: 'Ten tokens', limits: { tokensPerDay: 10 } });
    const first = await rpc(b!, thrifty.secret, 'SendMessage', { ...message('one'), configuration: {} });
    expect(first.json.result?.task?.id).toBeDefined();
    await (b!.app.server.limits as RedisCallLimits).flush();
    const over = await rpc(a!, thrifty.secret, 'SendMessage', message('two'));
    expect(over.status).toBe(429);
  });

  it('a cancel sent to another replica stops the gateway call where the task runs', async () => {
    const [a, b] = await replicas(2);
    const { secret } = await a!.app.a2aKeys.issue({ name: 'Canceller' });
    gateway.set({ deltas: () => ['one ', 'two ', 'three'], deltaDelayMs: 2000 });
    gateway.requests.length = 0;
    const sent = await rpc(a!, secret, 'SendMessage', message('cancel me elsewhere'));
    const id = sent.json.result!.task!.id;
    await until(() => gateway.requests.some((r) => r.path === '/v1/chat/completions'), 3000, 'the call');
    const aborted = gateway.waitForAbort(5000);
    const canceled = await rpc(b!, secret, 'CancelTask', { id });
    expect(canceled.json.result?.status?.state).toBe('TASK_STATE_CANCELED');
    expect((await aborted).path).toBe('/v1/chat/completions');
    expect((await rpc(a!, secret, 'GetTask', { id })).json.result?.status?.state).toBe('TASK_STATE_CANCELED');
  });
});
