// Faults between the agent and its tunnel server, with the real localtunnel client against the loopback
// tunnel server: the server dying and coming back (same id, or a different one while the agent is
// registered), hanging, refusing the subdomain, handing out another id, dropping its sockets. Throughout,
// the agent keeps serving on loopback, the tunnel state says what is going on, and nothing crashes (vitest
// fails the run on any unhandled error or rejection).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppOptions } from '../../src/app.js';
import { appFetch } from '../../src/lib/http.js';
import type { RegistryState } from '../../src/registry/registration.js';
import { backoffDelay, type TunnelState } from '../../src/tunnel/state.js';
import type { AddressChange } from '../../src/tunnel/supervisor.js';
import type { Settings } from '../../src/settings/schema.js';
import { startRegistryDouble, type RegistryDouble } from '../fixtures/registry-double.js';
import { startTunnelServer, type TunnelServer } from '../fixtures/tunnel-server.js';
import { startAgent, type TestAgent } from '../helpers/agents.js';
import { startCountingProxy, type CountingProxy } from '../helpers/counting-proxy.js';
import { until } from '../helpers/polling.js';

const BACKOFF = { initialMs: 100, maxMs: 400 };
const STEP_TIMEOUT_MS = 1000;
/** The target: back online within the backoff schedule plus 2 s. */
const RECONNECT_BUDGET_MS = BACKOFF.maxMs + 2000;

type Reconnecting = Extract<TunnelState, { status: 'reconnecting' }>;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tunnelServer(): Promise<TunnelServer> {
  const server = await startTunnelServer();
  cleanups.push(() => server.close());
  return server;
}

async function registryDouble(): Promise<RegistryDouble> {
  const registry = await startRegistryDouble();
  cleanups.push(() => registry.close());
  return registry;
}

async function countingProxy(target: string): Promise<CountingProxy> {
  const proxy = await startCountingProxy(target);
  cleanups.push(() => proxy.close());
  return proxy;
}

interface Watched {
  agent: TestAgent;
  states: TunnelState[];
  addresses: AddressChange[];
  registry: RegistryState[];
}

/** An agent tunnelled through `tunnelHost`, with short timings, and every tunnel/address/registry event. */
async function tunnelledAgent(
  tunnelHost: string,
  settings: Partial<Settings> = {},
  tunnel: AppOptions['tunnel'] = {},
): Promise<Watched> {
  const agent = await startAgent({
    settings: { tunnel: 'localtunnel', tunnelHost, ...settings },
    tunnel: { backoff: BACKOFF, stepTimeoutMs: STEP_TIMEOUT_MS, checkIntervalMs: 60_000, ...tunnel },
  });
  cleanups.push(() => agent.close());
  const watched: Watched = { agent, states: [], addresses: [], registry: [] };
  // The tunnel connects asynchronously: these listeners are in place before its first answer.
  agent.app.on('tunnel', (state) => watched.states.push(state));
  agent.app.on('address', (change) => watched.addresses.push(change));
  agent.app.on('registry', (state) => watched.registry.push(state));
  return watched;
}

const isOnline = (agent: TestAgent) => agent.app.tunnelState.status === 'online';

function reconnectingStates(states: TunnelState[]): Reconnecting[] {
  return states.filter((s): s is Reconnecting => s.status === 'reconnecting');
}

async function localHealth(agent: TestAgent): Promise<number> {
  const response = await appFetch(`${agent.app.localUrl}/agent/health`);
  await response.arrayBuffer();
  return response.status;
}

async function cardAt(url: string): Promise<{ status: number; card?: { id: string; url: string } }> {
  const response = await appFetch(`${url}/.well-known/agent.json`, {
    headers: { 'cache-control': 'no-cache' },
  });
  if (!response.ok) {
    await response.arrayBuffer();
    return { status: response.status };
  }
  return { status: response.status, card: (await response.json()) as { id: string; url: string } };
}

const idOf = (url: string) => `agent://${new URL(url).host}`;

