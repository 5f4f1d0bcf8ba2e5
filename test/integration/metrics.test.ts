// GET /metrics on the console's loopback listener (issue 10): the console token (or --metrics-no-auth, still
// behind the Host and Origin checks), the counters after real signed calls from real agents, the gauges read
// at scrape time, and never on the agent port or through the tunnel.
import { rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_VERSION } from '../../src/app.js';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import { appFetch } from '../../src/lib/http.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startTunnelServer, type TunnelServer } from '../fixtures/tunnel-server.js';
import { agentPool, tempDir, type TestAgent, type TestAgentOptions } from '../helpers/agents.js';
import { PATHS, envelope, post, sign, type Reply } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';
import { nonZero, parseMetrics, value } from '../helpers/prometheus.js';
import type { Envelope, Mode } from '../../src/protocol/index.js';

const TOKEN = 'gw-token-metrics';
const PROMETHEUS_TYPE = new Registry().contentType;

let gateway: GatewayDouble;
/** The consoles' (empty) UI folder, and where no OpenClaw config is. */
let scratch: string;
const pool = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));
const consoles: ConsoleHandle[] = [];

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
  scratch = tempDir('metrics-test-');
});

afterAll(async () => {
  for (const con of consoles.splice(0)) await con.close();
  await pool.closeAll();
  await gateway.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function openConsole(target: TestAgent): Promise<ConsoleHandle> {
  const con = await startConsole({
    app: target.app,
    store: openSettingsStore(target.dataDir),
    dataDir: target.dataDir,
    port: 0,
    staticDir: scratch,
  });
  consoles.push(con);
  return con;
}

function call(target: TestAgent, from: TestAgent, mode: Mode, extra: Partial<Envelope> = {}): Promise<Reply> {
  const env = envelope(from.id, target.id, mode, { message: `hello in ${mode}` }, extra);
  return post(target.url, PATHS[mode], sign(env, from.app.keys.signer));
}

async function scrape(con: ConsoleHandle, token: string | null = con.token) {
  const response = await fetch(`${con.url}/metrics`, {
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
  const text = await response.text();
  const samples = response.status === 200 ? parseMetrics(text) : [];
  return { status: response.status, headers: response.headers, text, samples };
}

/** node:http, because fetch will not forge a Host header. */
function raw(con: ConsoleHandle, headers: Record<string, string>): Promise<number> {
  const { port } = new URL(con.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/metrics', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('with the console token (the default)', () => {
  let agent: TestAgent;
  let peer: TestAgent;
  let con: ConsoleHandle;
  let receiver: Server;
  const delivered: string[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        delivered.push(req.url ?? '');
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const options: TestAgentOptions = {
      // Callbacks to the loopback receiver (production allows public https addresses only).
      callbacks: { allowHttp: true, isAllowedAddress: () => true, backoffMs: [] },
    };
    agent = await pool.start({ ...options, settings: { access: 'pairing' } });
    peer = await pool.start();
    con = await openConsole(agent);
    // The first scrape switches the metrics on (they count from then, as Prometheus would see them).
    expect((await scrape(con)).status).toBe(200);
    agent.app.access.approve(peer.id);

    // One of each: accepted in every mode (the async one with a callback), a bad signature, a replay, a
    // stranger refused at access (sync) and another held for approval (async).
    const sync = sign(envelope(peer.id, agent.id, 'sync', { message: 'first' }), peer.app.keys.signer);
    expect((await post(agent.url, PATHS.sync, sync)).status).toBe(200);
    expect((await call(agent, peer, 'stream')).status).toBe(200);
    const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/done`;
    expect((await call(agent, peer, 'async', { callbackUrl })).status).toBe(202);
    const tampered = sign(envelope(peer.id, agent.id, 'sync', { message: 'a' }), peer.app.keys.signer);
    expect(
      (await post(agent.url, PATHS.sync, { ...tampered, body: tampered.body.replace('"a"', '"b"') })).status,
    ).toBe(401);
    const replay = await post(agent.url, PATHS.sync, sync);
    expect(replay.json.code).toBe('REPLAY_DETECTED');
    const strangers = [await pool.start(), await pool.start()];
    expect((await call(agent, strangers[0]!, 'sync')).status).toBe(403);
    expect((await call(agent, strangers[1]!, 'async')).status).toBe(202);
    await until(() => delivered.length === 1, 5000, 'the callback');
  });

  afterAll(async () => {
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('refuses a scrape without the token, or with a wrong one: 401 with a Bearer challenge', async () => {
    for (const token of [null, 'not-the-token']) {
      const answer = await scrape(con, token);
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="agent-bridge-console"');
      expect(answer.text).not.toContain('agent_bridge');
    }
  });

  it("answers in Prometheus's text format, uncached", async () => {
    const answer = await scrape(con);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe(PROMETHEUS_TYPE);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.text).toContain('# TYPE agent_bridge_requests_total counter\n');
    expect(answer.text).toContain('# TYPE agent_bridge_request_duration_seconds histogram\n');
    expect(value(answer.samples, 'agent_bridge_info', { version: AGENT_VERSION })).toBe(1);
    // The process's own metrics come along.
    expect(value(answer.samples, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(value(answer.samples, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });

  it('counts envelopes by mode, verdict and refusing step, never by sender', async () => {
    const { samples, text } = await scrape(con);
    expect(nonZero(samples, 'agent_bridge_requests_total')).toEqual({
      'protocol=samvad,mode=sync,verdict=accepted,step=none': 1,
      'protocol=samvad,mode=stream,verdict=accepted,step=none': 1,
      'protocol=samvad,mode=async,verdict=accepted,step=none': 1,
      'protocol=samvad,mode=async,verdict=held,step=none': 1,
      'protocol=samvad,mode=sync,verdict=refused,step=signature': 1,
      'protocol=samvad,mode=sync,verdict=refused,step=nonce': 1,
      'protocol=samvad,mode=sync,verdict=refused,step=access': 1,
    });
    // Known series start at zero.
    expect(
      value(samples, 'agent_bridge_requests_total', {
        protocol: 'samvad',
        mode: 'stream',
        verdict: 'refused',
        step: 'nonce',
      }),
    ).toBe(0);
    expect(text).not.toContain(peer.id);
    expect(text).not.toContain('127.0.0.1');
  });

  it('times each envelope by mode and verdict', async () => {
    const { samples } = await scrape(con);
    const count = (mode: string, verdict: string) =>
      value(samples, 'agent_bridge_request_duration_seconds_count', { protocol: 'samvad', mode, verdict });
    expect(count('sync', 'accepted')).toBe(1);
    expect(count('sync', 'refused')).toBe(3);
    expect(count('stream', 'accepted')).toBe(1);
    expect(count('async', 'accepted')).toBe(1);
    expect(count('async', 'held')).toBe(1);
    const sum = value(samples, 'agent_bridge_request_duration_seconds_sum', {
      protocol: 'samvad',
      mode: 'sync',
      verdict: 'accepted',
    });
    expect(sum).toBeGreaterThan(0);
    expect(sum).toBeLessThan(10);
    const inf = { protocol: 'samvad', mode: 'sync', verdict: 'refused', le: '+Inf' };
    expect(value(samples, 'agent_bridge_request_duration_seconds_bucket', inf)).toBe(3);
  });

  it('times the chat calls that reached the gateway; the gateway is up', async () => {
    const { samples } = await scrape(con);
    expect(value(samples, 'agent_bridge_gateway_call_duration_seconds_count', { outcome: 'ok' })).toBe(3);
    expect(
      value(samples, 'agent_bridge_gateway_call_duration_seconds_count', { outcome: 'error' }),
    ).toBeUndefined();
    expect(nonZero(samples, 'agent_bridge_gateway_errors_total')).toEqual({});
    expect(value(samples, 'agent_bridge_gateway_up')).toBe(1);
    expect(nonZero(samples, 'agent_bridge_gateway_state')).toEqual({ 'state=up': 1 });
  });

  it('counts callbacks by outcome', async () => {
    const { samples } = await scrape(con);
    expect(nonZero(samples, 'agent_bridge_callbacks_total')).toEqual({ 'outcome=delivered': 1 });
    expect(value(samples, 'agent_bridge_callbacks_total', { outcome: 'gave-up' })).toBe(0);
  });

  it('reads the gauges at scrape time: pending approvals, tunnel, state backend', async () => {
    let { samples } = await scrape(con);
    expect(value(samples, 'agent_bridge_pending_approvals')).toBe(2);
    expect(nonZero(samples, 'agent_bridge_tunnel_status')).toEqual({ 'status=off': 1 });
    expect(value(samples, 'agent_bridge_tunnel_status', { status: 'online' })).toBe(0);
    expect(nonZero(samples, 'agent_bridge_state_backend_up')).toEqual({ 'backend=data-dir': 1 });

    const [pending] = agent.app.access.view().pending;
    agent.app.access.deny(pending!.sender);
    ({ samples } = await scrape(con));
    expect(value(samples, 'agent_bridge_pending_approvals')).toBe(1);
  });

  it("counts the operator's own calls out (MCP) by verdict and step", async () => {
    const done = await agent.app.outbound.call({
      agent: peer.id,
      skill: 'chat',
      payload: { message: 'out' },
    });
    expect(done.state).toBe('done');
    await expect(
      agent.app.outbound.call({ agent: 'agent://10.0.0.5', skill: 'chat', payload: { message: 'no' } }),
    ).rejects.toThrow(/not a public address/);
    const { samples } = await scrape(con);
    expect(nonZero(samples, 'agent_bridge_outbound_calls_total')).toEqual({
      'protocol=samvad,mode=sync,verdict=accepted,step=none': 1,
      'protocol=samvad,mode=sync,verdict=refused,step=access': 1,
    });
  });

  it('a failing gateway: the error is timed and counted by problem, and the gateway is failing', async () => {
    gateway.set({ behaviour: 'internal-error' });
    try {
      expect((await call(agent, peer, 'sync')).status).toBe(502);
    } finally {
      gateway.set({ behaviour: 'ok' });
    }
    const { samples } = await scrape(con);
    expect(value(samples, 'agent_bridge_gateway_call_duration_seconds_count', { outcome: 'error' })).toBe(1);
    expect(nonZero(samples, 'agent_bridge_gateway_errors_total')).toEqual({ 'problem=gateway-error': 1 });
    expect(value(samples, 'agent_bridge_gateway_up')).toBe(0);
    // It answered (HTTP 500, the agent run failed): not down, but failing until a call succeeds.
    expect(nonZero(samples, 'agent_bridge_gateway_state')).toEqual({ 'state=failing': 1 });
    expect(
      value(samples, 'agent_bridge_requests_total', {
        protocol: 'samvad',
        mode: 'sync',
        verdict: 'refused',
        step: 'handler',
      }),
    ).toBe(1);
  });

  it('switch on at the first scrape: what came before it is not counted, what follows is', async () => {
    const fresh = await pool.start();
    const freshConsole = await openConsole(fresh);
    expect((await call(fresh, peer, 'sync')).status).toBe(200);
    // A refused scrape does not switch them on.
    expect((await scrape(freshConsole, 'not-the-token')).status).toBe(401);
    const first = await scrape(freshConsole);
    expect(nonZero(first.samples, 'agent_bridge_requests_total')).toEqual({});
    expect(value(first.samples, 'agent_bridge_info', { version: AGENT_VERSION })).toBe(1);
    expect((await call(fresh, peer, 'sync')).status).toBe(200);
    const second = await scrape(freshConsole);
    expect(nonZero(second.samples, 'agent_bridge_requests_total')).toEqual({
      'protocol=samvad,mode=sync,verdict=accepted,step=none': 1,
    });
  });

  it('refuses other methods with 405', async () => {
    const answer = await fetch(`${con.url}/metrics`, {
      method: 'POST',
      headers: { authorization: `Bearer ${con.token}` },
    });
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('GET, HEAD');
  });

  it('is not on the agent port: 404, with the token or without', async () => {
    for (const headers of [{}, { authorization: `Bearer ${con.token}` }] as Record<string, string>[]) {
      const answer = await fetch(`${agent.url}/metrics`, { headers });
      expect(answer.status).toBe(404);
      expect(await answer.text()).not.toContain('agent_bridge');
    }
  });
});

describe('with metricsNoAuth', () => {
  let agent: TestAgent;
  let peer: TestAgent;
  let con: ConsoleHandle;

  beforeAll(async () => {
    // No gateway at all: no setting, no env, no OpenClaw config.
    agent = await pool.start({
      settings: { metricsNoAuth: true, gatewayUrl: undefined, gatewayToken: undefined },
      env: { OPENCLAW_CONFIG_PATH: join(scratch, 'openclaw.json') },
    });
    peer = await pool.start();
    con = await openConsole(agent);
    expect((await scrape(con, null)).status).toBe(200); // the metrics count from here
  });

  it('answers without a token, still only at its own loopback address (DNS rebinding) and origin', async () => {
    const answer = await scrape(con, null);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe(PROMETHEUS_TYPE);
    const { port } = new URL(con.url);
    expect(await raw(con, { host: `127.0.0.1:${port}` })).toBe(200);
    expect(await raw(con, { host: `localhost:${port}` })).toBe(200);
    expect(await raw(con, { host: `rebind.attacker.example:${port}` })).toBe(403);
    expect(await raw(con, { host: `127.0.0.1:${port}`, origin: 'http://attacker.example' })).toBe(403);
  });

  it('a gateway that is not configured: refused at handler, counted as not-configured, never timed', async () => {
    expect((await call(agent, peer, 'sync')).status).toBe(503);
    const { samples } = await scrape(con, null);
    expect(nonZero(samples, 'agent_bridge_requests_total')).toEqual({
      'protocol=samvad,mode=sync,verdict=refused,step=handler': 1,
    });
    expect(nonZero(samples, 'agent_bridge_gateway_errors_total')).toEqual({ 'problem=not-configured': 1 });
    expect(samples.filter((s) => s.name.startsWith('agent_bridge_gateway_call_duration'))).toEqual([]);
    expect(value(samples, 'agent_bridge_gateway_up')).toBe(0);
    expect(nonZero(samples, 'agent_bridge_gateway_state')).toEqual({ 'state=not-configured': 1 });
  });

  it('the console cannot change it (403); the setting is read at each scrape', async () => {
    const put = await fetch(`${con.url}/api/settings`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${con.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ metricsNoAuth: false }),
    });
    expect(put.status).toBe(403);
    expect(await put.text()).toContain('--metrics-no-auth');
    expect(agent.app.currentSettings.metricsNoAuth).toBe(true);

    agent.app.updateSettings({ metricsNoAuth: false });
    expect((await scrape(con, null)).status).toBe(401);
    expect((await scrape(con)).status).toBe(200);
  });

  it('is not on the agent port', async () => {
    expect((await fetch(`${agent.url}/metrics`)).status).toBe(404);
  });
});

describe('through the tunnel', () => {
  let tunnel: TunnelServer;
  let agent: TestAgent;
  let con: ConsoleHandle;

  beforeAll(async () => {
    tunnel = await startTunnelServer();
    agent = await pool.start({
      settings: { tunnel: 'localtunnel', tunnelHost: tunnel.url, metricsNoAuth: true },
      tunnel: { backoff: { initialMs: 100, maxMs: 500 }, checkIntervalMs: 60_000 },
    });
    con = await openConsole(agent);
    await until(() => agent.app.tunnelState.status === 'online', 10_000, 'the tunnel online');
  });

  afterAll(async () => {
    await agent.stop();
    await tunnel.close();
  });

  it("/metrics is the agent port's 404, token or not; the console reports the tunnel online", async () => {
    const publicUrl = agent.app.agentUrl;
    expect(publicUrl).toMatch(/^http:\/\/[a-z0-9]+\.localhost:\d+$/);
    // The tunnel itself works: the card comes through it.
    expect((await appFetch(`${publicUrl}/.well-known/agent.json`)).status).toBe(200);
    for (const headers of [{}, { authorization: `Bearer ${con.token}` }] as Record<string, string>[]) {
      const answer = await appFetch(`${publicUrl}/metrics`, { headers });
      expect(answer.status).toBe(404);
      expect(await answer.text()).not.toContain('agent_bridge');
    }
    const { samples } = await scrape(con);
    expect(nonZero(samples, 'agent_bridge_tunnel_status')).toEqual({ 'status=online': 1 });
  });
});
