// One gateway state drives everything (issue 16 item 3): the console's status, /agent/health, /metrics and
// the terminal follow the latest of probes and calls through each transition (down, back, agent missing,
// agent added, token wrong), each told once, and "Check again" replaces what it contradicts. Against the
// gateway double, killed and restarted on the same port; in process, then as the real CLI.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayTransition } from '../../src/app.js';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import type { GatewayCheckResponse, StatusResponse } from '../../src/protocol/console-api.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { freePort, startChildAgent, type ChildAgent } from '../helpers/child-agent.js';
import { envelope, post, sign } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';

const TOKEN = 'gw-state-token-31ab';
const noOpenClaw = mkdtempSync(join(tmpdir(), 'no-openclaw-'));
const env = { OPENCLAW_CONFIG_PATH: join(noOpenClaw, 'openclaw.json') };

let gateway: GatewayDouble;
let port: number;
const cleanups: (() => Promise<void> | void)[] = [];

beforeEach(async () => {
  port = await freePort();
  gateway = await startGatewayDouble({ token: TOKEN, port });
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await gateway.close();
});
afterAll(() => rmSync(noOpenClaw, { recursive: true, force: true }));

/** The gateway killed, then started again where the bridge expects it (same port, same token). */
async function restartGateway(): Promise<void> {
  await gateway.close();
  gateway = await startGatewayDouble({ token: TOKEN, port });
}

describe('in process: the console, /agent/health and /metrics follow one state', () => {
  let agent: TestAgent;
  let con: ConsoleHandle;
  let peer: TestAgent;
  const transitions: GatewayTransition[] = [];

  beforeEach(async () => {
    transitions.length = 0;
    // A probe at start, then only when asked ("Check again"): the test decides when the bridge looks.
    agent = await startAgent({
      settings: { gatewayUrl: gateway.url, gatewayToken: TOKEN, gatewayAgent: 'public' },
      gatewayProbeMs: 3_600_000,
      env,
    });
    agent.app.on('gateway', (t) => transitions.push(t));
    peer = await startAgent({ env });
    con = await startConsole({
      app: agent.app,
      store: openSettingsStore(agent.dataDir),
      dataDir: agent.dataDir,
      port: 0,
      staticDir: agent.dataDir,
    });
    cleanups.push(
      () => agent.close(),
      () => peer.close(),
      () => con.close(),
    );
    await until(() => agent.app.gatewayStatus().condition === 'up', 5000, 'the first probe');
    transitions.length = 0;
  });

  const api = async <T>(method: string, path: string): Promise<T> => {
    const response = await fetch(`${con.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${con.token}`, 'content-type': 'application/json' },
      ...(method === 'POST' ? { body: '{}' } : {}),
    });
    expect(response.status, path).toBe(200);
    return (await response.json()) as T;
  };
  const checkAgain = () => api<GatewayCheckResponse>('POST', '/api/gateway/check');
  const status = () => api<StatusResponse>('GET', '/api/status');
  const health = async () =>
    ((await (await fetch(`${agent.url}/agent/health`)).json()) as { status: string; gateway: string }).status;
  const gatewayMetric = async () => {
    const text = await (
      await fetch(`${con.url}/metrics`, { headers: { authorization: `Bearer ${con.token}` } })
    ).text();
    return /agent_bridge_gateway_state\{state="([a-z-]+)"\} 1/.exec(text)?.[1];
  };
  const call = () =>
    post(
      agent.url,
      '/agent/message',
      sign(envelope(peer.id, agent.id, 'sync', { message: 'hi' }), peer.app.keys.signer),
    );
  const told = () => transitions.map((t) => `${t.from}->${t.to}`);

  /** Everything the operator and the public see, after a Check again. */
  async function seen() {
    const { gateway: view } = await checkAgain();
    const full = await status();
    return {
      condition: view.condition,
      problem: view.problem?.kind,
      status: full.gateway.condition,
      agentHealth: full.agent.health,
      health: await health(),
      metric: await gatewayMetric(),
    };
  }

  it('down, then back: every view agrees, each transition told once', async () => {
    expect(await seen()).toEqual({
      condition: 'up',
      problem: undefined,
      status: 'up',
      agentHealth: 'ok',
      health: 'ok',
      metric: 'up',
    });
    await gateway.close();
    const down = await seen();
    expect(down).toEqual({
      condition: 'down',
      problem: 'unreachable',
      status: 'down',
      agentHealth: 'degraded',
      health: 'degraded',
      metric: 'down',
    });
    expect((await call()).status).toBe(502);
    await seen(); // still down: not news again
    await restartGateway();
    expect(await seen()).toMatchObject({ condition: 'up', problem: undefined, health: 'ok', metric: 'up' });
    expect(told()).toEqual(['up->down', 'down->up']);
  });

  it('Check again clears a red box that a failed call left, once the gateway answers again', async () => {
    await gateway.close();
    // No probe meanwhile: only a caller's failed call found the gateway down.
    expect((await call()).status).toBe(502);
    let view = (await status()).gateway;
    expect(view).toMatchObject({ condition: 'down', lastCallOk: false, problem: { kind: 'unreachable' } });
    await restartGateway();
    view = (await checkAgain()).gateway;
    expect(view.condition).toBe('up');
    expect(view.problem).toBeUndefined();
    expect(view).toMatchObject({ live: true, lastCallOk: false });
    expect((await status()).agent.health).toBe('ok');
  });

  it('agent missing, then added: calls refused meanwhile, the agent back without a restart', async () => {
    gateway.set({ agents: ['main'] });
    expect(await seen()).toMatchObject({
      condition: 'agent-missing',
      problem: 'agent-missing',
      health: 'degraded',
      metric: 'agent-missing',
    });
    expect((await call()).status).toBe(503);
    gateway.set({ agents: ['main', 'public'] });
    expect(await seen()).toMatchObject({ condition: 'up', health: 'ok', metric: 'up' });
    expect((await call()).status).toBe(200);
    expect(told()).toEqual(['up->agent-missing', 'agent-missing->up']);
  });

  it('token wrong (the gateway got another one), then right again', async () => {
    gateway.set({ token: 'rotated-on-the-gateway' });
    const wrong = await seen();
    expect(wrong).toMatchObject({
      condition: 'token-wrong',
      problem: 'unauthorized',
      health: 'degraded',
      metric: 'token-wrong',
    });
    const { gateway: view } = await checkAgain();
    expect(view.problem?.fix).toMatch(/Copy the token from the gateway config/);
    expect(JSON.stringify(view)).not.toContain(TOKEN);
    gateway.set({ token: TOKEN });
    expect(await seen()).toMatchObject({ condition: 'up', health: 'ok' });
    expect(told()).toEqual(['up->token-wrong', 'token-wrong->up']);
  });
});

