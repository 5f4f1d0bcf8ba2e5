// The registry double against a tiny card server: the record on success, each refusal with its message,
// each scripted behaviour, and a card fetched through the loopback tunnel server.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import localtunnel from 'localtunnel';
import { afterEach, describe, expect, it } from 'vitest';
import { appFetch } from '../../src/lib/http.js';
import { buildCard, generateRawKeyPair, type AgentCard } from '../../src/protocol/index.js';
import { startRegistryDouble, type RegistryDouble } from '../fixtures/registry-double.js';
import { startTunnelServer } from '../fixtures/tunnel-server.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function cardFor(url: string): AgentCard {
  return buildCard({
    url,
    name: 'Test Agent',
    version: '0.1.0',
    description: 'A card for the registry double',
    specializations: ['chat'],
    models: [{ provider: 'openclaw', model: 'default' }],
    skills: [
      {
        id: 'chat',
        name: 'Chat',
        description: 'Talk',
        inputSchema: { type: 'object' },
        outputSchema: { type: 'object' },
        modes: ['sync'],
        trust: 'public',
      },
    ],
    publicKeys: [{ kid: 'k1', key: generateRawKeyPair().publicKey, active: true }],
    rateLimit: { requestsPerMinute: 60, requestsPerSender: 10, tokensPerSenderPerDay: 100_000 },
    cardTTL: 300,
  });
}

/**
 * Serves, per path prefix: `/` a valid card for itself, `/bad` a card missing its keys, `/elsewhere` a
 * valid card naming another URL, `/text` a non-JSON body, `/missing` a 404.
 */
