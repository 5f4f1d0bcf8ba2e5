// Issue 15, finding 4: the daily token budget must hold against callers who hang up. A real agent on loopback
// and the gateway double: a sender that closed every stream at 97 % got all its replies free, while an honest
// sender was cut off after five. Every mode is tried: stream (closed near the end), sync (closed before the
// reply) and async (the task runs on; cut by a shutdown, it is still charged, across the restart).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EnvelopeEvent } from '../../src/agent/events.js';
import { DEFAULT_PROMPT_TOKENS } from '../../src/bridge/chat-skill.js';
import type { LocalCallLimits } from '../../src/state/call-limits.js';
import { startGatewayDouble, type GatewayDouble, type Usage } from '../fixtures/gateway-double.js';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server.js';
import { agentPool, startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { PATHS, envelope, post, sign } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';
import { readSse } from '../helpers/sse.js';
import { expectError } from '../helpers/verify.js';

const TOKEN = 'gw-token-budget';
// 240 characters, about 60 tokens of reply as the double's usage says; 97 % of it (233 characters) comes
// first, the rest a moment later, so a caller can close the stream in between.
const REPLY = 'The quick brown fox jumps over the lazy dog; '.repeat(6).slice(0, 240);
const AT_97 = 233;
const SMALL_PROMPT: Usage = { prompt_tokens: 15, completion_tokens: 60, total_tokens: 75 };
// A real OpenClaw turn: the agent's system prompt and tools dwarf the caller's words.
const BIG_PROMPT: Usage = { prompt_tokens: 2000, completion_tokens: 60, total_tokens: 2060 };
const MESSAGE = 'Tell me a story about a fox, please; make it a long one. Go.'; // 60 characters

let gateway: GatewayDouble;
const agents = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));
const peers: TestAgent[] = [];

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
});

beforeEach(() => {
  gateway.set({
    behaviour: 'ok',
    reply: () => REPLY,
    deltas: (reply) => [reply.slice(0, AT_97), reply.slice(AT_97)],
    deltaDelayMs: 150,
    usage: SMALL_PROMPT,
  });
  gateway.requests.length = 0;
});

afterAll(async () => {
  await agents.closeAll();
  for (const peer of peers) await peer.close();
  await gateway.close();
});

async function newPeer(): Promise<TestAgent> {
  const peer = await startAgent();
  peers.push(peer);
  return peer;
}

/** The agent's log entry for a call: written once the call is over, after its charge. */
function logged(agent: TestAgent, traceId: string): Promise<EnvelopeEvent> {
  return new Promise((resolve) => {
    const listener = (event: EnvelopeEvent) => {
      if (event.traceId !== traceId) return;
      agent.app.off('envelope', listener);
      resolve(event);
    };
    agent.app.on('envelope', listener);
  });
}

type Outcome = { answered: true } | { answered: false; status: number; code?: string };

/**
 * A chat stream read until `fraction` of the reply has arrived; then the caller closes it (fraction < 1),
 * or reads it to the end. A refusal comes back as its status and code.
 */
async function streamCall(agent: TestAgent, from: TestAgent, fraction: number): Promise<Outcome> {
  const env = envelope(from.id, agent.id, 'stream', { message: MESSAGE });
  const signed = sign(env, from.app.keys.signer);
  const done = logged(agent, env.traceId);
  const controller = new AbortController();
  const response = await fetch(`${agent.url}${PATHS.stream}`, {
    method: 'POST',
    headers: signed.headers,
    body: signed.body,
    signal: controller.signal,
  });
  if (response.status !== 200) {
    const json = (await response.json()) as { code?: string };
    await done;
    return { answered: false, status: response.status, code: json.code };
  }
  let received = 0;
  try {
    for await (const block of readSse(response)) {
      const chunk = (block.data as { chunk?: string } | undefined)?.chunk;
      if (chunk) received += chunk.length;
      if (fraction < 1 && received >= fraction * REPLY.length) {
        controller.abort();
        break;
      }
    }
  } catch (error) {
    if ((error as Error).name !== 'AbortError') throw error;
  }
  expect(received).toBeGreaterThanOrEqual(Math.floor(fraction * REPLY.length));
  const event = await done;
  expect(event.status).toBe(fraction < 1 ? 499 : 200);
  return { answered: true };
}

