/**
 * A forwarder in front of the real gateway that records what the bridge asks of it: each request's method,
 * path, and for a chat call the `model` and `user` of its JSON body, and the status the gateway answered.
 * Responses (streams included) pass through as they come, and a request the bridge abandons is abandoned
 * upstream too, so the gateway sees exactly what it would see without it. It listens on loopback, so the
 * bridge still reads the gateway's config file (it does for a gateway on this machine only).
 */
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface GatewayRequest {
  method: string;
  path: string;
  /** A chat call's `model` (`openclaw/<agent>`) and `user`, as the bridge sent them. */
  model?: string;
  user?: string;
  /** The gateway's status, once it answered. */
  status?: number;
}

export interface GatewayRecorder {
  url: string;
  requests: GatewayRequest[];
  /** The chat calls (POST /v1/chat/completions) recorded so far. */
  chats(): GatewayRequest[];
  close(): Promise<void>;
}

export async function startGatewayRecorder(target: string): Promise<GatewayRecorder> {
  const { hostname, port } = new URL(target);
  const requests: GatewayRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const seen: GatewayRequest = { method: req.method ?? 'GET', path: req.url ?? '/' };
      try {
        const json = JSON.parse(body.toString('utf8')) as { model?: unknown; user?: unknown };
        if (typeof json.model === 'string') seen.model = json.model;
        if (typeof json.user === 'string') seen.user = json.user;
      } catch {
        // No JSON body (GET /v1/models, /health).
      }
      requests.push(seen);
      const upstream = request(
        { hostname, port, method: req.method, path: req.url, headers: req.headers },
        (reply) => {
          seen.status = reply.statusCode;
          res.writeHead(reply.statusCode ?? 502, reply.headers);
          reply.pipe(res);
        },
      );
      upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
      res.on('close', () => upstream.destroy());
      upstream.end(body);
    });
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
    chats: () => requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/chat/completions')),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