async function cardServer(): Promise<string> {
  const sockets = new Set<Socket>();
  let base = '';
  const server: Server = createServer((req, res) => {
    const prefix = (req.url ?? '').replace(/\/\.well-known\/agent\.json$/, '');
    const bodies: Record<string, unknown> = {
      '': cardFor(base),
      '/bad': { ...cardFor(`${base}/bad`), publicKeys: [] },
      '/elsewhere': cardFor('https://elsewhere.example'),
    };
    if (prefix === '/text') return void res.end('hello');
    const body = req.url?.endsWith('/.well-known/agent.json') ? bodies[prefix] : undefined;
    if (body === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  server.on('connection', (socket) => sockets.add(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => {
    sockets.forEach((socket) => socket.destroy());
    return new Promise((resolve) => server.close(resolve));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return base;
}

/** A loopback URL where nothing listens. */
async function closedPort(): Promise<string> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

async function registryDouble(): Promise<RegistryDouble> {
  const registry = await startRegistryDouble();
  cleanups.push(() => registry.close());
  return registry;
}

async function register(registry: RegistryDouble, body: unknown, signal?: AbortSignal) {
  const response = await appFetch(`${registry.url}/api/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('registry double', () => {
  it('registers a reachable, valid card and answers the record; again updates registeredAt', async () => {
    const registry = await registryDouble();
    const base = await cardServer();
    const first = await register(registry, { url: `${base}/` });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      id: `agent://${new URL(base).host}`,
      name: 'Test Agent',
      registeredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(registry.records.get(base)).toEqual({ ...first.body, url: base });

    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await register(registry, { url: base });
    expect(second.status).toBe(200);
    expect(registry.records.size).toBe(1);
    expect(registry.records.get(base)?.registeredAt).toBe(second.body.registeredAt);
    expect(second.body.registeredAt).not.toBe(first.body.registeredAt);
    expect(registry.calls.map((call) => call.url)).toEqual([`${base}/`, base]);
  });

  it('refuses an unreachable card with the reason', async () => {
    const registry = await registryDouble();
    const base = await cardServer();
    const missing = await register(registry, { url: `${base}/missing` });
    expect(missing).toEqual({
      status: 422,
      body: { error: `Could not fetch agent card from ${base}/missing/.well-known/agent.json: HTTP 404` },
    });
    const nobody = await closedPort();
    const refused = await register(registry, { url: nobody });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toBe(
      `Could not fetch agent card from ${nobody}/.well-known/agent.json: ECONNREFUSED`,
    );
    expect(registry.records.size).toBe(0);
  });

  it('refuses an invalid card, a card for another URL, and a body that is not a card', async () => {
    const registry = await registryDouble();
    const base = await cardServer();
    expect(await register(registry, { url: `${base}/bad` })).toEqual({
      status: 422,
      body: { error: 'Invalid agent card: /publicKeys must NOT have fewer than 1 items' },
    });
    const elsewhere = await register(registry, { url: `${base}/elsewhere` });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.error).toMatch(/^Invalid agent card: .*elsewhere\.example/);
    expect((await register(registry, { url: `${base}/text` })).body).toEqual({
      error: 'Invalid agent card: not JSON',
    });
    expect(registry.records.size).toBe(0);
  });

  it('answers 400 when the url is missing or not a URL', async () => {
    const registry = await registryDouble();
    for (const body of [{}, { url: 42 }, { url: 'not a url' }, { url: 'ftp://x.example' }, 'not json']) {
      expect(await register(registry, body)).toEqual({ status: 400, body: { error: 'url is required' } });
    }
  });

  it('plays each scripted behaviour, recording every call', async () => {
    const registry = await registryDouble();
    const base = await cardServer();
    registry.set('error-500');
    expect(await register(registry, { url: base })).toEqual({
      status: 500,
      body: { error: 'internal error' },
    });
    registry.set('refuse-400');
    expect(await register(registry, { url: base })).toEqual({
      status: 400,
      body: { error: 'Registration closed' },
    });
    registry.set('bad-reply');
    expect(await register(registry, { url: base })).toEqual({ status: 200, body: { ok: true } });
    registry.set('hang');
    await expect(register(registry, { url: base }, AbortSignal.timeout(300))).rejects.toThrow();
    expect(registry.calls).toHaveLength(4);
    expect(registry.records.size).toBe(0);
    registry.set('ok');
    expect((await register(registry, { url: base })).status).toBe(200);
  });

  it('closes promptly with a request still hanging', async () => {
    const registry = await startRegistryDouble();
    registry.set('hang');
    const pending = register(registry, { url: 'http://127.0.0.1:8080' }).catch((error: unknown) => error);
    await expect.poll(() => registry.calls.length).toBe(1);
    await registry.close();
    expect(await pending).toBeInstanceOf(Error);
  });

  it('fetches a *.localhost card through the loopback tunnel server', async () => {
    const tunnelServer = await startTunnelServer({ socketWaitMs: 500 });
    cleanups.push(() => tunnelServer.close());
    const publicUrl = tunnelServer.publicUrlFor('my-agent');
    // The card server stands behind the tunnel, so its card names the public URL.
    const sockets = new Set<Socket>();
    const agent = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(cardFor(publicUrl)));
    });
    agent.on('connection', (socket) => sockets.add(socket));
    agent.listen(0, '127.0.0.1');
    await once(agent, 'listening');
    cleanups.push(() => {
      sockets.forEach((socket) => socket.destroy());
      return new Promise((resolve) => agent.close(resolve));
    });
    const tunnel = await localtunnel({
      port: (agent.address() as AddressInfo).port,
      host: tunnelServer.url,
      subdomain: 'my-agent',
    });
    tunnel.on('error', () => undefined);
    cleanups.push(() => tunnel.close());
    await tunnelServer.waitForClient('my-agent');

    const registry = await registryDouble();
    const { status, body } = await register(registry, { url: publicUrl });
    expect(status).toBe(200);
    expect(body.id).toBe(`agent://my-agent.localhost:${tunnelServer.port}`);
    expect(tunnelServer.requests.map((request) => request.path)).toEqual(['/.well-known/agent.json']);

    tunnel.close();
    tunnelServer.dropSockets();
    const gone = await register(registry, { url: publicUrl });
    expect(gone.status).toBe(422);
    expect(gone.body.error).toMatch(/^Could not fetch agent card from .*: HTTP (502|504|404)$/);
  });
});
