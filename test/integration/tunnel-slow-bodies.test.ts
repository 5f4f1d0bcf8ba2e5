// Issue 25, item 1: slow bodies on every path of the agent port, through a 10-socket loopback tunnel. The
// review's attack: twelve POSTs through the public address, each body trickled at a byte a second, kept up
// by opening a new one whenever one ends. Before the fix, on the A2A door (no key, under `pairing`: the 401
// went out at once, then the body was read on for 20 s), on /a2a/rest with a key, and on any other path
// (/nowhere: the 404 went out, the body was read on), the attack held all ten tunnel sockets, and the card
// and every honest call through the public address timed out. Now every path goes through one admission for
// bodies: a refusal that needs no body closes its connection at once, a body that is read holds one of a few
// slots (at most two per client address) at a minimum rate, and the honest callers are served throughout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appFetch } from '../../src/lib/http.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startTunnelServer, type TunnelServer } from '../fixtures/tunnel-server.js';
import { startAgent, type TestAgent } from '../helpers/agents.js';
import { envelope, sign } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';
import { rawRequest, type RawReply, type RawRequest } from '../helpers/raw-http.js';

const TUNNEL_SOCKETS = 10;
const ATTACKERS = 12;
const ATTACK_MS = 6000;

let gateway: GatewayDouble;
let tunnel: TunnelServer;
let agent: TestAgent;
let peer: TestAgent;
let keySecret: string;

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: 'gw-token' });
  // An honest call waits at most 3 s for a free tunnel socket, then gets 504 (the real server waits on).
  tunnel = await startTunnelServer({ maxConnCount: TUNNEL_SOCKETS, socketWaitMs: 3000 });
  const gatewaySettings = { gatewayUrl: gateway.url, gatewayToken: 'gw-token' };
  agent = await startAgent({
    settings: { ...gatewaySettings, tunnel: 'localtunnel', tunnelHost: tunnel.url, access: 'pairing' },
    tunnel: { checkIntervalMs: 60_000 },
    // The default body rules and listener deadlines: what a stranger meets in production.
    intake: {},
  });
  peer = await startAgent({ settings: gatewaySettings });
  await until(() => agent.app.tunnelState.status === 'online', 10_000, 'the tunnel online');
  await until(() => tunnel.clients().length === 1, 5000, 'tunnel sockets');
  // The honest SAMVAD caller is approved; the honest A2A caller holds a key.
  await agent.app.access.approve(peer.id);
  keySecret = (await agent.app.a2aKeys.issue({ name: 'Honest caller' })).secret;
}, 30_000);

afterAll(async () => {
  await agent.close();
  await peer.close();
  await tunnel.close();
  await gateway.close();
});

interface Attack {
  replies: RawReply[];
  /** Connections the agent closed without a whole reply. */
  cut: number;
  stop(): void;
}

/** Keeps `count` slow-body requests open to `path` through the public URL, a new one whenever one ends. */
function slowBodies(path: string, headers: Record<string, string> = {}, count = ATTACKERS): Attack {
  const { host } = new URL(agent.app.agentUrl);
  const attack: Attack = { replies: [], cut: 0, stop: () => undefined };
  const open = new Set<RawRequest>();
  let stopped = false;
  const start = () => {
    if (stopped) return;
    const request = rawRequest({
      port: tunnel.port,
      host,
      path,
      headers,
      declared: 200_000,
      initial: 1,
      trickleMs: 1000,
    });
    open.add(request);
    void request.reply.then((reply) => (reply ? attack.replies.push(reply) : attack.cut++));
    void request.closed.then(() => {
      open.delete(request);
      setTimeout(start, 50);
    });
  };
  for (let i = 0; i < count; i++) start();
  attack.stop = () => {
    stopped = true;
    for (const request of open) request.destroy();
  };
  return attack;
}

type Outcome = number | string;

async function status(request: () => Promise<Response>): Promise<Outcome> {
  try {
    const response = await request();
    await response.arrayBuffer();
    return response.status;
  } catch (error) {
    return (error as Error).name;
  }
}

/** The honest callers: the card, a signed SAMVAD chat and an A2A send with a key, through the public URL. */
function honestCalls(): Promise<Outcome[]> {
  const publicUrl = agent.app.agentUrl;
  const signed = sign(
    envelope(peer.id, agent.app.card().id, 'sync', { message: 'honest' }),
    peer.app.keys.signer,
  );
  const a2a = {
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: { message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'honest' }] } },
  };
  const timeout = () => AbortSignal.timeout(5000);
  return Promise.all([
    status(() => appFetch(`${publicUrl}/.well-known/agent.json`, { signal: timeout() })),
    status(() =>
      appFetch(`${publicUrl}/agent/message`, {
        method: 'POST',
        headers: signed.headers,
        body: signed.body,
        signal: timeout(),
      }),
    ),
    status(() =>
      appFetch(`${publicUrl}/a2a/jsonrpc`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'a2a-version': '1.0',
          authorization: `Bearer ${keySecret}`,
        },
        body: JSON.stringify(a2a),
        signal: timeout(),
      }),
    ),
  ]);
}

