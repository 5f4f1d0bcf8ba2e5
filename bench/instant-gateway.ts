// An OpenAI-compatible chat-completions server that answers at once, for measuring the bridge itself.
// The test double (test/fixtures/gateway-double.ts) keeps every request it sees, which grows without
// bound over 100,000 calls, and builds all stream deltas before pacing them, so it cannot stamp each
// delta with the moment it is sent. This server does neither: plain replies are immediate, and a stream
// is asked for by the message `stream:<deltas>:<intervalMs>`; each delta's text is its send time, then
// `;`, as `process.hrtime.bigint()` nanoseconds: the monotonic clock every process on the machine shares,
// so a caller in another process can compare it with its own.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface InstantGateway {
  url: string;
  token: string;
  /** Chat calls answered so far. */
  readonly calls: number;
  close(): Promise<void>;
}

const CHAT_PATH = '/v1/chat/completions';
const STREAM_REQUEST = /^stream:(\d{1,5}):(\d{1,5})$/;
const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

export async function startInstantGateway(token = 'bench-gateway-token'): Promise<InstantGateway> {
  let calls = 0;
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== CHAT_PATH) return send(res, 404, { error: 'Not Found' });
      if (req.headers.authorization !== `Bearer ${token}`) {
        return send(res, 401, { error: { message: 'Unauthorized', type: 'unauthorized' } });
      }
      calls++;
      answer(res, Buffer.concat(chunks).toString('utf8')).catch(() => res.destroy());
    });
  });
  server.keepAliveTimeout = 65_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    get calls() {
      return calls;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface ChatBody {
  model?: string;
  stream?: boolean;
  messages?: Array<{ role?: string; content?: unknown }>;
}

async function answer(res: ServerResponse, text: string): Promise<void> {
  let body: ChatBody;
  try {
    body = JSON.parse(text) as ChatBody;
  } catch {
    return send(res, 400, {
      error: { message: 'Request body must be JSON.', type: 'invalid_request_error' },
    });
  }
  const message = String(body.messages?.at(-1)?.content ?? '');
  const base = { id: `chatcmpl_bench`, created: Math.floor(Date.now() / 1000), model: body.model };
  if (body.stream !== true) {
    return send(res, 200, {
      ...base,
      object: 'chat.completion',
      choices: [
        { index: 0, message: { role: 'assistant', content: `echo: ${message}` }, finish_reason: 'stop' },
      ],
      usage: USAGE,
    });
  }

  const [, count = '3', interval = '0'] = STREAM_REQUEST.exec(message) ?? [];
  const chunk = (rest: object) =>
    `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...rest })}\n\n`;
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache' });
  res.write(chunk({ choices: [{ index: 0, delta: { role: 'assistant' } }] }));
  for (let i = 0; i < Number(count); i++) {
    if (Number(interval) > 0) await sleep(Number(interval));
    if (res.destroyed) return;
    // Stamped at the last moment: the frame is written to the socket in this same tick.
    const content = `${process.hrtime.bigint()};`;
    res.write(chunk({ choices: [{ index: 0, delta: { content } }] }));
  }
  res.write(chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
  res.write(chunk({ choices: [], usage: USAGE }));
  res.end('data: [DONE]\n\n');
}

function send(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}
