import { connect } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { startGatewayDouble, type GatewayDouble, type RecordedRequest } from '../fixtures/gateway-double.js';
import { a2aClient, clientFactory, type Transport } from '../helpers/a2a-agent.js';
import { asTask, collect, describeEvent, replyText, send } from '../helpers/a2a-messages.js';
import { agentPool, type TestAgent } from '../helpers/agents.js';
import { PATHS, envelope, post, sign } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';
import { nonZero, parseMetrics } from '../helpers/prometheus.js';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import type { TrafficEntry, TrafficResponse } from '../../src/protocol/console-api.js';
import { openSettingsStore } from '../../src/settings/store.js';

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
  it('a non-blocking send returns at once; get and list show the task finished', async () => {
    gateway.set({ deltas: () => ['slow ', 'reply'], deltaDelayMs: 300 });
    const submitted = asTask(
      await alice.sendMessage(
        send('later', { contextId: `bg-${transport}`, configuration: { returnImmediately: true } }),
      ),
    );
    expect(submitted.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    await until(
      async () => {
        const task = await alice.getTask({ tenant: '', id: submitted.id });
        return task.status?.state === TaskState.TASK_STATE_COMPLETED;
      },
      5000,
      'the task to complete',
    );
    expect(replyText(await alice.getTask({ tenant: '', id: submitted.id }))).toBe('slow reply');
    const listed = await alice.listTasks({
      tenant: '',
      contextId: `bg-${transport}`,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '',
      statusTimestampAfter: undefined,
    });
    expect(listed.tasks.map((task) => task.id)).toEqual([submitted.id]);
  });

  it('resubscribes to a running task after the client dropped its stream', async () => {
    gateway.set({ deltas: () => ['one ', 'two ', 'three'], deltaDelayMs: 300 });
    const dropped = new AbortController();
    const stream = alice.sendMessageStream(send('again'), { signal: dropped.signal });
    const first = (await stream.next()).value!;
    const id = first.payload!.$case === 'task' ? first.payload!.value.id : '';
    expect(describeEvent((await stream.next()).value!)).toBe('artifact:=one ');
    dropped.abort();
    await stream.return(undefined);
    const again = (await collect(alice.resubscribeTask({ tenant: '', id }))).map(describeEvent);
    expect(again[0]).toBe('task:working');
    expect(again.at(-1)).toBe('status:completed');
    expect(again).toContain('artifact:=one two three|last');
    // The gateway call went on when the first stream was dropped.
    expect(gateway.requests.filter((r) => r.aborted)).toEqual([]);
  });
});

describe('request targets', () => {
  /** One raw HTTP/1.1 GET: the status line and body, whatever form its target takes. */
  function get(target: string): Promise<{ status: string; body: string }> {
    const { hostname, port } = new URL(agent.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () =>
        socket.write(`GET ${target} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n\r\n`),
      );
      let text = '';
      socket.on('data', (data) => (text += data.toString('utf8')));
      socket.on('end', () => {
        const [head = '', body = ''] = text.split('\r\n\r\n');
        resolve({ status: head.split('\r\n')[0] ?? '', body });
      });
      socket.on('error', reject);
    });
  }

  // Door paths skip the Koa app; these forms must reach the door all the same.
  it('reaches the A2A card with a query, and in absolute form', async () => {
    for (const target of [
      '/.well-known/agent-card.json?fresh=1',
      `${agent.url}/.well-known/agent-card.json`,
    ]) {
      const { status, body } = await get(target);
      expect(status, target).toMatch(/ 200 /);
      expect(body, target).toContain('"supportedInterfaces"');
    }
    // The SAMVAD card is still the Koa app's.
    expect((await get(`${agent.url}/.well-known/agent.json`)).body).toContain('"publicKeys"');
  });

  // The door answers on node's request and response: a Koa context for its requests is only cost.
  it('answers the door paths without a Koa context, and the other paths with one', async () => {
    const contexts = vi.spyOn(agent.app.server.app, 'createContext');
    onTestFinished(() => contexts.mockRestore());
    expect((await get('/.well-known/agent-card.json')).status).toMatch(/ 200 /);
    expect((await get('/a2a/rest/tasks?pageSize=1')).status).toMatch(/ 401 /);
    expect(contexts).not.toHaveBeenCalled();
    expect((await get('/.well-known/agent.json')).status).toMatch(/ 200 /);
    expect(contexts).toHaveBeenCalledTimes(1);
  });
});