/** Runs the attack and the honest callers side by side; returns every honest answer that was not a 200. */
async function underAttack(attack: Attack): Promise<{ bad: Outcome[]; rounds: number; peakBytes: number }> {
  const bad: Outcome[] = [];
  let rounds = 0;
  let peakBytes = 0;
  const sampler = setInterval(
    () => (peakBytes = Math.max(peakBytes, agent.app.server.intake.bytesInFlight)),
    5,
  );
  try {
    await new Promise((resolve) => setTimeout(resolve, 1500)); // the attack in place
    const end = Date.now() + ATTACK_MS;
    while (Date.now() < end) {
      const answers = await honestCalls();
      rounds++;
      bad.push(...answers.filter((answer) => answer !== 200));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    clearInterval(sampler);
    attack.stop();
  }
  return { bad, rounds, peakBytes };
}

describe('slow bodies through a 10-socket tunnel cannot take the public address, on any path', () => {
  it('the A2A door without a key (allowlist): the 401 is answered and the connection closed, not read on', async () => {
    // Under pairing a caller without a key knocks: its body is read, as a key holder's (the next test).
    agent.app.updateSettings({ access: 'allowlist' });
    const attack = slowBodies('/a2a/jsonrpc', { 'a2a-version': '1.0' });
    const { bad, rounds } = await underAttack(attack).finally(() =>
      agent.app.updateSettings({ access: 'pairing' }),
    );
    expect(bad).toEqual([]);
    expect(rounds).toBeGreaterThanOrEqual(5);
    expect(attack.replies.length).toBeGreaterThan(ATTACKERS);
    expect(new Set(attack.replies.map((reply) => reply.status))).toEqual(new Set([401]));
    // Answered at once, though a byte of each body comes a second (the tunnel passes no Connection header on).
    expect(Math.max(...attack.replies.map((reply) => reply.afterMs))).toBeLessThan(1000);
  });

  it('the A2A HTTP+JSON door with a key, or knocking without one (pairing): the body is read under the intake (slots per address, the minimum rate)', async () => {
    const keyed = slowBodies(
      '/a2a/rest/message:send',
      { authorization: `Bearer ${keySecret}` },
      ATTACKERS / 2,
    );
    const knocking = slowBodies('/a2a/rest/message:send', {}, ATTACKERS / 2);
    const attack: Attack = {
      get replies() {
        return [...keyed.replies, ...knocking.replies];
      },
      get cut() {
        return keyed.cut + knocking.cut;
      },
      stop: () => {
        keyed.stop();
        knocking.stop();
      },
    };
    const { bad, peakBytes } = await underAttack(attack);
    expect(bad).toEqual([]);
    // Turned away at once (503: every slot this address may hold is taken) or cut as too slow (408).
    const statuses = new Set(attack.replies.map((reply) => reply.status));
    expect(statuses.size).toBeGreaterThan(0);
    expect([...statuses].every((s) => s === 503 || s === 408)).toBe(true);
    // Each declared 200 KB body is counted whole before a byte is read: never more than the budget.
    expect(peakBytes).toBeLessThanOrEqual(agent.app.server.intake.options.budgetBytes);
  });

  it('any other path (/nowhere): the 404 is answered and the connection closed', async () => {
    const attack = slowBodies('/nowhere');
    const { bad } = await underAttack(attack);
    expect(bad).toEqual([]);
    expect(new Set(attack.replies.map((reply) => reply.status))).toEqual(new Set([404]));
    expect(Math.max(...attack.replies.map((reply) => reply.afterMs))).toBeLessThan(1000);
  });

  it('many callers behind the tunnel: each address holds at most two body slots, the others still get theirs', async () => {
    const attack = slowBodies('/a2a/rest/message:send', {
      authorization: `Bearer ${keySecret}`,
      'x-forwarded-for': '203.0.113.66',
    });
    // The fixture appends the caller's own address (127.0.0.1) last: that is the address counted.
    const { bad } = await underAttack(attack);
    expect(bad).toEqual([]);
    expect(attack.replies.some((reply) => reply.status === 503)).toBe(true);
  });

  it('subscriptions: one key with one slow task opens 12 streams on it; it holds two, the tunnel stays open to everyone', async () => {
    gateway.set({ thinkMs: (message) => (message === 'think long' ? 20_000 : 0) });
    const publicUrl = agent.app.agentUrl;
    const headers = {
      'content-type': 'application/json',
      'a2a-version': '1.0',
      authorization: `Bearer ${keySecret}`,
    };
    const rpc = (method: string, params: object, signal?: AbortSignal) =>
      appFetch(`${publicUrl}/a2a/jsonrpc`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        signal,
      });
    const started = (await (
      await rpc('SendMessage', {
        message: { messageId: 'm-slow', role: 'ROLE_USER', parts: [{ text: 'think long' }] },
        configuration: { returnImmediately: true },
      })
    ).json()) as { result: { task: { id: string } } };
    const taskId = started.result.task.id;
    const streams = new AbortController();
    const opened = await Promise.all(
      Array.from({ length: 12 }, () =>
        rpc('SubscribeToTask', { id: taskId }, streams.signal).then(
          (response) => response.status,
          (error: Error) => error.name,
        ),
      ),
    );
    try {
      // Two streams on one task (the per-task cap); the rest refused at once with 429.
      expect(opened.filter((s) => s === 200)).toHaveLength(2);
      expect(opened.filter((s) => s === 429)).toHaveLength(10);
      const bad: Outcome[] = [];
      for (let round = 0; round < 5; round++) bad.push(...(await honestCalls()).filter((s) => s !== 200));
      expect(bad).toEqual([]);
    } finally {
      streams.abort();
      gateway.set({ thinkMs: () => 0 });
    }
  });
});
