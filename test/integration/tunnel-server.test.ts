// The loopback tunnel server against the real `localtunnel` client: control API, routing by Host,
// streaming, forwarding headers and each fault control.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import localtunnel from 'localtunnel';
import { afterEach, describe, expect, it } from 'vitest';
import { appFetch } from '../../src/lib/http.js';
import { startTunnelServer, type TunnelServer, type TunnelServerOptions } from '../fixtures/tunnel-server.js';

type Tunnel = Awaited<ReturnType<typeof localtunnel>>;
const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tunnelServer(options: TunnelServerOptions = {}): Promise<TunnelServer> {
  const server = await startTunnelServer(options);
  cleanups.push(() => server.close());
  return server;
}

/** The "agent": echoes what it received, or streams three SSE events 150 ms apart on /sse. */
async function localServer(): Promise<number> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => void answer(req, res));
  server.on('connection', (socket) => sockets.add(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => {
    sockets.forEach((socket) => socket.destroy());
    return new Promise((resolve) => server.close(resolve));
  });
  return (server.address() as AddressInfo).port;
}

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.url === '/sse') {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (let n = 0; n < 3; n++) {
      res.write(`data: ${n}\n\n`);
      await sleep(150);
    }
    return void res.end();
  }
  let body = '';
  for await (const chunk of req) body += String(chunk);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ method: req.method, path: req.url, headers: req.headers, body }));
}

/** A real client; every 'error' it emits is collected (unhandled, they would crash the test process). */
async function connect(server: TunnelServer, port: number, subdomain?: string) {
  const errors: Error[] = [];
  const tunnel: Tunnel = await localtunnel({ port, host: server.url, subdomain });
  tunnel.on('error', (error: Error) => errors.push(error));
  cleanups.push(() => tunnel.close());
  const id = await server.waitForClient(tunnel.clientId);
  return { tunnel, id, errors };
}

async function echo(url: string, init?: Parameters<typeof appFetch>[1]) {
  const response = await appFetch(url, init);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('tunnel server control API', () => {
  it('hands out a fresh id on ?new and the requested one on /<id>', async () => {
    const server = await tunnelServer();
    const fresh = await appFetch(`${server.url}/?new`);
    const reply = (await fresh.json()) as { id: string; port: number; max_conn_count: number; url: string };
    expect(fresh.status).toBe(200);
    expect(reply.id).toMatch(/^[a-z0-9]{10}$/);
    expect(reply).toMatchObject({ max_conn_count: 4, url: server.publicUrlFor(reply.id) });
    expect(reply.port).toBeGreaterThan(0);
    expect(await (await appFetch(`${server.url}/my-agent`)).json()).toMatchObject({ id: 'my-agent' });
    // Held by the first request for its grace period, so it goes to someone else.
    expect(await (await appFetch(`${server.url}/my-agent`)).json()).not.toMatchObject({ id: 'my-agent' });
  });

  it('refuses invalid ids, and answers 404 for everything else on the bare host', async () => {
    const server = await tunnelServer();
    expect((await appFetch(`${server.url}/Not_Valid`)).status).toBe(403);
    for (const path of ['/', '/api/status', '/a/b', '/.well-known/agent.json']) {
      expect((await appFetch(`${server.url}${path}`)).status, path).toBe(404);
    }
    expect((await appFetch(`${server.url}/?new`, { method: 'POST' })).status).toBe(404);
    const unknown = await appFetch(server.publicUrlFor('nobody'));
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('nobody');
  });

  it('refuses subdomains on request, and can hang its control requests', async () => {
    const server = await tunnelServer();
    server.refuseSubdomains(true);
    const refused = await appFetch(`${server.url}/my-agent`);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ message: 'subdomain unavailable' });
    expect((await appFetch(`${server.url}/?new`)).status).toBe(200);

    server.hang(true);
    const hung = appFetch(`${server.url}/?new`, { signal: AbortSignal.timeout(300) });
    await expect(hung).rejects.toThrow(/abort|timeout/i);
    const pending = appFetch(`${server.url}/my-agent`).catch((error: unknown) => error);
    await sleep(50);
    await server.stop(); // must not wait for the hung request
    expect(await pending).toBeInstanceOf(Error);
  });

  it('answers 504 when an id has no tunnel socket in time', async () => {
    const server = await tunnelServer({ socketWaitMs: 300 });
    const { id } = (await (await appFetch(`${server.url}/?new`)).json()) as { id: string };
    const started = Date.now();
    const response = await appFetch(server.publicUrlFor(id));
    expect(response.status).toBe(504);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });
});

