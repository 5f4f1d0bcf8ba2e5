import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import type { StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { a2aClient, clientFactory, type ClientOptions } from '../helpers/a2a-agent.js';
import { asTask, send } from '../helpers/a2a-messages.js';
import { agentPool, type TestAgent } from '../helpers/agents.js';

// Security review, finding 5: one key started one slow task and held 30 of 30 event streams on it
// (SubscribeToTask was admitted without counting against anything) while its limit was 10 requests a
// minute. The real app, its caller core and limits, the SDK's own client on each transport.
const TOKEN = 'gw-token-a2a-stream-caps';
let gateway: GatewayDouble;
const agents = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
});

// A turn that never ends keeps its task running (and its streams open) until the agent stops.
beforeEach(() => gateway.set({ behaviour: 'hang' }));

afterAll(async () => {
  await agents.closeAll();
  await gateway.close();
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

describe('subscriptions', () => {
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