describe('the SDK client on its v0.3 path', () => {
  it('sends, streams and cancels mid-stream through the real core', async () => {
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

    gateway.set({ deltas: () => ['first ', 'second'], deltaDelayMs: 2000 });
    const stream = client.sendMessageStream(send('cancel me'));
    const first = (await stream.next()).value!;
    const id = first.payload!.$case === 'task' ? first.payload!.value.id : '';
    expect(describeEvent((await stream.next()).value!)).toBe('artifact:=first ');
    const aborted = gateway.waitForAbort(5000);
    const canceled = await client.cancelTask({ tenant: '', id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await aborted).path).toBe('/v1/chat/completions');
  });
});

describe('traffic and metrics', () => {
  let con: ConsoleHandle;
  let key: string;
  let caller: string;

  beforeAll(async () => {
    con = await startConsole({
      app: agent.app,
      store: openSettingsStore(agent.dataDir),
      dataDir: agent.dataDir,
      port: 0,
      traffic: { flushMs: 10 },
    });
    const issued = await agent.app.a2aKeys.issue({ name: 'Traffic agent' });
    key = issued.secret;
    caller = `a2a-key:${issued.key.id}`;
    // The first scrape switches the metrics on: they count this block's calls only.
    expect((await metrics()).status).toBe(200);
  });

  afterAll(async () => {
    await con.close();
  });

  const traffic = async (query: string) => {
    const response = await fetch(`${con.url}/api/traffic${query}`, {
      headers: { authorization: `Bearer ${con.token}` },
    });
    return { status: response.status, body: (await response.json()) as TrafficResponse };
  };

  const metrics = async () => {
    const response = await fetch(`${con.url}/metrics`, { headers: { authorization: `Bearer ${con.token}` } });
    return { status: response.status, samples: parseMetrics(await response.text()) };
  };

  it('each A2A request is one entry, refusals included; ?protocol= filters; /metrics labels the protocol', async () => {
    const rest = await a2aClient(agent.url, key, 'HTTP+JSON');
    const task = asTask(await rest.sendMessage(send('logged', { contextId: 'ctx-log' })));
    await collect(rest.sendMessageStream(send('streamed')));
    await rest.getTask({ tenant: '', id: task.id });
    const legacy = await fetch(`${agent.url}/a2a/jsonrpc`, {
      method: 'POST',
      // Not a key (without any, a caller knocks under `pairing`): refused at the key step.
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '0.3', Authorization: 'Basic eDp5' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: task.id } }),
    });
    expect(legacy.status).toBe(401);
    // And one SAMVAD call, from an approved peer, for the filters to tell apart.
    const peer = await agents.start();
    agent.app.access.approve(peer.id);
    const samvadCall = sign(envelope(peer.id, agent.id, 'sync', { message: 'samvad' }), peer.app.keys.signer);
    expect((await post(agent.url, PATHS.sync, samvadCall)).status).toBe(200);

    let mine: TrafficEntry[] = [];
    await until(async () => {
      mine = (await traffic('?protocol=a2a')).body.entries.filter((e) => e.sender === caller);
      const all = (await traffic('')).body.entries;
      return mine.length === 3 && all.some((e) => e.sender === peer.id);
    });
    const byMethod = Object.fromEntries(mine.map((e) => [e.a2a?.method, e]));
    expect(byMethod.SendMessage).toMatchObject({
      protocol: 'a2a',
      callerName: 'Traffic agent',
      skill: 'chat',
      endpoint: '/a2a/rest/message:send',
      mode: 'sync',
      signatureForm: 'none',
      verdict: 'accepted',
      status: 200,
      taskId: task.id,
      a2a: { version: '1.0', transport: 'rest', taskState: 'completed', contextId: 'ctx-log' },
    });
    expect(byMethod.SendMessage!.bytesOut).toBeGreaterThan(0);
    expect(byMethod.SendStreamingMessage).toMatchObject({
      mode: 'stream',
      verdict: 'accepted',
      a2a: { taskState: 'completed' },
    });
    expect(byMethod.GetTask).toMatchObject({ taskId: task.id, a2a: { method: 'GetTask' } });

    const refused = (await traffic('?protocol=a2a')).body.entries.find(
      (e) => e.sender === undefined && e.a2a?.version === '0.3',
    );
    expect(refused).toMatchObject({
      protocol: 'a2a',
      verdict: 'access',
      code: 'AUTH_FAILED',
      status: 401,
      a2a: { transport: 'jsonrpc', failedAt: 'key' },
      passed: [],
    });
    // Refused before its body was read: the method the caller meant is not known (issue 26, item 6).
    expect(refused?.a2a?.method).toBeUndefined();
    expect(refused?.message).toMatch(/must be `Bearer <A2A key>`/);

    // Each filter keeps its own protocol's calls and none of the other's.
    const samvad = (await traffic('?protocol=samvad')).body.entries;
    expect(samvad.filter((e) => e.sender === peer.id)).toMatchObject([
      { skill: 'chat', verdict: 'accepted' },
    ]);
    expect(samvad.filter((e) => e.protocol === 'a2a')).toEqual([]);
    const a2a = (await traffic('?protocol=a2a')).body.entries;
    expect(a2a.filter((e) => e.sender === caller)).toHaveLength(3);
    expect(a2a.filter((e) => e.protocol !== 'a2a')).toEqual([]);
    // The same calls on /metrics: the A2A ones (reads have no mode) labelled a2a, the SAMVAD one samvad.
    const { samples } = await metrics();
    expect(nonZero(samples, 'agent_bridge_requests_total')).toEqual({
      'protocol=a2a,mode=sync,verdict=accepted,step=none': 1,
      'protocol=a2a,mode=stream,verdict=accepted,step=none': 1,
      'protocol=a2a,mode=none,verdict=accepted,step=none': 1,
      'protocol=a2a,mode=none,verdict=refused,step=access': 1,
      'protocol=samvad,mode=sync,verdict=accepted,step=none': 1,
    });

    const bad = await traffic('?protocol=carrier-pigeon');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/samvad or a2a/);
  });

  it('counts the body bytes read, declared or not; names the chat skill on sends only', async () => {
    const rpc = async (method: string, params: unknown, id: number) => {
      const text = JSON.stringify({ jsonrpc: '2.0', id, method, params });
      // A stream body goes out chunked: no Content-Length for the agent to take the size from.
      const body = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(text));
          controller.close();
        },
      });
      const response = await fetch(`${agent.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${key}` },
        body,
        duplex: 'half',
      } as RequestInit);
      expect(response.headers.get('content-type')).toMatch(/json/);
      return {
        size: Buffer.byteLength(text),
        json: (await response.json()) as { result?: { task?: { id: string } } },
      };
    };
    const message = {
      messageId: 'm-bytes',
      role: 'ROLE_USER',
      parts: [{ text: 'sized é' }],
      contextId: 'ctx-bytes',
    };
    const sent = await rpc('SendMessage', { message }, 1);
    const taskId = sent.json.result!.task!.id;
    const got = await rpc('GetTask', { id: taskId }, 2);

    let entries: TrafficEntry[] = [];
    await until(async () => {
      entries = (await traffic('?protocol=a2a')).body.entries.filter((e) => e.taskId === taskId);
      return entries.length === 2;
    });
    const byMethod = Object.fromEntries(entries.map((e) => [e.a2a?.method, e]));
    expect(byMethod.SendMessage).toMatchObject({ skill: 'chat', bytesIn: sent.size, status: 200 });
    expect(byMethod.GetTask).toMatchObject({ bytesIn: got.size, status: 200 });
    expect(byMethod.GetTask!.skill).toBeUndefined();
  });
});
