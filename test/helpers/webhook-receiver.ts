import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedPost {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON. */
  json: Record<string, unknown>;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/<path>`: reachable only under --dev-http-peers (loopback, plain http). */
  url(path: string): string;
  received: ReceivedPost[];
  /** How it answers from now on: a status, or one per POST (200 by default). */
  answer(status: number | ((post: ReceivedPost) => number)): void;
  close(): Promise<void>;
}

/** A push notification receiver on a loopback port, recording every POST it gets. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedPost[] = [];
  let status: number | ((post: ReceivedPost) => number) = 200;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const post = { path: req.url ?? '', headers: req.headers, body, json: JSON.parse(body || '{}') };
      received.push(post);
      res.writeHead(typeof status === 'number' ? status : status(post)).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `http://127.0.0.1:${port}/${path}`,
    received,
    answer: (next) => void (status = next),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
