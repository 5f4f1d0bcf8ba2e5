import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CONSOLE_LISTENER,
  startConsole,
  type ConsoleHandle,
  type ConsoleOptions,
} from '../../src/console/console-server.js';
import type { GatewayCheckResponse } from '../../src/protocol/console-api.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startAgent, type TestAgent } from '../helpers/agents.js';

// Issue 26, item 11: "Check again" (POST /api/gateway/check) always gets an answer. A gateway slow to answer
// its probes (reloading its config, a loaded machine) gets "still checking" with what it waits for (202),
// then the result; one that never answers gets the probe's own timeout as the result; and a connection the
// client keeps between two checks is still open when it sends the second (Node's 5 s keep-alive close
// raced it: a dropped request, "socket hang up").

let gateway: GatewayDouble;
let agent: TestAgent;
const consoles: ConsoleHandle[] = [];

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: 'gw-check' });
  // The periodic probe on (as `serve` runs it): the check asks GET /health and GET /v1/models.
  agent = await startAgent({
    gatewayProbeMs: 600_000,
    settings: { gatewayUrl: gateway.url, gatewayToken: 'gw-check' },
  });
  await agent.app.gatewayWatch.checked();
});

afterEach(async () => {
  gateway.set({ probeDelayMs: 0 });
  for (const con of consoles.splice(0)) await con.close();
});

afterAll(async () => {
  await agent.close();
  await gateway.close();
});

async function openConsole(options: Partial<ConsoleOptions> = {}): Promise<ConsoleHandle> {
  const con = await startConsole({
    app: agent.app,
    store: openSettingsStore(agent.dataDir),
    dataDir: agent.dataDir,
    port: 0,
    ...options,
  });
  consoles.push(con);
  return con;
}

async function check(
  con: ConsoleHandle,
): Promise<{ status: number; body: GatewayCheckResponse; ms: number }> {
  const started = Date.now();
  const response = await fetch(`${con.url}/api/gateway/check`, {
    method: 'POST',
    headers: { authorization: `Bearer ${con.token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  return {
    status: response.status,
    body: (await response.json()) as GatewayCheckResponse,
    ms: Date.now() - started,
  };
}

describe('POST /api/gateway/check', () => {
  it('answers a slow gateway with "still checking" and what it waits for, then with the result', async () => {
    const con = await openConsole({ gatewayCheckWaitMs: 300 });
    gateway.set({ probeDelayMs: 1500 });
    const first = await check(con);
    expect(first.status).toBe(202);
    expect(first.ms).toBeLessThan(1500);
    expect(first.body.checking?.waitingFor.sort()).toEqual(['GET /health', 'GET /v1/models']);
    expect(Date.parse(first.body.checking?.since ?? '')).toBeGreaterThan(Date.now() - 5000);
    // What is known meanwhile comes with it.
    expect(first.body.gateway.condition).toBe('up');

    // Asking again joins the same probe: the gateway is asked once per request, not once per POST.
    const asked = gateway.requests.filter((r) => r.path === '/v1/models').length;
    let answer = await check(con);
    while (answer.status === 202) answer = await check(con);
    expect(answer.status).toBe(200);
    expect(answer.body.checking).toBeUndefined();
    expect(answer.body.agent).toMatchObject({ id: 'public', check: 'present' });
    expect(gateway.requests.filter((r) => r.path === '/v1/models').length).toBe(asked);
  });

  it('answers a gateway that never answers its probes with the probe’s timeout, in seconds', async () => {
    const con = await openConsole();
    gateway.set({ probeDelayMs: 60_000 });
    const answers = await Promise.all([check(con), check(con), check(con)]);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.ms).toBeLessThan(CONSOLE_LISTENER.headersTimeoutMs);
      expect(answer.body.gateway.problem).toMatchObject({ kind: 'timeout' });
      expect(answer.body.gateway.problem?.fix).toMatch(/^Start the gateway/);
    }
  });

  it('keeps a connection between two checks open longer than Node’s 5 s, so the second is answered', async () => {
    const con = await openConsole();
    const port = Number(new URL(con.url).port);
    const socket = connect({ port, host: '127.0.0.1' });
    socket.on('error', () => undefined);
    let received = '';
    let closed = false;
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    socket.on('close', () => (closed = true));
    const request = [
      'POST /api/gateway/check HTTP/1.1',
      `Host: 127.0.0.1:${port}`,
      `Authorization: Bearer ${con.token}`,
      'Content-Type: application/json',
      'Content-Length: 2',
      '',
      '{}',
    ].join('\r\n');
    const answers = () => received.split('HTTP/1.1 ').length - 1;
    const until = async (done: () => boolean, ms: number) => {
      const end = Date.now() + ms;
      while (!done() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50));
    };

    socket.write(request);
    await until(() => answers() === 1 && received.includes('"gateway"'), 5000);
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    // A client that does not read Keep-Alive hints (or whose timer runs late) comes back after 6 s.
    await new Promise((resolve) => setTimeout(resolve, 6000));
    expect(closed).toBe(false);
    socket.write(request);
    await until(() => answers() === 2 || closed, 5000);
    expect(answers()).toBe(2);
    socket.destroy();
  }, 20_000);
});