describe('tunnel server stopped and restarted', () => {
  it('reconnects within the backoff schedule + 2 s on the same URL; loopback serves throughout', async () => {
    const server = await tunnelServer();
    const { agent, states, addresses } = await tunnelledAgent(server.url);
    await until(() => isOnline(agent), 5000, 'online');
    const url = agent.app.agentUrl;
    expect(url).toMatch(/^http:\/\/[a-z0-9]+\.localhost:\d+$/);
    expect(addresses).toHaveLength(1);

    await server.stop();
    await until(() => reconnectingStates(states).length >= 2, 5000, 'two reconnect attempts');
    const first = reconnectingStates(states)[0]!;
    expect(first.attempt).toBeGreaterThanOrEqual(2);
    expect(Number.isNaN(Date.parse(first.nextTryAt))).toBe(false);
    // The tunnel's sockets failing, or (when it was still running) the first reachability check.
    expect(first.lastError).toMatch(/refused|unreachable|not reachable|closed/);
    // While the server is down, attempts fail fast on the dead port and say so.
    expect(reconnectingStates(states)[1]!.lastError).toMatch(
      /tunnel server http:\/\/127\.0\.0\.1:\d+ is unreachable \(ECONNREFUSED\)/,
    );

    // The agent's own endpoints keep answering, and its id does not flap while it reconnects.
    expect(await localHealth(agent)).toBe(200);
    expect((await cardAt(agent.app.localUrl)).card?.id).toBe(idOf(url));

    const restartedAt = Date.now();
    await server.start();
    await until(() => isOnline(agent), RECONNECT_BUDGET_MS + 1000, 'online again');
    expect(Date.now() - restartedAt).toBeLessThan(RECONNECT_BUDGET_MS);

    // The same id was asked for again and given: the URL, the card and the id are unchanged.
    expect(agent.app.agentUrl).toBe(url);
    expect(addresses).toHaveLength(1);
    await until(async () => (await cardAt(url)).status === 200, 3000, 'card through the tunnel');
    const { card } = await cardAt(url);
    expect(card).toMatchObject({ id: idOf(url), url });
    expect(agent.app.card().id).toBe(idOf(url));
    expect(states.some((s) => s.status === 'failed' || s.status === 'off')).toBe(false);
  });

  it('follows a different id after the restart: address event, new card, and re-registration by itself', async () => {
    const server = await tunnelServer();
    const registry = await registryDouble();
    const {
      agent,
      addresses,
      registry: registryStates,
    } = await tunnelledAgent(server.url, {
      registryUrl: registry.url,
      // The restarted server never gives the name back: held out for 1 s, not the default minute.
      tunnelNameHoldSeconds: 1,
    });
    await until(() => isOnline(agent), 5000, 'online');
    const before = agent.app.agentUrl;
    await agent.app.register();
    expect(registry.records.get(before)).toMatchObject({ id: idOf(before) });
    registryStates.length = 0;

    server.handOutDifferentIds(true);
    await server.stop();
    const restartedAt = Date.now();
    await server.start();
    await until(
      () => isOnline(agent) && agent.app.agentUrl !== before,
      RECONNECT_BUDGET_MS + 1000,
      'new URL',
    );
    expect(Date.now() - restartedAt).toBeLessThan(RECONNECT_BUDGET_MS);

    const after = agent.app.agentUrl;
    expect(after).toMatch(/^http:\/\/[a-z0-9]+\.localhost:\d+$/);
    const change = addresses.at(-1)!;
    expect(change).toMatchObject({ url: after, previous: before });
    expect(change.note).toContain(`asked for "${new URL(before).hostname.split('.')[0]}"`);

    // The card follows: served through the new URL with the new identity.
    expect(agent.app.card()).toMatchObject({ id: idOf(after), url: after });
    expect((await cardAt(after)).card).toMatchObject({ id: idOf(after), url: after });

    // Registered before, so the new URL is registered without being asked, once.
    await until(
      () => agent.app.registrar.current.status === 'registered' && agent.app.registrar.record?.url === after,
      5000,
      're-registration',
    );
    expect(registry.records.get(after)).toMatchObject({ id: idOf(after), url: after });
    expect(registry.calls.map((c) => c.url)).toEqual([before, after]);
    expect(registryStates.map((s) => s.status)).toEqual(['registering', 'registered']);
    expect(agent.app.registrar.current).not.toHaveProperty('lastError');
    const saved = JSON.parse(readFileSync(join(agent.dataDir, 'registration.json'), 'utf8')) as {
      url: string;
      id: string;
    };
    expect(saved).toMatchObject({ url: after, id: idOf(after), registry: registry.url });
  });
});

