// Issue 25: the agent port never writes to a connection that has not asked for anything. A tunnel client
// opens its local connections before any caller comes, and whatever the port writes on them unasked reaches
// the next caller routed there. Raw TCP against the real listener, with its deadlines shortened.
import { once } from 'node:events';
import type { Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentListener, LISTENER_LIMITS } from '../../src/agent/listener.js';

const LIMITS = {
  ...LISTENER_LIMITS,
  headersTimeoutMs: 300,
  requestTimeoutMs: 600,
  checkIntervalMs: 50,
  keepAliveTimeoutMs: 300,
};
/** Longer than every deadline above. */
const PAST_DEADLINES_MS = 1200;

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Server-side sockets in the order accepted, for what the agent itself did with them. */
const accepted: Socket[] = [];

async function listener(host = '127.0.0.1'): Promise<number> {
  const server = createAgentListener((_req, res) => res.end('ok'), LIMITS);
  servers.push(server);
  server.on('connection', (socket: Socket) => accepted.push(socket));
  server.listen(0, host);
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** A raw connection that records every byte it receives and whether it was closed. */
async function raw(port: number, host = '127.0.0.1') {
  const socket: Socket = connect(port, host);
  await once(socket, 'connect');
  let received = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  return {
    socket,
    received: () => received,
    closed: () => closed,
    send: (text: string) => socket.write(text),
  };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(5);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const GET = 'GET / HTTP/1.1\r\nHost: agent\r\n\r\n';

/** A non-loopback address of this machine, so a connection arrives as from another host. */
function externalAddress(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    const found = addresses?.find((a) => a.family === 'IPv4' && !a.internal);
    if (found) return found.address;
  }
  return undefined;
}

describe('the agent listener, from this machine (a tunnel client, a local proxy)', () => {
  it('never writes to a connection that has not spoken, and leaves it open; a request sent later is answered', async () => {
    const client = await raw(await listener());
    await sleep(PAST_DEADLINES_MS);
    // Before the fix: "HTTP/1.1 408 Request Timeout" here, which the tunnel handed to the next caller.
    expect(client.received()).toBe('');
    expect(client.closed()).toBe(false);
    client.send(GET);
    await sleep(100);
    expect(client.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*ok$/);
  });

  it('keeps a connection open between requests, however long it idles', async () => {
    const client = await raw(await listener());
    client.send(GET);
    await sleep(PAST_DEADLINES_MS);
    expect(client.closed()).toBe(false);
    client.send(GET);
    await sleep(100);
    expect(client.received().match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
  });

  it('answers a request that began and stalled with 408 and closes it, as before', async () => {
    const client = await raw(await listener());
    client.send('GET / HTTP/1.1\r\nHost: ag');
    await sleep(PAST_DEADLINES_MS);
    expect(client.received()).toBe('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
    expect(client.closed()).toBe(true);
  });

  it('answers what it cannot parse with 400 and closes it', async () => {
    const client = await raw(await listener());
    client.send('NOT HTTP AT ALL\r\n\r\n');
    await sleep(200);
    expect(client.received()).toBe('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    expect(client.closed()).toBe(true);
  });
});

describe('the agent listener, from another host', () => {
  const address = externalAddress();

  it.skipIf(!address)(
    'closes a connection that never spoke at the headers deadline, without a byte, and idle ones after keep-alive',
    async () => {
      const port = await listener('0.0.0.0');
      accepted.length = 0;
      const silent = await raw(port, address);
      await until(() => accepted.length === 1);
      const idle = await raw(port, address);
      await until(() => accepted.length === 2);
      idle.send(GET);
      // Node adds a second to the keep-alive deadline before it looks.
      await sleep(PAST_DEADLINES_MS + 1000);
      expect(silent.received()).toBe('');
      expect(idle.received()).toMatch(/^HTTP\/1\.1 200 OK/);
      // Seen from the agent's side: some sandboxed networks do not pass the close on to the client at once.
      expect(accepted.map((socket) => socket.destroyed)).toEqual([true, true]);
    },
  );
});
