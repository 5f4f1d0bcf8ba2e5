// The `chat` skill end to end against the gateway double: every failure row of GATEWAY.md's table in all
// three modes (what the caller gets, what the operator is told), the request the gateway receives, live
// deltas in the chat stream, caller disconnects, and a health line that never leaks the gateway's secrets.
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EnvelopeEvent } from '../../src/agent/events.js';
import type { GatewayTransition } from '../../src/app.js';
import type { GatewayProblem } from '../../src/bridge/diagnosis.js';
import { verifyObjectSignature, type Mode } from '../../src/protocol/index.js';
import type { Settings } from '../../src/settings/schema.js';
import { startGatewayDouble } from '../fixtures/gateway-double.js';
import type { GatewayBehaviour, GatewayDouble, RecordedRequest } from '../fixtures/gateway-double.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { PATHS, envelope, post, sign, type Reply } from '../helpers/envelopes.js';
import { readSse, type SseBlock } from '../helpers/sse.js';
import { expectError, expectSignedBy } from '../helpers/verify.js';

const MODES: Mode[] = ['sync', 'async', 'stream'];
const TOKEN = 'gw-secret-token-5f1c9a7e3b';
const WRONG_TOKEN = 'gw-wrong-token-8d2e4b6a0c';
const CHAT_PATH = '/v1/chat/completions';

let gateway: GatewayDouble;
let agent: TestAgent;
let peer: TestAgent;
let closedUrl: string;
let base: Partial<Settings>;
// Never an OpenClaw config of whoever runs the tests: the agents' env points at a file that does not exist.
const noOpenClawDir = tempDir('no-openclaw-');
const noOpenClawFile = { OPENCLAW_CONFIG_PATH: join(noOpenClawDir, 'openclaw.json') };

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN, agents: ['main', 'support'] });
  closedUrl = await closedPortUrl();
  base = {
    gatewayUrl: gateway.url,
    gatewayToken: TOKEN,
    gatewayAgent: 'support',
    // Cleared before each test: one row sets an explicit (bad) model.
    gatewayModel: undefined,
    gatewayTimeoutMs: 2000,
  };
  agent = await startAgent({ settings: base, env: noOpenClawFile });
  peer = await startAgent({ env: noOpenClawFile });
});

afterAll(async () => {
  await agent.close();
  await peer.close();
  await gateway.close();
  rmSync(noOpenClawDir, { recursive: true, force: true });
});

beforeEach(() => {
  gateway.set({ behaviour: 'ok', deltaDelayMs: 0, requireScope: false });
  gateway.requests.length = 0;
  agent.app.updateSettings(base);
});

// ---------------------------------------------------------------------------------------------------------
// Helpers

/** A URL on a loopback port that was just free: nothing listens there, so connecting is refused. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

const chatRequests = (): RecordedRequest[] => gateway.requests.filter((r) => r.path === CHAT_PATH);
/** The caller's text as the gateway got it: the last (user) message, after the framing system message. */
const userText = (r: RecordedRequest): string | undefined =>
  (r.json as { messages: { role: string; content: string }[] }).messages.at(-1)?.content;

function signedChat(target: TestAgent, mode: Mode, payload: object) {
  const env = envelope(peer.id, target.id, mode, payload);
  return { env, signed: sign(env, peer.app.keys.signer) };
}

function openStream(target: TestAgent, payload: object, signal?: AbortSignal) {
  const { env, signed } = signedChat(target, 'stream', payload);
  const response = fetch(`${target.url}${PATHS.stream}`, {
    method: 'POST',
    headers: signed.headers,
    body: signed.body,
    signal,
  });
  return { env, response };
}

async function collect(response: Response): Promise<SseBlock[]> {
  const blocks: SseBlock[] = [];
  for await (const block of readSse(response)) if (!block.comment) blocks.push(block);
  return blocks;
}

async function poll(target: TestAgent, taskId: string, timeoutMs = 3000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await fetch(`${target.url}/agent/task/${taskId}`);
    const record = (await response.json()) as Record<string, unknown>;
    if (record.status === 'done' || record.status === 'failed' || Date.now() > deadline) return record;
    await sleep(15);
  }
}

