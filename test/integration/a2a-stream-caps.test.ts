import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import type { StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server.js';
import { a2aClient, clientFactory, type ClientOptions } from '../helpers/a2a-agent.js';
import { asTask, send } from '../helpers/a2a-messages.js';
import { agentPool, type TestAgent } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';
import { replicaClient, startReplicas } from '../helpers/replicas.js';

// Security review, finding 5: one key started one slow task and held 30 of 30 event streams on it
// (SubscribeToTask was admitted without counting against anything) while its limit was 10 requests a
// minute. The real app, its caller core and limits, the SDK's own client on each transport.
const TOKEN = 'gw-token-a2a-stream-caps';
let gateway: GatewayDouble;
let redis: RedisServer;
const agents = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
  redis = await startRedisServer();
});

// A turn that never ends keeps its task running (and its streams open) until the agent stops.
beforeEach(() => gateway.set({ behaviour: 'hang' }));

afterAll(async () => {
  await agents.closeAll();
  await gateway.close();
  await redis.close();
});

/** A stream the caller holds open after its first event, until it leaves. */
interface Held {
  first: StreamResponse;
  leave(): Promise<void>;
}

/** Opens a stream and reads its first event: the stream held, or the refusal's message. */
async function open(start: (signal: AbortSignal) => AsyncGenerator<StreamResponse>): Promise<Held | string> {
  const leaving = new AbortController();
  const stream = start(leaving.signal);
  let first: IteratorResult<StreamResponse>;
  try {
    first = await stream.next();
  } catch (error) {
    return (error as Error).message;
  }
  if (first.done) return 'ended at once';
  const leave = async () => {
    leaving.abort();
    await stream.return(undefined).catch(() => undefined);
  };
  onTestFinished(leave);
  return { first: first.value, leave };
}

const subscribe = (client: Client, taskId: string) =>
  open((signal) => client.resubscribeTask({ tenant: '', id: taskId }, { signal }));
const streamSend = (client: Client) => open((signal) => client.sendMessageStream(send('slow'), { signal }));
const later = (client: Client) =>
  client.sendMessage(send('slow', { configuration: { returnImmediately: true } })).then(asTask);

/** What refused the stream, or that it was held (where a refusal was expected). */
function refusal(opened: Held | string): string {
  return typeof opened === 'string' ? opened : 'the stream was held';
}

function held(opened: Held | string): Held {
  if (typeof opened === 'string') throw new Error(`expected the stream to be held, got: ${opened}`);
  return opened;
}

function taskIdOf(stream: Held): string {
  const payload = stream.first.payload;
  if (payload?.$case !== 'task') throw new Error('expected the task first');
  return payload.value.id;
}

async function keyHolder(
  agent: TestAgent,
  name: string,
  requestsPerMinute?: number,
  options?: ClientOptions,
) {
  const { key, secret } = await agent.app.a2aKeys.issue({
    name,
    ...(requestsPerMinute ? { limits: { requestsPerMinute } } : {}),
  });
  return {
    caller: `a2a-key:${key.id}`,
    secret,
    client: await a2aClient(agent.url, secret, 'JSONRPC', options),
  };
}