describe('a hung tunnel server', () => {
  it('never wedges the app: reconnecting with a timeout, online again once it answers', async () => {
    const server = await tunnelServer();
    const { agent, states } = await tunnelledAgent(server.url);
    await until(() => isOnline(agent), 5000, 'online');
    const url = agent.app.agentUrl;

    server.hang(true);
    await server.stop();
    await server.start();
    const timedOut = () =>
      reconnectingStates(states).find((s) => /did not answer within 1 s/.test(s.lastError));
    // The supervisor's pace is tested elsewhere; here only that a hung server ends in a timeout error, which on
    // a machine busy with the whole suite once took longer than two backoffs.
    await until(timedOut, 2 * (STEP_TIMEOUT_MS + BACKOFF.maxMs * 2) + 2000, 'a timeout error');
    expect(timedOut()!.lastError).toBe(`tunnel server ${server.url} did not answer within 1 s`);
    expect(await localHealth(agent)).toBe(200);
    // It keeps trying: a fresh attempt after the timed-out one.
    const attempts = () => states.filter((s) => s.status === 'connecting').length;
    const seen = attempts();
    await until(() => attempts() > seen, STEP_TIMEOUT_MS + BACKOFF.maxMs + 1000, 'another attempt');

    const answeringAt = Date.now();
    server.hang(false);
    // At worst one hung attempt runs out its step timeout, then the next try comes within the backoff.
    await until(() => isOnline(agent), STEP_TIMEOUT_MS + RECONNECT_BUDGET_MS, 'online again');
    expect(Date.now() - answeringAt).toBeLessThan(STEP_TIMEOUT_MS + RECONNECT_BUDGET_MS);
    expect(agent.app.agentUrl).toBe(url);
    await until(async () => (await cardAt(url)).status === 200, 3000, 'card through the tunnel');
  });
});

describe('a refused subdomain', () => {
  it('reconnects with a message naming the refusal, paced by the backoff, and no crash', async () => {
    const server = await tunnelServer();
    server.refuseSubdomains(true);
    const control = await countingProxy(server.url);
    const { agent, states } = await tunnelledAgent(
      control.url,
      { subdomain: 'myagent' },
      { random: () => 1 }, // no jitter: the schedule is exactly 100, 200, 400, 400 ms
    );
    await until(() => control.requests.length >= 5, 5000, 'five control requests');
    const last = reconnectingStates(states).at(-1)!;
    expect(last.lastError).toBe(
      'tunnel server refused (HTTP 403: subdomain unavailable); subdomain "myagent" may be taken or not allowed',
    );
    expect(await localHealth(agent)).toBe(200);

    // One control request per attempt (localtunnel's own client would retry every second forever), each
    // asking for the subdomain, spaced at least by the backoff.
    const requests = control.requests.slice(0, 5);
    expect(requests.map((r) => r.path)).toEqual(Array(5).fill('/myagent'));
    const gaps = requests.slice(1).map((r, i) => r.at - requests[i]!.at);
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(backoffDelay(i + 1, () => 1, 100, 400) - 5));
    const attempts = reconnectingStates(states).map((s) => s.attempt);
    expect(attempts.slice(0, 4)).toEqual([2, 3, 4, 5]);
    // Exactly one control request per attempt: every failed one has its reconnecting state (one may be in
    // flight right now).
    const [sent, failed] = [control.requests.length, reconnectingStates(states).length];
    expect(sent - failed).toBeGreaterThanOrEqual(0);
    expect(sent - failed).toBeLessThanOrEqual(1);

    server.refuseSubdomains(false);
    await until(() => isOnline(agent), RECONNECT_BUDGET_MS, 'online once allowed');
    expect(agent.app.agentUrl).toBe(server.publicUrlFor('myagent'));
  });
});