async function waitFor<T>(find: () => T | undefined, what: string, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Records the app's operator events from now on. */
function watch(target: TestAgent) {
  const envelopes: EnvelopeEvent[] = [];
  const gatewayEvents: GatewayTransition[] = [];
  const onEnvelope = (e: EnvelopeEvent) => envelopes.push(e);
  const onGateway = (e: GatewayTransition) => gatewayEvents.push(e);
  target.app.on('envelope', onEnvelope);
  target.app.on('gateway', onGateway);
  return {
    envelopes,
    gatewayEvents,
    stop() {
      target.app.off('envelope', onEnvelope);
      target.app.off('gateway', onGateway);
    },
  };
}

const agentKey = (target: TestAgent, kid: unknown) => target.app.keys.verificationKey(kid as string)!.key;

/** Asserts a stream event object carries a kid and a signature that verifies with the agent's key. */
function expectSignedObject(target: TestAgent, value: unknown) {
  const object = value as Record<string, unknown>;
  expect(object.kid).toBe(target.app.keys.signer.kid);
  expect(verifyObjectSignature(object, agentKey(target, object.kid)), 'signature verifies').toBe(true);
}

/** What a remote caller sees may not name the gateway, its token or a local path. */
function expectNothingSecret(text: string) {
  for (const secret of [gateway.url, closedUrl, TOKEN, WRONG_TOKEN, agent.dataDir, 'openclaw.json']) {
    expect(text).not.toContain(secret);
  }
  expect(text).not.toMatch(/\/(home|root|tmp|Users|var)\//);
  expect(text).not.toMatch(/\.openclaw|Bearer/);
}

interface CallerFailure {
  /** 502, or 503 when the gateway is not configured. */
  status: number;
  message: string;
  /** Deltas the stream may carry before the error (a failure mid-stream). */
  chunks?: string[];
}

/**
 * Makes one chat call that must fail, checks everything the caller gets in that mode, and returns the
 * operator's log event for the failure.
 */
async function expectCallerFailure(
  target: TestAgent,
  mode: Mode,
  expected: CallerFailure,
  events: EnvelopeEvent[],
  payload: object = { message: 'hello' },
): Promise<EnvelopeEvent> {
  const detail = { code: 'AGENT_UNAVAILABLE', message: expected.message };
  if (mode === 'sync') {
    const { env, signed } = signedChat(target, mode, payload);
    const reply = await post(target.url, PATHS.sync, signed);
    expectError(reply, expected.status, 'AGENT_UNAVAILABLE');
    expect(reply.json.message).toBe(expected.message);
    expect(reply.json.traceId).toBe(env.traceId);
    expectSignedBy(target.app, reply);
    expectNothingSecret(reply.text);
    return waitFor(() => events.find((e) => e.traceId === env.traceId), 'the operator event');
  }
  if (mode === 'async') {
    const { signed } = signedChat(target, mode, payload);
    const accepted: Reply = await post(target.url, PATHS.async, signed);
    expect(accepted.status, accepted.text).toBe(202);
    expectSignedBy(target.app, accepted);
    const taskId = accepted.json.taskId as string;
    const record = await poll(target, taskId);
    expect(record).toEqual({ taskId, status: 'failed', error: detail });
    expectNothingSecret(JSON.stringify(record));
    // The task's failure is its own operator event, after the 202's `accepted` one.
    return waitFor(() => events.find((e) => e.taskId === taskId && e.code !== undefined), 'the task event');
  }
  const { env, response: pending } = openStream(target, payload);
  const response = await pending;
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const blocks = await collect(response);
  expectNothingSecret(JSON.stringify(blocks));
  expect(blocks[0]).toMatchObject({ event: 'status', data: { status: 'processing' } });
  const chunks = blocks.slice(1, -3);
  expect(chunks.map((b) => b.event)).toEqual(chunks.map(() => undefined));
  expect(chunks.map((b) => b.data)).toEqual((expected.chunks ?? []).map((chunk) => ({ chunk, done: false })));
  const [error, final, done] = blocks.slice(-3);
  expect(error?.event).toBe('error');
  expect(error?.data).toEqual({
    status: 'error',
    ...detail,
    error: detail,
    kid: expect.any(String),
    signature: expect.any(String),
  });
  expectSignedObject(target, error?.data);
  expect(final?.event).toBeUndefined();
  expect(final?.data).toEqual({
    done: true,
    error: detail,
    kid: expect.any(String),
    signature: expect.any(String),
  });
  expectSignedObject(target, final?.data);
  expect(done).toMatchObject({ event: 'done', data: {} });
  return waitFor(() => events.find((e) => e.traceId === env.traceId), 'the operator event');
}

// ---------------------------------------------------------------------------------------------------------
// 1-2. Every failure row, in every mode

interface Row {
  name: string;
  behaviour?: GatewayBehaviour;
  /** Settings changed for this row (wrong URL, wrong token, bad model, short timeout). */
  settings?: () => Partial<Settings>;
  problem: GatewayProblem;
  /** Fragments the operator's diagnosis must contain (the URL is added where the gateway was reached). */
  diagnosis: string[];
  /** A fragment of the fix. */
  fix: string;
  callerMessage: string;
  /** How many chat requests the double must see for one call (0: it was never reached). */
  requests: number;
  chunks?: string[];
  /** The gateway was left hanging and must be told the bridge gave up. */
  abandons?: boolean;
}

const ENABLE = 'gateway.http.endpoints.chatCompletions.enabled';
const LOGS = "Look at the gateway's logs";
const MSG = {
  unreachable: "The operator's gateway is not reachable right now.",
  timeout: "The operator's gateway did not answer in time.",
  disabled: "The operator's gateway is not accepting chat requests right now.",
  unauthorized: "The operator's gateway refused the bridge's credentials.",
  forbidden: "The operator's gateway refused the request.",
  rateLimited: "The operator's gateway is temporarily refusing requests.",
  badRequest: "The operator's gateway rejected the request.",
  failed: "The operator's agent failed to produce a reply.",
  unusable: "The operator's gateway gave an unusable answer.",
  streamFailed: "The operator's agent failed while replying.",
};

function rows(mode: Mode): Row[] {
  const streamed = mode === 'stream';
  return [
    {
      name: 'connection refused',
      settings: () => ({ gatewayUrl: closedUrl }),
      problem: 'unreachable',
      diagnosis: ['Could not reach the gateway at ', '(connection refused)'],
      fix: 'Start the gateway and check that the gateway URL points at it',
      callerMessage: MSG.unreachable,
      requests: 0,
    },
    {
      name: 'timeout',
      behaviour: 'hang',
      settings: () => ({ gatewayTimeoutMs: 300 }),
      problem: 'timeout',
      diagnosis: ['did not answer within 0.3 s'],
      fix: 'raise the gateway timeout setting',
      callerMessage: MSG.timeout,
      requests: 1,
      abandons: true,
    },
    {
      name: 'disabled-404',
      behaviour: 'disabled-404',
      problem: 'endpoint-disabled',
      diagnosis: ['has no chat-completions endpoint (HTTP 404: Not Found)'],
      fix: ENABLE,
      callerMessage: MSG.disabled,
      requests: 1,
    },
    {
      name: 'disabled-405',
      behaviour: 'disabled-405',
      problem: 'endpoint-disabled',
      diagnosis: ['has no chat-completions endpoint (HTTP 405: Method Not Allowed)'],
      fix: ENABLE,
      callerMessage: MSG.disabled,
      requests: 1,
    },
    {
      name: 'html-page',
      behaviour: 'html-page',
      problem: 'endpoint-disabled',
      diagnosis: ['has no chat-completions endpoint (HTTP 200)', 'or the URL points at something else'],
      fix: ENABLE,
      callerMessage: MSG.disabled,
      requests: 1,
    },
    {
      name: 'unauthorized',
      behaviour: 'unauthorized',
      problem: 'unauthorized',
      diagnosis: ["refused the bridge's token (HTTP 401: Unauthorized): it is wrong or expired"],
      fix: 'Copy the token from the gateway config (gateway.auth.token',
      callerMessage: MSG.unauthorized,
      requests: 1,
    },
    {
      name: 'unauthorized (a wrong token setting)',
      settings: () => ({ gatewayToken: WRONG_TOKEN }),
      problem: 'unauthorized',
      diagnosis: ["refused the bridge's token (HTTP 401: Unauthorized)"],
      fix: 'Copy the token from the gateway config',
      callerMessage: MSG.unauthorized,
      requests: 1,
    },
    {
      name: 'forbidden-scope',
      behaviour: 'forbidden-scope',
      problem: 'forbidden-scope',
      diagnosis: [
        '(HTTP 403: missing scope: operator.write)',
        'although the bridge sends the operator.write',
      ],
      fix: 'This is a gateway version issue',
      callerMessage: MSG.forbidden,
      requests: 1,
    },
    {
      name: 'rate-limited',
      behaviour: 'rate-limited',
      problem: 'rate-limited',
      diagnosis: ['is locking out failed logins (HTTP 429: Too many failed authentication', 'wait 300 s'],
      fix: 'The bridge does not retry by itself',
      callerMessage: MSG.rateLimited,
      requests: 1,
    },
    {
      name: 'bad-request',
      behaviour: 'bad-request',
      problem: 'bad-request',
      diagnosis: ['rejected the request as invalid (HTTP 400: Invalid request.)'],
      fix: 'Check the gateway model setting',
      callerMessage: MSG.badRequest,
      requests: 1,
    },
    {
      name: 'bad-request (a bad model setting)',
      settings: () => ({ gatewayModel: 'gpt-4o' }),
      problem: 'bad-request',
      diagnosis: ['rejected the request as invalid (HTTP 400: Invalid `model`'],
      fix: 'Check the gateway model setting',
      callerMessage: MSG.badRequest,
      requests: 1,
    },
    {
      name: 'internal-error',
      behaviour: 'internal-error',
      problem: 'gateway-error',
      diagnosis: ['failed to run the agent (HTTP 500: internal error)'],
      fix: LOGS,
      callerMessage: MSG.failed,
      requests: 1,
    },
    {
      name: 'not-json',
      behaviour: 'not-json',
      problem: 'not-chat-server',
      diagnosis: ['answered, but not as a chat-completions server (the body is not JSON)'],
      fix: 'Check the gateway URL',
      callerMessage: MSG.unusable,
      requests: 1,
    },
    {
      name: 'no-choices',
      behaviour: 'no-choices',
      problem: 'not-chat-server',
      diagnosis: ['answered, but not as a chat-completions server (JSON without choices)'],
      fix: 'Check the gateway URL',
      callerMessage: MSG.unusable,
      requests: 1,
    },
    // The double answers these two with a failure of the plain kind when the bridge does not stream.
    {
      name: 'stream-error-frame',
      behaviour: 'stream-error-frame',
      problem: streamed ? 'stream-error' : 'gateway-error',
      diagnosis: [
        streamed ? 'failed while streaming the reply (internal error)' : 'failed to run the agent (HTTP 500',
      ],
      fix: LOGS,
      callerMessage: streamed ? MSG.streamFailed : MSG.failed,
      requests: 1,
      chunks: streamed ? ['ech'] : [],
    },
    {
      name: 'stream-legacy-error',
      behaviour: 'stream-legacy-error',
      problem: streamed ? 'stream-error' : 'gateway-error',
      diagnosis: [
        streamed
          ? 'failed while streaming the reply (Error: internal error)'
          : 'failed to run the agent (Error: internal error)',
      ],
      fix: LOGS,
      callerMessage: streamed ? MSG.streamFailed : MSG.failed,
      requests: 1,
    },
  ];
}

describe.each(MODES)('gateway failures, %s mode', (mode) => {
  it.each(rows(mode))('$name: the caller gets AGENT_UNAVAILABLE, the operator the fix', async (row) => {
    if (row.behaviour) gateway.set({ behaviour: row.behaviour });
    if (row.settings) agent.app.updateSettings(row.settings());
    const seen = watch(agent);
    try {
      const event = await expectCallerFailure(
        agent,
        mode,
        { status: 502, message: row.callerMessage, chunks: row.chunks ?? [] },
        seen.envelopes,
      );
      const where = row.problem === 'unreachable' ? closedUrl : gateway.url;
      expect(event).toMatchObject({
        endpoint: PATHS[mode],
        mode,
        sender: peer.id,
        skill: 'chat',
        verdict: 'handler',
        code: 'AGENT_UNAVAILABLE',
        status: 502,
        message: row.callerMessage,
      });
      // The operator's log names the problem, where it happened and the fix; never the token.
      for (const fragment of [...row.diagnosis, ` at ${where}`, ` Fix: `, row.fix]) {
        expect(event.diagnosis).toContain(fragment);
      }
      expect(event.diagnosis).not.toContain(TOKEN);
      expect(event.diagnosis).not.toContain(WRONG_TOKEN);

      const state = agent.app.gatewayStatus();
      expect(state.status).toBe('configured');
      expect(state.lastCall).toMatchObject({ ok: false });
      expect(state.problem).toMatchObject({ kind: row.problem, fix: expect.stringContaining(row.fix) });
      for (const fragment of row.diagnosis)
        expect(state.problem).toHaveProperty('diagnosis', expect.stringContaining(fragment));
      // The operator is told of a problem once (the row before may have left the same one: then not again).
      const told = seen.gatewayEvents.filter((t) => t.snapshot.problem?.kind === row.problem);
      expect(told.length).toBeLessThanOrEqual(1);
      expect(JSON.stringify(state)).not.toMatch(new RegExp(`${TOKEN}|${WRONG_TOKEN}`));

      // Exactly one gateway request per call: 401, 403 and 429 in particular are never retried.
      expect(chatRequests()).toHaveLength(row.requests);
      if (row.abandons) expect((await gateway.waitForAbort(1000)).path).toBe(CHAT_PATH);
    } finally {
      seen.stop();
    }
  });
});

describe('no automatic retry of a refused login', () => {
  it.each<GatewayBehaviour>(['unauthorized', 'forbidden-scope', 'rate-limited'])(
    '%s: one request per call, none later',
    async (behaviour) => {
      gateway.set({ behaviour });
      for (const mode of MODES) {
        const { signed } = signedChat(agent, mode, { message: `try ${mode}` });
        const reply = await post(agent.url, PATHS[mode], signed);
        if (mode === 'async') await poll(agent, reply.json.taskId as string);
      }
      await sleep(150); // room for a retry on a timer, which must not come
      expect(chatRequests().map((r) => userText(r))).toEqual(['try sync', 'try async', 'try stream']);
    },
  );
});

// ---------------------------------------------------------------------------------------------------------
// Missing token, and health

describe('a gateway without a token', () => {
  let bare: TestAgent;

  beforeAll(async () => {
    bare = await startAgent({ settings: { gatewayUrl: gateway.url }, env: noOpenClawFile });
  });
  afterAll(() => bare.close());

  it('is reported by health as degraded, without the URL', async () => {
    const response = await fetch(`${bare.url}/agent/health`);
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ status: 'degraded', gateway: 'missing GATEWAY_TOKEN' });
    expect(text).not.toContain(gateway.url);
    expect(text).not.toContain(new URL(gateway.url).host);
    expect(bare.app.gatewayStatus()).toMatchObject({
      status: 'missing GATEWAY_TOKEN',
      condition: 'not-configured',
    });
  });

  it.each(MODES)('%s: the caller gets 503 AGENT_UNAVAILABLE, the operator how to set it', async (mode) => {
    const seen = watch(bare);
    try {
      const event = await expectCallerFailure(
        bare,
        mode,
        { status: 503, message: "The operator's agent is not set up to answer right now." },
        seen.envelopes,
      );
      expect(event).toMatchObject({ code: 'AGENT_UNAVAILABLE', status: 503, mode });
      expect(event.diagnosis).toContain('The gateway is not configured: missing GATEWAY_TOKEN.');
      expect(event.diagnosis).toContain('Fix: Set the gateway URL (--gateway-url or GATEWAY_URL) and token');
      expect(bare.app.gatewayStatus()).toMatchObject({
        status: 'missing GATEWAY_TOKEN',
        condition: 'not-configured',
        lastCall: { ok: false },
        problem: { kind: 'not-configured' },
      });
      // An unauthenticated call would count towards the gateway's login lockout: none is made.
      expect(chatRequests()).toHaveLength(0);
    } finally {
      seen.stop();
    }
  });
});

