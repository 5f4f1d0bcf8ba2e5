// The ceiling: a plain Koa server that parses a JSON body and sends it back, with no signatures, no
// pipeline and no gateway. Same framework and same request bytes as the agent, so the ratio of the two
// is what the bridge's own work costs.
import Koa from 'koa';
import type { AddressInfo } from 'node:net';

export interface EchoServer {
  url: string;
  close(): Promise<void>;
}

export async function startEchoServer(): Promise<EchoServer> {
  const app = new Koa();
  app.use(async (ctx) => {
    if (ctx.method !== 'POST') {
      ctx.status = 404;
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    ctx.body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  });
  const server = app.listen(0, '127.0.0.1');
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