describe('a different id handed out than asked for', () => {
  it('reports the address change with a note, and the card takes the id actually handed out', async () => {
    const server = await tunnelServer();
    server.handOutDifferentIds(true);
    const { agent, addresses } = await tunnelledAgent(server.url, { subdomain: 'wanted' });
    await until(() => isOnline(agent), 5000, 'online');
    const url = agent.app.agentUrl;
    expect(url).not.toBe(server.publicUrlFor('wanted'));
    expect(addresses).toEqual([
      {
        url,
        previous: undefined,
        note: `asked for "wanted" but the server handed out ${url} (subdomain taken?)`,
      },
    ]);
    expect((await cardAt(url)).card).toMatchObject({ id: idOf(url), url });
  });

  it('does the same when another agent already holds the subdomain', async () => {
    const server = await tunnelServer();
    const first = await tunnelledAgent(server.url, { subdomain: 'shared' });
    await until(() => isOnline(first.agent), 5000, 'first online');
    expect(first.agent.app.agentUrl).toBe(server.publicUrlFor('shared'));
    expect(first.addresses[0]?.note).toBeUndefined();

    const second = await tunnelledAgent(server.url, { subdomain: 'shared' });
    await until(() => isOnline(second.agent), 5000, 'second online');
    const url = second.agent.app.agentUrl;
    expect(url).not.toBe(server.publicUrlFor('shared'));
    expect(second.addresses[0]?.note).toMatch(/^asked for "shared" but the server handed out /);
    // Each public URL reaches its own agent.
    expect((await cardAt(server.publicUrlFor('shared'))).card?.id).toBe(first.agent.app.card().id);
    expect((await cardAt(url)).card?.id).toBe(second.agent.app.card().id);
  });
});

describe('dropped tunnel sockets', () => {
  it('keeps serving public requests on the same URL: the real client reopens its sockets', async () => {
    const server = await tunnelServer();
    // No periodic check here: this is about the client, which must heal by itself.
    const { agent, states } = await tunnelledAgent(server.url);
    await until(() => isOnline(agent), 5000, 'online');
    const url = agent.app.agentUrl;
    expect((await cardAt(url)).status).toBe(200);
    // The check run on coming online goes through the tunnel too: let it finish before breaking things.
    await until(() => server.requests.length >= 2, 2000, 'the first check and our request');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const seen = states.length;

    for (let round = 0; round < 3; round++) {
      server.dropSockets();
      await until(async () => (await cardAt(url)).status === 200, 3000, `card after drop ${round}`);
      // Once the sockets are back, requests keep working one after another.
      for (let i = 0; i < 5; i++) expect((await cardAt(url)).card?.id).toBe(idOf(url));
      expect(await localHealth(agent)).toBe(200);
    }
    expect(states.slice(seen)).toEqual([]);
    expect(agent.app.tunnelState).toMatchObject({ status: 'online', url });
  });

  it('with periodic checks: a check that fails during the drop reconnects, and the tunnel comes back', async () => {
    const server = await tunnelServer();
    const { agent, states, addresses } = await tunnelledAgent(server.url, {}, { checkIntervalMs: 100 });
    await until(() => isOnline(agent), 5000, 'online');

    for (let round = 0; round < 3; round++) {
      server.dropSockets();
      // Enough for a few checks to run, whatever they find.
      await new Promise((resolve) => setTimeout(resolve, 250));
      await until(() => isOnline(agent), RECONNECT_BUDGET_MS, `online after drop ${round}`);
      const url = agent.app.agentUrl;
      await until(async () => (await cardAt(url)).card?.id === idOf(url), 3000, `card after drop ${round}`);
      expect(await localHealth(agent)).toBe(200);
    }
    expect(states.some((s) => s.status === 'failed' || s.status === 'off')).toBe(false);
    // A reconnect within the server's grace period may get another id (the old one is still held): then the
    // change was announced, from the previous URL.
    for (const [i, change] of addresses.entries()) {
      if (i > 0) expect(change.previous).toBe(addresses[i - 1]!.url);
    }
    expect(addresses.at(-1)!.url).toBe(agent.app.agentUrl);
  });
});
