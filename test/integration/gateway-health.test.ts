// The health probe against the gateway double and raw servers: GET /health only, never chat.
import { createServer } from 'node:http';
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../../src/bridge/gateway-client.js';
import { probeGateway } from '../../src/bridge/gateway-health.js';
import { startGatewayDouble } from '../fixtures/gateway-double.js';
import type { GatewayDouble } from '../fixtures/gateway-double.js';

let gateway: GatewayDouble;
const configFor = (url: string): GatewayConfig => ({
  url,
  token: 'secret-token',
  model: 'openclaw',
  timeoutMs: 5000,
});

beforeAll(async () => {
  gateway = await startGatewayDouble();
});
afterAll(() => gateway.close());

const servers: Server[] = [];
afterEach(async () => {
  gateway.requests.length = 0;
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});
async function serve(handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('probeGateway', () => {
  it('reports a live gateway, asking GET /health without the token', async () => {
    await expect(probeGateway(configFor(gateway.url))).resolves.toEqual({ reachable: true, live: true });
    expect(gateway.requests).toHaveLength(1);
    expect(gateway.requests[0]).toMatchObject({ method: 'GET', path: '/health' });
    expect(gateway.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('reports the gateway live while its chat endpoint is disabled, and never calls chat', async () => {
    gateway.set({ behaviour: 'disabled-404' });
    await expect(probeGateway(configFor(`${gateway.url}/`))).resolves.toMatchObject({ live: true });
    expect(gateway.requests.map((r) => r.path)).toEqual(['/health']);
    gateway.set({ behaviour: 'ok' });
  });

  it('reports a gateway that is not running as unreachable, with the fix', async () => {
    const url = await serve(() => {});
    const server = servers.pop();
    await new Promise((r) => server?.close(r));
    const health = await probeGateway(configFor(url));
    expect(health).toMatchObject({ reachable: false, live: false, problem: 'unreachable' });
    expect(health.diagnosis).toContain('connection refused');
    expect(health.fix).toContain('Start the gateway');
  });

  it('times out a server that does not answer', async () => {
    const url = await serve(() => {});
    const started = Date.now();
    const health = await probeGateway(configFor(url), 100);
    expect(health).toMatchObject({ reachable: false, live: false, problem: 'timeout' });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('reports a server without the gateway health endpoint', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(404, { 'Content-Type': 'text/html' });
      res.end('<h1>Not here</h1>');
    });
    const health = await probeGateway(configFor(url));
    expect(health).toMatchObject({ reachable: true, live: false, problem: 'not-chat-server' });
    expect(health.diagnosis).toContain('HTTP 404');
    expect(health.fix).toContain('Check the gateway URL');
  });

  it('reports a failing health endpoint as a gateway error', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(503, { 'Content-Type': 'application/json' });
      res.end('{"ok":false}');
    });
    await expect(probeGateway(configFor(url))).resolves.toMatchObject({
      reachable: true,
      live: false,
      problem: 'gateway-error',
    });
  });

  it('reports an unusable URL as not configured', async () => {
    await expect(probeGateway(configFor('not a url'))).resolves.toMatchObject({
      reachable: false,
      problem: 'not-configured',
    });
  });
});
