// The SAMVAD ceiling: a plain `node:http` server that parses a JSON body and sends it back, with no
// signatures, no framework, no pipeline and no gateway. The same request bytes as the agent gets, so the
// ratio of the two is what the bridge's whole work costs against the least a server can do with them.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EchoServer {
  url: string;
  close(): Promise<void>;
}

export async function startEchoServer(): Promise<EchoServer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(404).end();
        return;
      }
      let text: string;
      try {
        text = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"body must be JSON"}');
        return;
      }
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
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