describe('health', () => {
  it('says configured and ok once a call succeeds, and never shows the gateway URL or token', async () => {
    // The rows above leave the last call failed: degraded until the gateway answers again.
    gateway.set({ behaviour: 'internal-error' });
    await post(agent.url, PATHS.sync, signedChat(agent, 'sync', { message: 'fails' }).signed);
    const before = (await (await fetch(`${agent.url}/agent/health`)).json()) as { status: string };
    expect(before.status).toBe('degraded');
    gateway.set({ behaviour: 'ok' });
    expect(
      (await post(agent.url, PATHS.sync, signedChat(agent, 'sync', { message: 'hi' }).signed)).status,
    ).toBe(200);
    const response = await fetch(`${agent.url}/agent/health`);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ status: 'ok', gateway: 'configured', agent: agent.id });
    for (const secret of [gateway.url, new URL(gateway.url).host, TOKEN, agent.dataDir]) {
      expect(text).not.toContain(secret);
    }
  });

  it('says missing GATEWAY_URL without showing the token', async () => {
    agent.app.updateSettings({ gatewayUrl: '' });
    const response = await fetch(`${agent.url}/agent/health`);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ status: 'degraded', gateway: 'missing GATEWAY_URL' });
    for (const secret of [gateway.url, TOKEN, agent.dataDir]) expect(text).not.toContain(secret);
  });
});