describe('open streams per caller', () => {
  it('the review’s attack: thirty subscriptions to one slow task hold two streams; the rest are refused (429)', async () => {
    const agent = await agents.start({ settings: { access: 'pairing' } });
    const responses: Response[] = [];
    const { caller, client } = await keyHolder(agent, 'Holder', 10, { seen: (r) => responses.push(r) });
    const task = await later(client);
    const opened: (Held | string)[] = [];
    for (let i = 0; i < 30; i++) opened.push(await subscribe(client, task.id));
    const refusals = opened.filter((answer): answer is string => typeof answer === 'string');
    // Without the caps all thirty are held.
    expect(opened.length - refusals.length).toBe(2);
    expect(new Set(refusals)).toEqual(
      new Set([
        expect.stringMatching(
          new RegExp(
            `${caller} holds 2 open streams on task ${task.id}, the most one caller may hold on a task`,
          ),
        ),
      ]),
    );
    expect(responses.at(-1)?.status).toBe(429);
    expect(Number(responses.at(-1)?.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('at most four in all, sends and subscriptions together; one left, or ended, makes room at once', async () => {
    const agent = await agents.start({ settings: { access: 'pairing' } });
    const { caller, client } = await keyHolder(agent, 'Streamer');
    const sends = [
      held(await streamSend(client)),
      held(await streamSend(client)),
      held(await streamSend(client)),
    ];
    const [first, second, third] = sends.map(taskIdOf) as [string, string, string];
    const subscribed = held(await subscribe(client, first));
    const full = new RegExp(`${caller} holds 4 open streams here .*, the most one caller may hold`);
    expect(refusal(await streamSend(client))).toMatch(full);
    expect(refusal(await subscribe(client, second))).toMatch(full);
    // The caller leaves one: its place is free before the task's next event (this task has none to come).
    await subscribed.leave();
    await until(async () => typeof (await subscribe(client, second)) !== 'string', 3000, 'room');
    expect(refusal(await subscribe(client, third))).toMatch(full);
    // A task that ends ends its streams: the place of its send is free.
    await client.cancelTask({ tenant: '', id: third, metadata: undefined });
    await until(async () => typeof (await subscribe(client, first)) !== 'string', 3000, 'room');
  });

  it("a subscription is a request: it counts against the key's limit on JSON-RPC 1.0, v0.3 and HTTP+JSON", async () => {
    const agent = await agents.start({ settings: { access: 'pairing' } });
    const responses: Response[] = [];
    const seen = (response: Response) => responses.push(response);
    const { caller, secret, client: v1 } = await keyHolder(agent, 'Six a minute', 6, { seen });
    const rest = await a2aClient(agent.url, secret, 'HTTP+JSON', { seen });
    const card = await (await fetch(`${agent.url}/.well-known/agent-card.json`)).json();
    const { supportedInterfaces: _v1Only, ...v03Card } = card as Record<string, unknown>;
    const v03 = await clientFactory(secret, 'JSONRPC', { seen }).createFromAgentCard(v03Card as never);
    expect(v03.protocolVersion).toBe('0.3');
    const tasks = [await later(v1), await later(v1), await later(v1)];
    held(await subscribe(v1, tasks[0]!.id));
    held(await subscribe(rest, tasks[1]!.id));
    held(await subscribe(v03, tasks[2]!.id));
    // Three sends and three subscriptions: the seventh request of the minute, whatever the transport.
    const over = new RegExp(`${caller} is over its per-sender limit of requests per minute`);
    expect(refusal(await subscribe(v1, tasks[0]!.id))).toMatch(over);
    expect(responses.at(-1)?.status).toBe(429);
    expect(Number(responses.at(-1)?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refusal(await subscribe(rest, tasks[1]!.id))).toMatch(over);
    expect(responses.at(-1)?.status).toBe(429);
    // v0.3's tasks/resubscribe is a stream whatever happens: its refusal is the stream's error event.
    expect(refusal(await subscribe(v03, tasks[2]!.id))).toMatch(over);
  });
});

describe('open streams on replicas', () => {
  it('a subscription counts against the limits all replicas share; the caps are each replica’s', async () => {
    const [a, b] = await startReplicas(2, { redis, gateway: { url: gateway.url, token: TOKEN } });
    const { key, secret } = await a!.app.a2aKeys.issue({
      name: 'Everywhere',
      limits: { requestsPerMinute: 4 },
    });
    const caller = `a2a-key:${key.id}`;
    const atA = await replicaClient(a!, secret);
    const atB = await replicaClient(b!, secret, 'HTTP+JSON');
    const task = await later(atA);
    // B follows the task running at A from its records.
    held(await subscribe(atB, task.id));
    held(await subscribe(atB, task.id));
    expect(refusal(await subscribe(atB, task.id))).toMatch(
      new RegExp(`${caller} holds 2 open streams on task`),
    );
    held(await subscribe(atA, task.id));
    expect(refusal(await subscribe(atA, task.id))).toMatch(
      new RegExp(`${caller} is over its per-sender limit`),
    );
  });
});
