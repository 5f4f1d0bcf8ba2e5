import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../src/client/index.js';
import { appFetch } from '../../src/lib/http.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startRegistryDouble, type RegistryDouble } from '../fixtures/registry-double.js';
import { startTunnelServer, type TunnelServer } from '../fixtures/tunnel-server.js';
import { startAgent, type TestAgent } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';

// End to end through the real localtunnel client and a loopback tunnel server: another agent calls `chat`
// at the public URL in all three modes, and registration goes through a registry double that fetches the
// card through the tunnel, as the real registry does.
let gateway: GatewayDouble;
let tunnel: TunnelServer;
let registry: RegistryDouble;
let agent: TestAgent;
let caller: TestAgent;

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: 'gw-token', deltaDelayMs: 40 });
  tunnel = await startTunnelServer();
  registry = await startRegistryDouble();
  agent = await startAgent({
    settings: {
      gatewayUrl: gateway.url,
      gatewayToken: 'gw-token',
      tunnel: 'localtunnel',
      tunnelHost: tunnel.url,
      registryUrl: registry.url,
    },
    tunnel: { backoff: { initialMs: 100, maxMs: 500 }, checkIntervalMs: 60_000 },
  });
  caller = await startAgent();
  await until(() => agent.app.tunnelState.status === 'online', 10_000, 'the tunnel online');
});

afterAll(async () => {
  await agent.close();
  await caller.close();
  await registry.close();
  await tunnel.close();
  await gateway.close();
});

function client(): AgentClient {
  // The caller is a loopback agent itself (its card is served over http), so devHttp is on for both.
  return new AgentClient({ id: caller.id, signer: caller.app.keys.signer, devHttp: true });
}

describe('through the tunnel', () => {
  it('serves the card at the public URL with the public identity', async () => {
    const url = agent.app.agentUrl;
    expect(url).toMatch(/^http:\/\/[a-z0-9]+\.localhost:\d+$/);
    const card = (await (await appFetch(`${url}/.well-known/agent.json`)).json()) as {
      id: string;
      url: string;
    };
    expect(card.id).toBe(`agent://${new URL(url).host}`);
    expect(card.url).toBe(url);
    expect(agent.app.card().id).toBe(card.id);
  });

  it('answers a signed chat call in sync mode, with a reply signature that verifies against the tunnel card', async () => {
    const reply = await client().call(agent.app.card().id, 'chat', { message: 'hello through the tunnel' });
    expect(reply.status).toBe(200);
    expect(reply.verified).toBe(true);
    expect(reply.body).toMatchObject({
      status: 'ok',
      result: { reply: 'echo: hello through the tunnel', channel: 'samvad' },
    });
  });

  it('runs an async task and reports it through the tunnel', async () => {
    const c = client();
    const id = agent.app.card().id;
    const { taskId } = await c.submitTask(id, 'chat', { message: 'later' });
    const record = await c.waitForTask(id, taskId, { intervalMs: 30, timeoutMs: 5000 });
    expect(record).toEqual({ taskId, status: 'done', result: { reply: 'echo: later', channel: 'samvad' } });
  });

  it('streams chunks while the gateway is still sending, with signed final events', async () => {
    const started = performance.now();
    const arrivals: { at: number; event?: string; data: unknown; verified: boolean }[] = [];
    for await (const event of client().stream(agent.app.card().id, 'chat', {
      message: 'a streamed answer',
    })) {
      arrivals.push({
        at: performance.now() - started,
        event: event.event,
        data: event.data,
        verified: event.verified,
      });
    }
    const chunks = arrivals.filter((e) => !e.event && (e.data as { chunk?: string }).chunk !== undefined);
    const result = arrivals.find((e) => e.event === 'result')!;
    expect(chunks.map((c) => (c.data as { chunk: string }).chunk).join('')).toBe('echo: a streamed answer');
    // The gateway spaces its deltas 40 ms apart: the first chunk must arrive well before the result.
    expect(result.at - chunks[0]!.at).toBeGreaterThan(40 * (chunks.length - 2));
    expect(result.verified).toBe(true);
    expect(arrivals.find((e) => !e.event && (e.data as { done?: boolean }).done === true)?.verified).toBe(
      true,
    );
  });

  it('keeps the caller address for the log but trusts nothing from forwarding headers', async () => {
    const events: { forwardedFor?: string; verdict: string }[] = [];
    const listener = (e: { forwardedFor?: string; verdict: string }) => events.push(e);
    agent.app.on('envelope', listener);
    await client().call(agent.app.card().id, 'chat', { message: 'who am i' });
    agent.app.off('envelope', listener);
    expect(events.at(-1)).toMatchObject({ verdict: 'accepted', forwardedFor: '127.0.0.1' });
  });

  it('never exposes a console path through the tunnel', async () => {
    for (const path of ['/', '/api/status', '/api/settings', '/index.html']) {
      const response = await appFetch(`${agent.app.agentUrl}${path}`);
      expect(response.status, path).toBe(404);
      await response.arrayBuffer();
    }
  });

  it('registers: the registry fetches the card through the tunnel; the record is kept in the data dir', async () => {
    const record = await agent.app.register();
    expect(record).toMatchObject({
      id: agent.app.card().id,
      name: 'Agent Bridge',
      registry: registry.url,
      url: agent.app.agentUrl,
    });
    expect(registry.records.get(agent.app.agentUrl)).toMatchObject({ id: agent.app.card().id });
    expect(agent.app.registrar.current.status).toBe('registered');
  });

  it('self-test reports every stage passing through the public URL', async () => {
    const report = await agent.app.selfTest();
    expect(report.stages.map((s) => [s.name, s.ok])).toEqual([
      ['resolve', true],
      ['card', true],
      ['signature', true],
      ['gateway', true],
      ['reply-signature', true],
    ]);
    expect(report.ok).toBe(true);
    expect(report.url).toBe(agent.app.agentUrl);
  });

  it('self-test names the failing stage when the gateway is down', async () => {
    gateway.set({ behaviour: 'disabled-404' });
    try {
      const report = await agent.app.selfTest();
      expect(report.ok).toBe(false);
      const failed = report.stages.find((s) => !s.ok)!;
      expect(failed.name).toBe('gateway');
      expect(failed.detail).toMatch(/no chat-completions endpoint/);
      expect(failed.fix).toMatch(/gateway\.http\.endpoints\.chatCompletions\.enabled/);
    } finally {
      gateway.set({ behaviour: 'ok' });
    }
  });
});