// ---------------------------------------------------------------------------------------------------------
// 3. What the gateway receives on success

describe.each(MODES)('the happy path, %s mode', (mode) => {
  async function succeed(payload: object): Promise<unknown> {
    const { signed } = signedChat(agent, mode, payload);
    if (mode === 'sync') {
      const reply = await post(agent.url, PATHS.sync, signed);
      expect(reply.status, reply.text).toBe(200);
      expectSignedBy(agent.app, reply);
      return reply.json.result;
    }
    if (mode === 'async') {
      const reply = await post(agent.url, PATHS.async, signed);
      const record = await poll(agent, reply.json.taskId as string);
      expect(record.status, JSON.stringify(record)).toBe('done');
      return record.result;
    }
    const response = await fetch(`${agent.url}${PATHS.stream}`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    });
    const blocks = await collect(response);
    const result = blocks.find((b) => b.event === 'result')?.data as { result?: unknown } | undefined;
    expect(result, JSON.stringify(blocks)).toBeDefined();
    return result?.result;
  }

  it('sends the token, both scope headers, the model setting and user = sender#samvad by default', async () => {
    const result = await succeed({ message: 'hi there' });
    expect(result).toEqual({ reply: 'echo: hi there', channel: 'samvad' });
    const requests = chatRequests();
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request?.method).toBe('POST');
    expect(request?.headers).toMatchObject({
      authorization: `Bearer ${TOKEN}`,
      'x-openclaw-scopes': 'operator.write',
      'x-gateway-scopes': 'operator.write',
      'content-type': 'application/json',
    });
    expect(request?.json).toEqual({
      model: 'openclaw/support',
      messages: [
        { role: 'system', content: expect.stringContaining(`Caller: "${peer.id}"`) as unknown },
        { role: 'user', content: 'hi there' },
      ],
      user: `${peer.id}#samvad`,
      ...(mode === 'stream' ? { stream: true, stream_options: { include_usage: true } } : {}),
    });
    expect(agent.app.gatewayStatus().lastCall).toMatchObject({ ok: true });
  });

  it('keeps a given channel: echoed in the result and part of the session key', async () => {
    const result = await succeed({ message: 'again', channel: 'support.desk' });
    expect(result).toEqual({ reply: 'echo: again', channel: 'support.desk' });
    const [request] = chatRequests();
    expect((request?.json as { user?: unknown }).user).toBe(`${peer.id}#support.desk`);
    // The caller's channel names the conversation; OpenClaw's message channel is always samvad.
    expect(request?.headers['x-openclaw-message-channel']).toBe('samvad');
  });
});

