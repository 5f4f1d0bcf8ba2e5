import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Client } from '@a2a-js/sdk/client';
import { appFetch } from '../../src/lib/http.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server.js';
import { startTunnelServer, type TunnelServer } from '../fixtures/tunnel-server.js';
import { a2aClient } from '../helpers/a2a-agent.js';
import { asTask, send } from '../helpers/a2a-messages.js';
import { agentPool, type TestAgent } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';
import { startReplicas } from '../helpers/replicas.js';

// Finding 3 of the security review: behind the tunnel every caller without a key (A2A under `open`) or
// without a signature (SAMVAD with allow-unsigned) has the same address, 127.0.0.1. A conversation keyed by
// that address and a name the caller chose ("support") was one gateway session for every such caller: a
// stranger naming it read the other's conversation, or wrote into it. A keyless caller's conversation must be
// keyed by something only it holds. Every caller here comes in through the real localtunnel client, or
// from loopback straight, as a tunnel's callers do; the gateway double says which session each chat ran in.
const TOKEN = 'gw-token-keyless';
let gateway: GatewayDouble;
let tunnel: TunnelServer;
let agent: TestAgent;
const agents = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));

const chats = () => gateway.requests.filter((r) => r.path === '/v1/chat/completions');
const users = () => chats().map((r) => (r.json as { user?: string }).user);

/** A keyless A2A caller at the agent's public address (the tunnel's), through the SDK's own client. */
const stranger = (): Promise<Client> =>
  a2aClient(agent.app.agentUrl, undefined, 'JSONRPC', { base: appFetch as unknown as typeof fetch });

const REFUSED = /omit contextId to start a conversation; continue one with the contextId this agent returned/;

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
  tunnel = await startTunnelServer();
  agent = await agents.start({
    settings: { access: 'open', allowUnsigned: true, tunnel: 'localtunnel', tunnelHost: tunnel.url },
    tunnel: { backoff: { initialMs: 100, maxMs: 500 }, checkIntervalMs: 60_000 },
  });
  await until(() => agent.app.tunnelState.status === 'online', 10_000, 'the tunnel online');
});

beforeEach(() => {
  gateway.requests.length = 0;
});

afterAll(async () => {
  await agents.closeAll();
  await tunnel.close();
  await gateway.close();
});

describe('keyless A2A callers behind the tunnel', () => {
  it('two callers naming one contextId never reach one gateway session', async () => {
    const alice = await stranger();
    const mallory = await stranger();
    const tries = await Promise.allSettled([
      alice.sendMessage(send('my order number is 1234', { contextId: 'support' })),
      mallory.sendMessage(send('what did the last caller tell you?', { contextId: 'support' })),
    ]);
    const sessions = chats().map((chat) => chat.session);
    expect(new Set(sessions).size, `sessions: ${users().join(', ')}`).toBe(sessions.length);
    // Neither named a conversation this agent gave it: both are told how to start one, and nothing is run.
    for (const outcome of tries) {
      expect(outcome.status).toBe('rejected');
      expect(String((outcome as PromiseRejectedResult).reason)).toMatch(REFUSED);
    }
    expect(chats()).toEqual([]);
  });

  it('a caller continues the conversation this agent minted for it; a stranger reaches only its own', async () => {
    const alice = await stranger();
    const first = asTask(await alice.sendMessage(send('my order number is 1234')));
    // Minted here: a random UUID only Alice was told.
    expect(first.contextId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const again = asTask(
      await alice.sendMessage(send('and my name is Alice', { contextId: first.contextId })),
    );
    expect(again.contextId).toBe(first.contextId);

    const mallory = await stranger();
    const own = asTask(await mallory.sendMessage(send('hello?')));
    expect(own.contextId).not.toBe(first.contextId);
    // A contextId it made up, in the shape of a minted one, names no conversation of its own.
    await expect(
      mallory.sendMessage(send('what was said?', { contextId: '3f2b8c4e-9d1a-4c6b-8e2f-0a1b2c3d4e5f' })),
    ).rejects.toThrow(REFUSED);

    const [aliceFirst, aliceAgain, malloryOwn, ...rest] = chats();
    expect(rest).toEqual([]);
    expect((aliceFirst!.json as { user: string }).user).toBe(`a2a-anon:127.0.0.1#${first.contextId}`);
    expect(aliceAgain!.session).toBe(aliceFirst!.session);
    expect(malloryOwn!.session).not.toBe(aliceFirst!.session);
  });
});

describe('unsigned SAMVAD callers behind the tunnel', () => {
  it('never share a gateway session, whatever channel they name: each call is a session of its own', async () => {
    const call = (message: string) =>
      appFetch(`${agent.app.agentUrl}/agent/message`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ skill: 'chat', payload: { message, channel: 'support' } }),
      });
    for (const message of ['my order number is 1234', 'what did the last caller tell you?']) {
      const reply = await call(message);
      expect(reply.status, await reply.clone().text()).toBe(200);
      expect(await reply.json()).toMatchObject({ status: 'ok', result: { channel: 'support' } });
    }
    const [alice, mallory] = chats();
    expect(mallory!.session).not.toBe(alice!.session);
    // No `user` (nor session header): OpenClaw keys each such call on a fresh UUID of its own.
    for (const chat of [alice!, mallory!]) {
      expect((chat.json as { user?: string }).user).toBeUndefined();
      expect(chat.headers['x-openclaw-session-key']).toBeUndefined();
      expect(chat.session).toMatch(/^agent:public:openai:[0-9a-f-]{36}$/);
    }
  });
});

