// The demo's stand-in gateway (`serve --demo`): an in-process server on a loopback port that answers as
// OpenClaw's chat-completions endpoint does (GATEWAY.md: health, `/v1/models`, plain and streamed chat, its
// errors), but from a fixed text that says it is a demo and no model is behind it. So one command shows a
// working agent, its console and its traffic, and nobody mistakes a reply for a model's.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { oneLine } from '../lib/text.js';

/** The agents the stand-in runs, as `GET /v1/models` lists them (`openclaw/<id>`). */
export const DEMO_AGENTS = ['main', 'public'] as const;

export interface DemoGateway {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** A fresh random token per run: only this process's bridge knows it. */
  token: string;
  close(): Promise<void>;
}

export interface DemoGatewayOptions {
  /** The pause between two streamed pieces, so a stream is seen arriving. Default 40 ms. */
  deltaDelayMs?: number;
}

/** The whole reply to `message`: labelled, and saying what would answer instead. */
export function demoReply(message: string): string {
  const quoted = oneLine(message, 200) ?? '';
  return (
    "[demo] No model is behind this reply: Agent Bridge's built-in demo gateway wrote it. Your message " +
    `(${JSON.stringify(quoted)}, ${[...message].length} characters) went through the agent's checks and into ` +
    'its Traffic like any call. Start Agent Bridge without --demo, next to your OpenClaw gateway, to have ' +
    'your own agent answer.'
  );
}

const CHAT_PATH = '/v1/chat/completions';
/** The bridge sends at most a 32,000-character message and its framing: anything larger is refused. */
const MAX_BODY_BYTES = 1024 * 1024;
const MODEL = /^openclaw(?:[/:]([A-Za-z0-9._-]{1,64}))?$/;

export async function startDemoGateway(options: DemoGatewayOptions = {}): Promise<DemoGateway> {
  const token = randomBytes(24).toString('hex');
  const deltaDelayMs = options.deltaDelayMs ?? 40;
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    answer(req, res, { token, deltaDelayMs }).catch(() => res.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // Loopback only, a port of the system's choosing: nothing outside this machine ever reaches it.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  { token, deltaDelayMs }: { token: string; deltaDelayMs: number },
): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://demo').pathname;
  const method = req.method ?? '';
  if ((method === 'GET' || method === 'HEAD') && (path === '/health' || path === '/healthz'))
    return json(res, 200, { ok: true, status: 'live' });
  if ((method === 'GET' || method === 'HEAD') && path === '/ready') return json(res, 200, { ready: true });
  const authorized = req.headers.authorization === `Bearer ${token}`;
  if (method === 'GET' && path === '/v1/models') {
    if (!authorized) return unauthorized(res);
    const ids = ['openclaw', 'openclaw/default', ...DEMO_AGENTS.map((id) => `openclaw/${id}`)];
    return json(res, 200, {
      object: 'list',
      data: ids.map((id) => ({ id, object: 'model', created: 0, owned_by: 'agent-bridge-demo' })),
    });
  }
  if (method !== 'POST' || path !== CHAT_PATH) return text(res, 404, 'Not Found');
  if (!authorized) return unauthorized(res);
  const body = await readJson(req);
  if (body === undefined) return badRequest(res, 'Request body must be JSON (at most 1 MiB).');
  const refusal = modelRefusal(body.model);
  if (refusal) return badRequest(res, refusal);
  const message = lastUserMessage(body.messages);
  if (!message.trim()) return badRequest(res, 'Missing user message in `messages`.');
  const reply = demoReply(message);
  const usage = usageOf(body.messages, reply);
  const base = { id: `chatcmpl_${randomUUID()}`, created: Math.floor(Date.now() / 1000), model: body.model };
  if (body.stream !== true) {
    return json(res, 200, {
      ...base,
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }],
      usage,
    });
  }
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache' });
  const frame = (data: unknown) => {
    if (!res.destroyed) res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  };
  const chunk = (rest: object) => ({ ...base, object: 'chat.completion.chunk', ...rest });
  frame(chunk({ choices: [{ index: 0, delta: { role: 'assistant' } }] }));
  // Word by word, as a model's stream arrives: `--stream` and the console show it coming in.
  for (const [i, piece] of (reply.match(/\S+\s*/g) ?? [reply]).entries()) {
    if (i > 0 && deltaDelayMs > 0) await sleep(deltaDelayMs);
    if (res.destroyed) return;
    frame(chunk({ choices: [{ index: 0, delta: { content: piece } }] }));
  }
  frame(chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
  const wantsUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage;
  if (wantsUsage === true) frame(chunk({ choices: [], usage }));
  frame('[DONE]');
  res.end();
}

/** Why the model is refused, in OpenClaw's words; undefined when it names one of the stand-in's agents. */
function modelRefusal(model: unknown): string | undefined {
  const match = typeof model === 'string' ? MODEL.exec(model) : null;
  if (!match) return 'Invalid `model`: use "openclaw" or "openclaw/<agentId>".';
  const agent = match[1];
  if (agent === undefined || agent === 'default') return undefined;
  return (DEMO_AGENTS as readonly string[]).includes(agent) ? undefined : `Unknown agent '${agent}'.`;
}

/** About four characters a token, as the bridge counts a gateway that reports nothing. */
function usageOf(messages: unknown, reply: string) {
  const prompt = Math.ceil(JSON.stringify(messages ?? '').length / 4);
  const completion = Math.ceil(reply.length / 4);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function lastUserMessage(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  const last = [...messages].reverse().find((m) => (m as { role?: unknown } | null)?.role === 'user') as
    { content?: unknown } | undefined;
  const content = last?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => ((part as { text?: unknown }).text as string | undefined) ?? '').join('');
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function unauthorized(res: ServerResponse): void {
  json(res, 401, { error: { message: 'Unauthorized', type: 'unauthorized' } });
}

function badRequest(res: ServerResponse, message: string): void {
  json(res, 400, { error: { message, type: 'invalid_request_error' } });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

function text(res: ServerResponse, status: number, body: string): void {
  send(res, status, 'text/plain; charset=utf-8', body);
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}