// ---------------------------------------------------------------------------------------------------------
// 4. Live deltas in the chat stream

describe('streaming deltas', () => {
  it('passes each delta on as it arrives; result and final done carry the whole reply, signed', async () => {
    gateway.set({ deltaDelayMs: 60 });
    const { response: pending } = openStream(agent, { message: 'hello world' });
    const blocks = await collect(await pending);
    // 'echo: hello world' in the double's 3-character pieces, 60 ms apart.
    const pieces = ['ech', 'o: ', 'hel', 'lo ', 'wor', 'ld'];
    const chunks = blocks.filter(
      (b) => b.event === undefined && (b.data as { done?: unknown }).done === false,
    );
    expect(chunks.map((b) => b.data)).toEqual(pieces.map((chunk) => ({ chunk, done: false })));

    const result = blocks.find((b) => b.event === 'result');
    const final = blocks.find((b) => b.event === undefined && (b.data as { done?: unknown }).done === true);
    const reply = { reply: 'echo: hello world', channel: 'samvad' };
    expect(reply.reply).toBe(pieces.join(''));
    expect(result?.data).toEqual({
      status: 'ok',
      result: reply,
      kid: expect.any(String),
      signature: expect.any(String),
    });
    expect(final?.data).toEqual({
      done: true,
      result: reply,
      kid: expect.any(String),
      signature: expect.any(String),
    });
    expectSignedObject(agent, result?.data);
    expectSignedObject(agent, final?.data);
    const forged = { ...(final!.data as object), result: { ...reply, reply: 'something else' } };
    expect(verifyObjectSignature(forged, agentKey(agent, agent.app.keys.signer.kid))).toBe(false);

    // Order: status, the deltas, result, done (unnamed), done (named).
    expect(blocks.map((b) => b.event ?? ((b.data as { done?: boolean }).done ? 'final' : 'chunk'))).toEqual([
      'status',
      ...pieces.map(() => 'chunk'),
      'result',
      'final',
      'done',
    ]);
    // The gateway spent 5 x 60 ms sending; the first delta reached the caller long before the reply was
    // complete, i.e. before the gateway had finished sending.
    expect(result!.at - chunks[0]!.at).toBeGreaterThan(200);
    expect(chunks[5]!.at - chunks[0]!.at).toBeGreaterThan(200);
  });
});

