// Issue 25: the public address over time. Callers come when they come, so this calls through the loopback
// tunnel (the real localtunnel client; a server that keeps its sockets as localtunnel-server does, holds a
// live name for its client and frees it a second after the last socket closes) with idle gaps longer than
// every deadline on the agent port, for a minute, and across a restart of the agent. The port's deadlines
// are shortened (headers 1 s, request 2 s, keep-alive 3 s; the gaps are 4 s) so a minute holds many gaps;
// the same holds at the production deadlines (10 s, 20 s, 65 s): `npm run soak:tunnel` runs that for as long
// as you like (see bench/README.md). Before the fix, every idle tunnel socket collected an unrequested
// `408 Request Timeout` at the headers deadline, the tunnel server handed it to the next caller, the
// reachability check saw it, reconnected, and the agent's id changed.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appFetch } from '../../src/lib/http.js';
import type { TunnelState } from '../../src/tunnel/state.js';
import type { AddressChange } from '../../src/tunnel/supervisor.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startTunnelServer, type TunnelServer } from '../fixtures/tunnel-server.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { envelope, sign } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';

const LISTENER = { headersTimeoutMs: 1000, requestTimeoutMs: 2000, keepAliveTimeoutMs: 3000 };
/** Longer than every deadline above. */
const GAP_MS = 4000;
const FIRST_RUN_MS = 48_000;
const SECOND_RUN_MS = 16_000;

let gateway: GatewayDouble;
let tunnel: TunnelServer;
let peer: TestAgent;
const dataDir = tempDir();

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: 'gw-token' });
  // localtunnel.me's 10 sockets; a caller with no free socket waits (the real server waits for ever).
  tunnel = await startTunnelServer({ maxConnCount: 10, socketWaitMs: 10_000 });
  peer = await startAgent({ settings: { gatewayUrl: gateway.url, gatewayToken: 'gw-token' } });
});

afterAll(async () => {
  await peer.close();
  await tunnel.close();
  await gateway.close();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Run {
  agent: TestAgent;
  states: TunnelState[];
  addresses: AddressChange[];
}

/** The agent on its data dir (kept across runs), with production tunnel timings but for the check interval. */
async function run(): Promise<Run> {
  const agent = await startAgent({
    dataDir,
    settings: {
      gatewayUrl: gateway.url,
      gatewayToken: 'gw-token',
      tunnel: 'localtunnel',
      tunnelHost: tunnel.url,
    },
    listener: { ...LISTENER, checkIntervalMs: 250 },
    // The supervisor's own check runs every 3 s: through idle sockets, as often as the callers below.
    tunnel: { checkIntervalMs: 3000 },
  });
  const states: TunnelState[] = [];
  const addresses: AddressChange[] = [];
  agent.app.on('tunnel', (state) => states.push(state));
  agent.app.on('address', (change) => addresses.push(change));
  await until(() => reachable(agent), 15_000, 'the tunnel online and reachable');
  return { agent, states, addresses };
}

function reachable(agent: TestAgent): boolean {
  const state = agent.app.tunnelState;
  return state.status === 'online' && state.reachability?.state === 'reachable';
}

/** What callers do after a gap: the card, a signed chat and health, at once, through the public URL. */
async function callers(agent: TestAgent): Promise<string[]> {
  const publicUrl = agent.app.agentUrl;
  const answer = async (what: string, request: Promise<Response>) => {
    try {
      const response = await request;
      const text = await response.text();
      return `${what} ${response.status}${response.status === 200 ? '' : `: ${text.slice(0, 80)}`}`;
    } catch (error) {
      return `${what} ${(error as Error).message}`;
    }
  };
  const signed = sign(
    envelope(peer.id, agent.app.card().id, 'sync', { message: 'after a quiet while' }),
    peer.app.keys.signer,
  );
  return Promise.all([
    answer('card', appFetch(`${publicUrl}/.well-known/agent.json`, { signal: AbortSignal.timeout(8000) })),
    answer(
      'chat',
      appFetch(`${publicUrl}/agent/message`, {
        method: 'POST',
        headers: signed.headers,
        body: signed.body,
        signal: AbortSignal.timeout(8000),
      }),
    ),
    answer('health', appFetch(`${publicUrl}/agent/health`, { signal: AbortSignal.timeout(8000) })),
  ]);
}

/** Calls after every gap for `ms`; returns every answer that was not a 200. */
async function callAcrossGaps(agent: TestAgent, ms: number): Promise<{ rounds: number; bad: string[] }> {
  const bad: string[] = [];
  let rounds = 0;
  const end = Date.now() + ms;
  while (Date.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, GAP_MS));
    const answers = await callers(agent);
    rounds++;
    bad.push(...answers.filter((answer) => !/ 200$/.test(answer)).map((a) => `round ${rounds}: ${a}`));
  }
  return { rounds, bad };
}

describe('the public address over time', () => {
  it('answers every call after idle gaps longer than every deadline, for a minute and across a restart, under one id', async () => {
    const first = await run();
    const publicUrl = first.agent.app.agentUrl;
    const id = first.agent.app.card().id;
    expect(id).toBe(`agent://${new URL(publicUrl).host}`);

    const before = await callAcrossGaps(first.agent, FIRST_RUN_MS);
    expect(before.bad).toEqual([]);
    expect(before.rounds).toBeGreaterThanOrEqual(10);
    // Never a reconnect, never another address: the supervisor's own checks passed all along.
    expect(first.states.filter((s) => s.status === 'reconnecting')).toEqual([]);
    expect(first.addresses).toEqual([{ url: publicUrl, previous: undefined }]);
    expect(first.agent.app.card().id).toBe(id);
    // Health says what the check measured.
    const health = (await (await appFetch(`${first.agent.url}/agent/health`)).json()) as Record<
      string,
      unknown
    >;
    expect(health).toMatchObject({ status: 'ok', publicAddress: 'reachable', agent: id });

    await first.agent.stop();
    const second = await run();
    expect(second.agent.app.agentUrl).toBe(publicUrl);
    expect(second.agent.app.card().id).toBe(id);
    const after = await callAcrossGaps(second.agent, SECOND_RUN_MS);
    expect(after.bad).toEqual([]);
    // Restarted at once, the server may still hold the name for the old process's sockets for a second: the
    // agent asks for it again rather than take another (and the id with it).
    const name = new URL(publicUrl).hostname.split('.')[0];
    const otherwise = second.states.filter((s) => s.status === 'reconnecting' && s.keepingName !== name);
    expect(otherwise).toEqual([]);
    expect(second.addresses).toEqual([{ url: publicUrl, previous: undefined }]);
    await second.agent.stop();
  }, 120_000);
});