/** Calls until the budget refuses (or `max` calls); returns how many were answered. */
async function answeredBeforeRefusal(call: () => Promise<Outcome>, max = 20): Promise<number> {
  for (let i = 0; i < max; i++) {
    const outcome = await call();
    if (outcome.answered) continue;
    expect(outcome).toEqual({ answered: false, status: 429, code: 'TOKEN_BUDGET_EXCEEDED' });
    return i;
  }
  return max;
}

const chats = () => gateway.requests.filter((r) => r.path === '/v1/chat/completions');

const spent = (agent: TestAgent, peer: TestAgent) =>
  (agent.app.server.limits as LocalCallLimits).ledger.spent(peer.id);

describe('stream: a caller who closes at 97 % pays like one who reads to the end', () => {
  it.each([
    ['usage close to the sizes', SMALL_PROMPT, 350],
    ['a big system prompt (as on OpenClaw)', BIG_PROMPT, 10_000],
  ])('%s', async (_name, usage, tokensPerDay) => {
    gateway.set({ usage });
    const agent = await agents.start({ settings: { tokensPerDay } });
    const honest = await newPeer();
    const hangsUp = await newPeer();
    expect(await answeredBeforeRefusal(() => streamCall(agent, honest, 1))).toBe(5);
    const honestChats = chats().length;
    const hungUp = await answeredBeforeRefusal(() => streamCall(agent, hangsUp, 0.97));
    expect(hungUp).toBeGreaterThanOrEqual(5);
    expect(hungUp).toBeLessThanOrEqual(6);
    // Each one was charged about what it got: the prompt and 97 % of the reply.
    expect(spent(agent, hangsUp) / hungUp).toBeGreaterThan(0.9 * usage.total_tokens);
    // And the gateway's run was stopped every time the caller left (OpenClaw cancels it).
    const hangUps = chats().slice(honestChats);
    expect(hangUps).toHaveLength(hungUp);
    await until(() => hangUps.every((r) => r.aborted), 2000, 'every gateway call aborted');
  });
});

describe('sync: a caller who closes before the reply still pays the prompt', () => {
  it('is charged for every call the gateway had, and the gateway call is aborted', async () => {
    gateway.set({ behaviour: 'slow-first-byte', firstByteDelayMs: 5000, usage: null });
    // No call has reported a prompt here: each costs the default prompt (more than its 100 tokens of words).
    const agent = await agents.start({ settings: { tokensPerDay: 4 * DEFAULT_PROMPT_TOKENS - 50 } });
    const peer = await newPeer();
    const message = 'x'.repeat(400); // about 100 tokens of words
    let hungUp = 0;
    for (; hungUp < 20; hungUp++) {
      const env = envelope(peer.id, agent.id, 'sync', { message });
      const signed = sign(env, peer.app.keys.signer);
      const done = logged(agent, env.traceId);
      const controller = new AbortController();
      const asked = chats().length;
      const call = fetch(`${agent.url}${PATHS.sync}`, {
        method: 'POST',
        headers: signed.headers,
        body: signed.body,
        signal: controller.signal,
      });
      let refused = 0;
      void call.then(
        (response) => (refused = response.status),
        () => undefined,
      );
      await until(() => refused || chats().length > asked, 3000, 'the gateway call');
      if (refused) {
        expect(refused).toBe(429);
        break;
      }
      controller.abort();
      await call.catch(() => undefined);
      expect(await done).toMatchObject({ status: 499, message: 'caller disconnected' });
      await gateway.waitForAbort();
    }
    expect(hungUp).toBe(4);
    expect(spent(agent, peer)).toBe(4 * DEFAULT_PROMPT_TOKENS);
  });
});