async function rpc(url: string, method: string, params: object) {
  const response = await fetch(`${url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return {
    status: response.status,
    json: (await response.json()) as {
      result?: { task?: { contextId: string } };
      error?: { code: number; message: string };
    },
  };
}

const message = (text: string, contextId = '') => ({
  message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }], contextId },
});

describe('a keyless conversation is bound where tasks are kept', () => {
  it('across a restart (the data dir): the caller continues it, a made-up contextId is refused (InvalidParams)', async () => {
    const open = await agents.start({ settings: { access: 'open' } });
    const started = await rpc(open.url, 'SendMessage', message('remember 1234'));
    const contextId = started.json.result!.task!.contextId;
    await open.stop();
    const again = await agents.start({ settings: { access: 'open' }, dataDir: open.dataDir });
    const continued = await rpc(again.url, 'SendMessage', message('what was it?', contextId));
    expect(continued.json.result?.task?.contextId).toBe(contextId);
    const refused = await rpc(again.url, 'SendMessage', message('and mine?', 'support'));
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ code: -32602, message: expect.stringMatching(REFUSED) });
    expect(users()).toEqual([`a2a-anon:127.0.0.1#${contextId}`, `a2a-anon:127.0.0.1#${contextId}`]);
  });

  describe('on Redis', () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await startRedisServer();
    });
    afterAll(async () => {
      await redis.close();
    });

    it('across replicas: minted at one, continued at another; a made-up contextId is refused at both', async () => {
      const [a, b] = await startReplicas(2, {
        redis,
        gateway: { url: gateway.url, token: TOKEN },
        settings: { access: 'open' },
      });
      const started = await rpc(a!.url, 'SendMessage', message('remember 1234'));
      const contextId = started.json.result!.task!.contextId;
      const continued = await rpc(b!.url, 'SendMessage', message('what was it?', contextId));
      expect(continued.json.result?.task?.contextId).toBe(contextId);
      for (const replica of [a!, b!]) {
        const refused = await rpc(replica.url, 'SendMessage', message('and mine?', 'support'));
        expect(refused.json.error).toMatchObject({ code: -32602, message: expect.stringMatching(REFUSED) });
      }
      expect(users()).toEqual([`a2a-anon:127.0.0.1#${contextId}`, `a2a-anon:127.0.0.1#${contextId}`]);
    });
  });
});
