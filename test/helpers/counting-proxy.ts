// A plain HTTP forwarder in front of another loopback server that counts the requests passing through, so a
// test can see how often a client knocks (e.g. the tunnel supervisor's control requests to a tunnel server).
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface CountingProxy {
  url: string;
  /** Every request forwarded: when, and its path. */
  requests: { at: number; path: string }[];
  close(): Promise<void>;
}

export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const { hostname, port } = new URL(target);
  const requests: CountingProxy['requests'] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    requests.push({ at: Date.now(), path: req.url ?? '/' });
    const upstream = request(
      { hostname, port, method: req.method, path: req.url, headers: req.headers },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      },
    );
    upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    req.pipe(upstream);
    res.on('close', () => upstream.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
