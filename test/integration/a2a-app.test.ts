import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { startGatewayDouble, type GatewayDouble, type RecordedRequest } from '../fixtures/gateway-double.js';
import { a2aClient, clientFactory, type Transport } from '../helpers/a2a-agent.js';
import { asTask, collect, describeEvent, replyText, send } from '../helpers/a2a-messages.js';
import { agentPool, type TestAgent } from '../helpers/agents.js';

// The A2A front door of the real app (src/app.ts): the SDK's own client (both transports, and its v0.3
// path) against a running agent whose chat turns reach the gateway double through the shared caller core.
const TOKEN = 'gw-token-a2a-app';
let gateway: GatewayDouble;
const agents = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));
let agent: TestAgent;
let aliceKey: string;
let aliceId: string;

interface ChatBody {
  user?: string;
  stream?: boolean;
  messages: { role: string; content: string }[];
}
const chats = () =>
  gateway.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.json as ChatBody);
const system = (body: ChatBody) => body.messages.find((m) => m.role === 'system')?.content ?? '';

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
  agent = await agents.start({ settings: { access: 'pairing' } });
  const issued = await agent.app.a2aKeys.issue({ name: 'Alice agent' });
  aliceKey = issued.secret;
  aliceId = issued.key.id;
});

beforeEach(() => {
  gateway.set({
    behaviour: 'ok',
    reply: (m) => `echo: ${m}`,
    deltas: (reply) => reply.match(/[\s\S]{1,3}/gu) ?? [],
    deltaDelayMs: 0,
  });
  gateway.requests.length = 0;
});

afterAll(async () => {
  await agents.closeAll();
  await gateway.close();
});

describe.each<Transport>(['JSONRPC', 'HTTP+JSON'])('the SDK client over %s', (transport) => {
  let alice: Client;

  beforeAll(async () => {
    alice = await a2aClient(agent.url, aliceKey, transport);
    expect(alice.transport.protocolName).toBe(transport);
  });

  it('a blocking send reaches the gateway framed as the key holder, in its own session', async () => {
    const task = asTask(await alice.sendMessage(send('hello there', { contextId: 'ctx-1' })));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyText(task)).toBe('echo: hello there');
    const body = chats()[0]!;
    expect(body.user).toBe(`a2a-key:${aliceId}#ctx-1`);
    const framing = system(body);
    const today = new Date().toISOString().slice(0, 10);
    expect(framing).toContain(`A2A caller "Alice agent", key issued by you on ${today}`);
    expect(framing).toContain('over the A2A protocol');
    expect(framing).toContain('Your owner is not the one writing.');
    expect(body.messages.at(-1)).toEqual({ role: 'user', content: 'hello there' });
  });

  it('a streaming send delivers the gateway deltas as artifact updates', async () => {
    gateway.set({ deltas: () => ['one ', 'two ', 'three'] });
    const events = (await collect(alice.sendMessageStream(send('count')))).map(describeEvent);
    expect(events).toEqual([
      'task:working',
      'artifact:=one ',
      'artifact:+two ',
      'artifact:+three',
      'artifact:=one two three|last',
      'status:completed',
    ]);
    expect(chats()[0]?.stream).toBe(true);
  });

  it('a cancel in the middle of a stream aborts the gateway call and ends the task canceled', async () => {
    gateway.set({ deltas: () => ['first ', 'second ', 'third'], deltaDelayMs: 2000 });
    const stream = alice.sendMessageStream(send('slow one'));
    const first = (await stream.next()).value!;
    const id = first.payload!.$case === 'task' ? first.payload!.value.id : '';
    expect(describeEvent((await stream.next()).value!)).toBe('artifact:=first ');
    const aborted: Promise<RecordedRequest> = gateway.waitForAbort(5000);
    const canceled = await alice.cancelTask({ tenant: '', id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await aborted).path).toBe('/v1/chat/completions');
    expect((await collect(stream)).map(describeEvent)).toEqual(['status:canceled']);
    const stored = await alice.getTask({ tenant: '', id });
    expect(stored.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });
});

describe('the SDK client on its v0.3 path', () => {
  it('sends and streams through the real core', async () => {
    const response = await fetch(`${agent.url}/.well-known/agent-card.json`);
    const { supportedInterfaces: _v1Only, ...v03 } = (await response.json()) as Record<string, unknown>;
    const client = await clientFactory(aliceKey).createFromAgentCard(v03 as never);
    expect(client.protocolVersion).toBe('0.3');
    const task = asTask(await client.sendMessage(send('old friend', { contextId: 'legacy' })));
    expect(replyText(task)).toBe('echo: old friend');
    expect(chats()[0]?.user).toBe(`a2a-key:${aliceId}#legacy`);
    gateway.set({ deltas: () => ['a', 'b'] });
    const events = (await collect(client.sendMessageStream(send('ab')))).map(describeEvent);
    expect(events.at(-1)).toBe('status:completed');
    expect(events).toContain('artifact:+b');
  });
});