describe('the terminal (`serve`): each transition printed once, in its own words', () => {
  let child: ChildAgent;
  let dataDir: string;

  async function launch(): Promise<void> {
    dataDir = tempDir();
    const agentPort = await freePort();
    child = await startChildAgent(
      [
        '--data-dir',
        dataDir,
        '--port',
        String(agentPort),
        '--tunnel',
        'none',
        '--console-port',
        '0',
        '--gateway-url',
        gateway.url,
        '--gateway-token',
        TOKEN,
      ],
      env,
    );
    cleanups.push(async () => {
      child.process.kill('SIGTERM');
      await child.exited;
      rmSync(dataDir, { recursive: true, force: true });
    });
    await until(() => child.output().includes('  Access:'), 10_000, 'the start banner');
  }

  /** "Check again" through the console, as the Overview's button does. */
  async function checkAgain(): Promise<void> {
    const file = JSON.parse(readFileSync(join(dataDir, 'console.json'), 'utf8')) as {
      url: string;
      token: string;
    };
    const response = await fetch(`${file.url}/api/gateway/check`, {
      method: 'POST',
      headers: { authorization: `Bearer ${file.token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(200);
  }

  const count = (text: string) => child.output().split(text).length - 1;
  const printed = async (text: string) => until(() => count(text) > 0, 5000, `"${text}" in the output`);

  it('says the state at start, then down, back, agent missing, agent added, token wrong, back', async () => {
    await launch();
    expect(child.output()).toContain('  Gateway:    answering; callers reach agent "public"');
    expect(child.output()).not.toMatch(/again|Gateway down|Gateway problem/);

    await gateway.close();
    await checkAgain();
    await printed('Gateway down: Could not reach the gateway');
    expect(child.output()).toContain('  Fix: Start the gateway');
    await checkAgain();

    await restartGateway();
    await checkAgain();
    await printed('Gateway back: answering again.');

    gateway.set({ agents: ['main'] });
    await checkAgain();
    await printed('Gateway agent for callers missing: ');
    expect(child.output()).toMatch(/has no agent "public" for callers \(it has main\)/);
    gateway.set({ agents: ['main', 'public'] });
    await checkAgain();
    await printed('Gateway agent for callers added: calls are forwarded again.');

    gateway.set({ token: 'rotated-on-the-gateway' });
    await checkAgain();
    await printed("Gateway refuses the bridge's token: ");
    await checkAgain();
    gateway.set({ token: TOKEN });
    await checkAgain();
    await printed("Gateway back: it accepts the bridge's token again.");

    for (const line of [
      'Gateway down: ',
      'Gateway back: answering again.',
      'Gateway agent for callers missing: ',
      'Gateway agent for callers added: ',
      "Gateway refuses the bridge's token: ",
      "Gateway back: it accepts the bridge's token again.",
    ]) {
      expect(count(line), line).toBe(1);
    }
    // Never the words of a gateway that came back while it was going away (the old bug).
    expect(count('Gateway answering again.')).toBe(0);
    expect(child.output()).not.toContain(TOKEN);
  });

  it('says at start when the agent for callers is missing, and when it appears', async () => {
    gateway.set({ agents: ['main'] });
    await launch();
    expect(child.output()).toMatch(/ {2}Gateway: {4}The gateway at .+ has no agent "public" for callers/);
    expect(child.output()).not.toContain('answering; callers reach');
    gateway.set({ agents: ['main', 'public'] });
    await checkAgain();
    await printed('Gateway agent for callers added: calls are forwarded again.');
  });
});
