import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Skill } from '../../src/agent/skill.js';
import { webhookRules } from '../../src/lib/webhook.js';
import { digestMatches, parseSignatureHeaders, verifyParsedSignature } from '../../src/protocol/index.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { agentPool, startAgent, type TestAgent } from '../helpers/agents.js';
import { envelope, post, sign } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';
import { hasReference, readReference } from '../helpers/reference.js';
import { expectError } from '../helpers/verify.js';

let gateway: GatewayDouble;
let peer: TestAgent;

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: 'gw-token' });
  peer = await startAgent();
});

afterAll(async () => {
  await agents.closeAll();
  await peer.close();
  await gateway.close();
});

const agents = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: 'gw-token' }));
const agentWith = agents.start;

const submit = (agent: TestAgent, payload: object, extra = {}) =>
  post(
    agent.url,
    '/agent/task',
    sign(envelope(peer.id, agent.id, 'async', payload, extra), peer.app.keys.signer),
  );

async function poll(agent: TestAgent, taskId: string, until: (status: string) => boolean, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const record = (await (await fetch(`${agent.url}/agent/task/${taskId}`)).json()) as Record<
      string,
      unknown
    >;
    if (until(record.status as string) || Date.now() > deadline) return record;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// A skill that waits until released, to hold a task in `running`.
function gatedSkill() {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const skill: Skill = {
    id: 'slow',
    name: 'Slow',
    description: 'Waits for the test',
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object' },
    modes: ['async'],
    trust: 'public',
    handler: async ({ progress, signal }) => {
      progress(0.5);
      await Promise.race([
        gate,
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      ]);
      return { finished: true };
    },
  };
  return { skill, release: () => release() };
}

describe('async tasks', () => {
  it('answers 202 at once, then the task is done with the chat reply; the record has exactly the published fields', async () => {
    const agent = await agentWith();
    const accepted = await submit(agent, { message: 'later' });
    expect(accepted.status).toBe(202);
    expect(accepted.json).toEqual({ taskId: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'accepted' });
    const record = await poll(agent, accepted.json.taskId as string, (s) => s === 'done');
    expect(record).toEqual({
      taskId: accepted.json.taskId,
      status: 'done',
      result: { reply: 'echo: later', channel: 'samvad' },
    });
    if (hasReference) {
      const validate = new Ajv2020({ strict: false }).compile(
        readReference<object>('samvad-v1.2/task-status.schema.json'),
      );
      expect(validate(record), JSON.stringify(validate.errors)).toBe(true);
    }
  });

  it('shows progress while running, keeps results across a restart, and fails a task cut short by shutdown', async () => {
    const gated = gatedSkill();
    const agent = await agentWith({ extraSkills: [gated.skill] });
    const done = await submit(agent, { message: 'kept' });
    await poll(agent, done.json.taskId as string, (s) => s === 'done');
    const running = await submit(agent, {}, { skill: 'slow' });
    const record = await poll(agent, running.json.taskId as string, (s) => s === 'running');
    expect(record).toEqual({ taskId: running.json.taskId, status: 'running', progress: 0.5 });

    await agent.app.stop(100);
    const again = await agentWith({ dataDir: agent.dataDir, extraSkills: [gatedSkill().skill] });
    expect(await poll(again, done.json.taskId as string, () => true)).toMatchObject({
      status: 'done',
      result: { reply: 'echo: kept' },
    });
    expect(await poll(again, running.json.taskId as string, () => true)).toEqual({
      taskId: running.json.taskId,
      status: 'failed',
      error: {
        code: 'AGENT_UNAVAILABLE',
        message: expect.stringMatching(/shut down before this task finished/),
      },
    });
  });

  it('forgets results only after the retention time', async () => {
    let offset = 0;
    const agent = await agentWith({ settings: { taskRetentionHours: 1 }, now: () => Date.now() + offset });
    const accepted = await submit(agent, { message: 'x' });
    await poll(agent, accepted.json.taskId as string, (s) => s === 'done');
    offset = 59 * 60_000;
    agent.app.server.tasks.sweep(3600_000);
    expect((await fetch(`${agent.url}/agent/task/${accepted.json.taskId}`)).status).toBe(200);
    offset = 61 * 60_000;
    agent.app.server.tasks.sweep(3600_000);
    expect((await fetch(`${agent.url}/agent/task/${accepted.json.taskId}`)).status).toBe(404);
  });
});

describe('callbacks', () => {
  it.each([
    ['http://example.com/hook', /https/],
    ['https://127.0.0.1/hook', /public address/],
    ['https://10.1.2.3/hook', /public address/],
    ['https://192.168.1.1/hook', /public address/],
    ['https://169.254.169.254/latest/meta-data', /public address/],
    ['https://[::1]/hook', /public address/],
    ['https://[fd00::1]/hook', /public address/],
    ['https://localhost/hook', /localhost/],
    ['https://user:pw@example.com/hook', /credentials/],
  ])('refuses %s at submission with SCHEMA_INVALID', async (callbackUrl, message) => {
    // The production rules: the test agents run with --dev-http-peers (the peer's card is on loopback).
    const agent = await agentWith({ callbacks: webhookRules(false) });
    expectError(await submit(agent, { message: 'x' }, { callbackUrl }), 400, 'SCHEMA_INVALID', message);
  });

  it('follows --dev-http-peers as A2A push notifications do: a loopback http callback is delivered', async () => {
    const received: string[] = [];
    const hook = await listen((_req, body) => {
      received.push(body);
      return 200;
    });
    const agent = await agentWith({ settings: { devHttpPeers: true } });
    const callbackUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
    expect((await submit(agent, { message: 'loop' }, { callbackUrl })).status).toBe(202);
    await until(() => received.length === 1);
    expect(JSON.parse(received[0]!)).toMatchObject({ status: 'ok', result: { reply: 'echo: loop' } });
    hook.close();
  });

  it('refuses a host whose DNS answer is private, checked at delivery', async () => {
    const events: string[] = [];
    // No DNS is reachable here: a stand-in resolver answers a private address for a public-looking name.
    const agent = await agentWith({
      callbacks: { resolveHost: async () => [{ address: '10.0.0.7', family: 4 }], backoffMs: [] },
    });
    agent.app.on('callback', (event) => events.push(`${event.outcome}: ${event.message ?? ''}`));
    const accepted = await submit(agent, { message: 'x' }, { callbackUrl: 'https://hooks.example.com/done' });
    expect(accepted.status).toBe(202);
    await poll(agent, accepted.json.taskId as string, (s) => s === 'done');
    await until(() => events.length > 0);
    expect(events[0]).toMatch(/^refused: .*resolves to 10\.0\.0\.7, which is not a public address/);
  });

  it('delivers the signed response envelope, retrying with backoff after a failure', async () => {
    const received: { req: IncomingMessage; body: string }[] = [];
    let failures = 1;
    const hook = await listen((req, body) => {
      received.push({ req, body });
      return failures-- > 0 ? 500 : 200;
    });
    // The loopback receiver stands in for a public https endpoint: the address rule and scheme are loosened
    // for this test only, since no public host can be reached from here.
    const agent = await agentWith({
      callbacks: { allowHttp: true, isAllowedAddress: () => true, backoffMs: [20, 20] },
    });
    const outcomes: string[] = [];
    agent.app.on('callback', (event) => outcomes.push(event.outcome));
    const callbackUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hooks/done?x=1`;
    const accepted = await submit(agent, { message: 'call me' }, { callbackUrl });
    await until(() => outcomes.includes('delivered'));
    expect(outcomes).toEqual(['retrying', 'delivered']);
    expect(received).toHaveLength(2);

    const { req, body } = received[1]!;
    expect(JSON.parse(body)).toMatchObject({
      status: 'ok',
      result: { reply: 'echo: call me', channel: 'samvad' },
    });
    const digest = String(req.headers['content-digest']);
    expect(digestMatches(digest, body)).toBe(true);
    const parsed = parseSignatureHeaders(
      String(req.headers['signature-input']),
      String(req.headers.signature),
    );
    if (typeof parsed === 'string') throw new Error(parsed);
    const key = agent.app.keys.verificationKey(parsed.kid)!.key;
    expect(
      verifyParsedSignature(
        parsed,
        { method: 'POST', path: '/hooks/done?x=1', headers: { 'content-digest': digest } },
        key,
      ),
    ).toBe(true);
    expect(
      verifyParsedSignature(
        parsed,
        { method: 'POST', path: '/elsewhere', headers: { 'content-digest': digest } },
        key,
      ),
    ).toBe(false);
    expect(accepted.status).toBe(202);
    hook.close();
  });
});

describe('callbacks across a restart', () => {
  it('a delivery still owed when the agent stops is resumed after the restart, from the next attempt', async () => {
    let answer = 503;
    const attempts: string[] = [];
    const hook = await listen((req) => {
      attempts.push(String(req.headers['signature-input']).slice(0, 4));
      return answer;
    });
    const seams = { allowHttp: true, isAllowedAddress: () => true };
    // Loopback stands in for a public https receiver, as above.
    const agent = await agentWith({ callbacks: { ...seams, backoffMs: [60_000] } });
    const retrying: string[] = [];
    agent.app.on('callback', (event) => retrying.push(event.outcome));
    const callbackUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
    const accepted = await submit(agent, { message: 'owed' }, { callbackUrl });
    // Until the agent has read the failed attempt's answer (the receiver sees the request before that).
    await until(() => retrying.includes('retrying'));
    expect(attempts).toHaveLength(1);
    await agent.app.stop(100);

    answer = 200;
    const events: { outcome: string; attempt: number }[] = [];
    const again = await agentWith({ dataDir: agent.dataDir, callbacks: { ...seams, backoffMs: [20] } });
    again.app.on('callback', (event) => events.push({ outcome: event.outcome, attempt: event.attempt }));
    await until(() => events.some((e) => e.outcome === 'delivered'));
    expect(events).toEqual([{ outcome: 'delivered', attempt: 2 }]);
    expect(attempts).toHaveLength(2);
    expect((await again.app.server.tasks.get(accepted.json.taskId as string))?.callback).toEqual({
      state: 'delivered',
      attempts: 2,
    });
    hook.close();
  });
});

function listen(answer: (req: IncomingMessage, body: string) => number): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      res.statusCode = answer(req, body);
      res.end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