describe('async: the task is charged whatever its caller does', () => {
  it('runs on after the 202 and is charged as a whole', async () => {
    const agent = await agents.start({ settings: { tokensPerDay: 100_000 } });
    const peer = await newPeer();
    const accepted = await post(
      agent.url,
      PATHS.async,
      sign(envelope(peer.id, agent.id, 'async', { message: MESSAGE }), peer.app.keys.signer),
    );
    expect(accepted.status, accepted.text).toBe(202);
    await until(() => spent(agent, peer) > 0, 3000, 'the task charged');
    expect(spent(agent, peer)).toBe(75);
  });

  it('cut short by a shutdown, is still charged, and the charge survives the restart', async () => {
    gateway.set({ behaviour: 'hang' });
    const agent = await agents.start({ settings: { tokensPerDay: 100 } });
    const peer = await newPeer();
    const task = (text: string) =>
      post(
        agent.url,
        PATHS.async,
        sign(envelope(peer.id, agent.id, 'async', { message: text }), peer.app.keys.signer),
      );
    const asked = chats().length;
    expect((await task('x'.repeat(400))).status).toBe(202);
    await until(() => chats().length > asked, 3000, 'the gateway call');
    await agent.stop();
    await gateway.waitForAbort();
    const again = await agents.start({ dataDir: agent.dataDir, settings: { tokensPerDay: 100 } });
    // No call has reported a prompt here: the default prompt, more than its 100 tokens of words.
    expect(spent(again, peer)).toBe(DEFAULT_PROMPT_TOKENS);
    expectError(
      await post(
        again.url,
        PATHS.async,
        sign(envelope(peer.id, again.id, 'async', { message: 'again' }), peer.app.keys.signer),
      ),
      429,
      'TOKEN_BUDGET_EXCEEDED',
    );
  });
});

// On Redis, usage is written in batches every 200 ms: a charge for a call cut short must reach Redis like any
// other, and one made while a replica shuts down must be written before it stops.
describe('replicas on Redis', () => {
  let redis: RedisServer;
  let admin: Redis;

  beforeAll(async () => {
    redis = await startRedisServer();
    admin = new Redis(redis.url);
  });

  const dirs: string[] = [];

  afterAll(async () => {
    admin.disconnect();
    await redis.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const budgetKey = (sender: string) =>
    `agent-bridge:budget:${new Date().toISOString().slice(0, 10)}:${sender}`;
  const charged = async (sender: string) => Number((await admin.get(budgetKey(sender))) ?? 0);

  async function replicas(tokensPerDay: number): Promise<[TestAgent, TestAgent]> {
    await admin.flushall();
    const keysDir = tempDir();
    dirs.push(keysDir);
    const keysFile = join(keysDir, 'keys.json');
    const start = () =>
      agents.start({
        settings: { redisUrl: redis.url, keysFile, publicUrl: 'http://127.0.0.1:9', tokensPerDay },
      });
    const first = await start();
    return [first, await start()];
  }

  it('a sender who hangs up at 97 % at one replica is refused at the other once its budget is spent', async () => {
    const [a, b] = await replicas(350);
    // A call read to its end at one replica: the prompt the gateway reported is the floor at both.
    expect(await streamCall(a, await newPeer(), 1)).toEqual({ answered: true });
    await until(async () => (await admin.get('agent-bridge:prompt-floor')) === '15', 3000, 'the floor');
    const hangsUp = await newPeer();
    let hungUp = 0;
    for (; hungUp < 20; hungUp++) {
      const before = await charged(hangsUp.id);
      const outcome = await streamCall(hungUp % 2 ? b : a, hangsUp, 0.97);
      if (!outcome.answered) {
        expect(outcome).toEqual({ answered: false, status: 429, code: 'TOKEN_BUDGET_EXCEEDED' });
        break;
      }
      // The charge for the call cut short reaches Redis (its next batch).
      await until(async () => (await charged(hangsUp.id)) > before, 3000, 'the charge written');
    }
    expect(hungUp).toBeGreaterThanOrEqual(5);
    expect(hungUp).toBeLessThanOrEqual(6);
    for (const replica of [a, b])
      expect(await streamCall(replica, hangsUp, 0.97)).toEqual({
        answered: false,
        status: 429,
        code: 'TOKEN_BUDGET_EXCEEDED',
      });
  });

  it('a task cut short by a replica shutting down is charged in Redis before it stops', async () => {
    gateway.set({ behaviour: 'hang' });
    const [a] = await replicas(100_000);
    const peer = await newPeer();
    const asked = chats().length;
    const accepted = await post(
      a.url,
      PATHS.async,
      sign(envelope(peer.id, a.id, 'async', { message: 'x'.repeat(400) }), peer.app.keys.signer),
    );
    expect(accepted.status, accepted.text).toBe(202);
    await until(() => chats().length > asked, 3000, 'the gateway call');
    await a.stop();
    // No call has reported a prompt here: the default prompt, more than its 100 tokens of words.
    expect(await charged(peer.id)).toBe(DEFAULT_PROMPT_TOKENS);
  });
});