describe('tunnel server with the real localtunnel client', () => {
  it('routes public requests by Host to the local server, with forwarding headers', async () => {
    const server = await tunnelServer();
    const { tunnel, id } = await connect(server, await localServer(), 'my-agent');
    expect(id).toBe('my-agent');
    expect(tunnel.url).toBe(server.publicUrlFor('my-agent'));
    expect(server.clients()).toEqual(['my-agent']);

    const { status, body } = await echo(`${tunnel.url}/agent/message?x=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.9' },
      body: JSON.stringify({ hello: 'world' }),
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ method: 'POST', path: '/agent/message?x=1', body: '{"hello":"world"}' });
    const headers = body.headers as Record<string, string>;
    expect(headers.host).toBe(`my-agent.localhost:${server.port}`);
    // A caller's own X-Forwarded-For is kept and ours appended, as proxies do: never trust the first entry.
    expect(headers['x-forwarded-for']).toBe('203.0.113.9, 127.0.0.1');
    expect(headers['x-forwarded-proto']).toBe('http');
    expect(server.requests.at(-1)).toMatchObject({ method: 'POST', path: '/agent/message?x=1' });
  });

  it('streams SSE chunk by chunk, as the local server writes them', async () => {
    const server = await tunnelServer();
    const { tunnel } = await connect(server, await localServer());
    const started = Date.now();
    const response = await appFetch(`${tunnel.url}/sse`);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const arrivals: { at: number; text: string }[] = [];
    const decoder = new TextDecoder();
    for await (const chunk of response.body ?? []) {
      arrivals.push({ at: Date.now() - started, text: decoder.decode(chunk as Uint8Array) });
    }
    expect(arrivals.map((a) => a.text).join('')).toBe('data: 0\n\ndata: 1\n\ndata: 2\n\n');
    expect(arrivals.length).toBeGreaterThanOrEqual(3);
    // The first event arrives long before the stream ends (not buffered): the server writes 300 ms apart.
    const first = arrivals[0]?.at ?? Infinity;
    const last = arrivals.at(-1)?.at ?? 0;
    expect(last - first).toBeGreaterThanOrEqual(250);
  });

  it('lets a caller hang up mid-stream, and serves the next request', async () => {
    const server = await tunnelServer({ maxConnCount: 1 });
    const { tunnel } = await connect(server, await localServer());
    const caller = new AbortController();
    const response = await appFetch(`${tunnel.url}/sse`, { signal: caller.signal });
    const reader = response.body?.getReader();
    expect(new TextDecoder().decode((await reader?.read())?.value)).toBe('data: 0\n\n');
    caller.abort();
    // The only tunnel socket held half a response: it is dropped and the client opens a fresh one.
    expect((await echo(`${tunnel.url}/next`)).body).toMatchObject({ path: '/next' });
  });

  it('hands a caller whatever the local server wrote unasked on an idle tunnel socket, as localtunnel-server does', async () => {
    // A local server that answers every connection with a 408 after 100 ms of silence (what Node's own
    // headers deadline does), before any request came: the real server does not read idle tunnel sockets,
    // so those bytes are the next caller's answer. The agent must never write them (issue 25).
    const sockets = new Set<Socket>();
    const eager = createServer((_req, res) => res.end('fresh'));
    eager.on('connection', (socket: Socket) => {
      sockets.add(socket);
      setTimeout(() => socket.write('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n'), 100);
    });
    eager.listen(0, '127.0.0.1');
    await once(eager, 'listening');
    cleanups.push(() => {
      sockets.forEach((socket) => socket.destroy());
      return new Promise((resolve) => eager.close(resolve));
    });
    const server = await tunnelServer({ maxConnCount: 1 });
    const { tunnel } = await connect(server, (eager.address() as AddressInfo).port);
    await sleep(300);
    const response = await appFetch(`${tunnel.url}/anything`);
    expect(response.status).toBe(408);
  });

  it('queues requests when every tunnel socket is busy', async () => {
    const server = await tunnelServer({ maxConnCount: 2 });
    const { tunnel } = await connect(server, await localServer());
    const statuses = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => (await echo(`${tunnel.url}/n/${i}`)).status),
    );
    expect(statuses).toEqual(Array(12).fill(200));
  });

  it('hands out a different id than requested when told to, or when the id is taken', async () => {
    const server = await tunnelServer();
    const port = await localServer();
    const first = await connect(server, port, 'my-agent');
    const second = await connect(server, port, 'my-agent');
    expect(second.id).not.toBe('my-agent');
    expect(second.tunnel.url).toBe(server.publicUrlFor(second.id));

    server.handOutDifferentIds(true);
    const third = await connect(server, port, 'other-agent');
    expect(third.id).not.toBe('other-agent');
    expect(third.tunnel.url).not.toBe(server.publicUrlFor('other-agent'));
    expect((await echo(`${third.tunnel.url}/x`)).status).toBe(200);
    expect(server.clients().sort()).toEqual([first.id, second.id, third.id].sort());
  });

  it('keeps working after its tunnel sockets are dropped (the client re-opens them)', async () => {
    const server = await tunnelServer();
    const { tunnel, errors } = await connect(server, await localServer(), 'my-agent');
    expect((await echo(`${tunnel.url}/before`)).status).toBe(200);
    server.dropSockets();
    expect((await echo(`${tunnel.url}/after`)).body).toMatchObject({ path: '/after' });
    expect(server.clients()).toEqual(['my-agent']);
    expect(errors).toEqual([]); // dropped sockets are re-opened silently
  });

  it('dies on stop() and comes back empty on the same port on start()', async () => {
    const server = await tunnelServer();
    const port = await localServer();
    const old = await connect(server, port, 'my-agent');
    await sleep(100); // let all of the client's sockets connect
    const publicUrl = old.tunnel.url;
    await server.stop();
    await expect(appFetch(publicUrl)).rejects.toThrow();
    // The client's re-opened sockets are refused: it reports each as an 'error' and then gives up.
    await expect.poll(() => old.errors.length).toBeGreaterThan(0);
    expect(old.errors[0]?.message).toMatch(/connection refused/);

    const { port: publicPort } = server;
    await server.start();
    expect(server.port).toBe(publicPort);
    expect(server.clients()).toEqual([]);
    expect((await appFetch(publicUrl)).status).toBe(404); // the old client is forgotten, never re-joins
    const fresh = await connect(server, port, 'my-agent');
    expect(fresh.tunnel.url).toBe(publicUrl);
    expect((await echo(`${publicUrl}/again`)).status).toBe(200);
  });
});