// ---------------------------------------------------------------------------------------------------------
// 5. A caller who goes away ends the gateway's run

describe('caller disconnect', () => {
  it('sync: aborting the request aborts the gateway call; the log shows 499', async () => {
    gateway.set({ behaviour: 'hang' });
    const before = agent.app.gatewayStatus().lastCall;
    const seen = watch(agent);
    try {
      const { env, signed } = signedChat(agent, 'sync', { message: 'never mind' });
      const controller = new AbortController();
      const call = fetch(`${agent.url}${PATHS.sync}`, {
        method: 'POST',
        headers: signed.headers,
        body: signed.body,
        signal: controller.signal,
      }).then(
        () => 'answered',
        (error: Error) => error.name,
      );
      await waitFor(() => chatRequests()[0], 'the gateway request');
      controller.abort();
      expect(await call).toBe('AbortError');
      const abandoned = await gateway.waitForAbort(1000);
      expect(abandoned.path).toBe(CHAT_PATH);
      const event = await waitFor(() => seen.envelopes.find((e) => e.traceId === env.traceId), 'the log');
      expect(event).toMatchObject({ status: 499, message: 'caller disconnected', mode: 'sync', bytesOut: 0 });
      expect(event.diagnosis).toMatch(/cancelled because its caller went away/);
      // A caller leaving is not a gateway problem.
      expect(agent.app.gatewayStatus().lastCall).toEqual(before);
      expect(seen.gatewayEvents).toEqual([]);
    } finally {
      seen.stop();
    }
  });

  it('stream: closing the stream mid-reply aborts the gateway call; the log shows 499', async () => {
    gateway.set({ deltaDelayMs: 150 });
    const before = agent.app.gatewayStatus().lastCall;
    const seen = watch(agent);
    try {
      const controller = new AbortController();
      const { env, response } = openStream(agent, { message: 'a long story' }, controller.signal);
      const reader = readSse(await response);
      expect((await reader.next()).value).toMatchObject({ event: 'status' });
      expect((await reader.next()).value).toMatchObject({ data: { chunk: 'ech', done: false } });
      controller.abort();
      const abandoned = await gateway.waitForAbort(1000);
      expect(abandoned.path).toBe(CHAT_PATH);
      expect((abandoned.json as { stream?: unknown }).stream).toBe(true);
      const event = await waitFor(() => seen.envelopes.find((e) => e.traceId === env.traceId), 'the log');
      expect(event).toMatchObject({ status: 499, mode: 'stream', code: 'AGENT_UNAVAILABLE' });
      expect(event.diagnosis).toMatch(/cancelled because its caller went away/);
      expect(agent.app.gatewayStatus().lastCall).toEqual(before);
      expect(seen.gatewayEvents).toEqual([]);
    } finally {
      seen.stop();
    }
  });
});
