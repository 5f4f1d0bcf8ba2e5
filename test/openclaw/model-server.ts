/**
 * A stand-in model provider for the real OpenClaw gateway: an OpenAI-compatible `/v1/chat/completions`
 * server on 127.0.0.1 (ephemeral port) that answers every completion with one fixed reply and records
 * every request it receives, so a test can see what OpenClaw offered the model (tools, system prompt,
 * user text). OpenClaw is configured with `api: "openai-completions"` for it (see gateway.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const STANDIN_MODEL_ID = 'standin-model';
export const STANDIN_REPLY = 'Stand-in model reply: hello from the loopback model.';
/**
 * A user message carrying `STANDIN_SEARCH:<words>` makes the stand-in model call OpenClaw's `tool_search`
 * with those words (when it is offered) before it replies: what Tool Search then finds is what the agent
 * could call through `tool_call`, MCP tools included, whose names never reach the prompt.
 */
export const SEARCH_MARKER = 'STANDIN_SEARCH:';
/**
 * A user message carrying `callMarker(tool, args)` makes the stand-in model call that tool with those
 * arguments before it replies, directly or through Tool Search's `tool_call`: the tool result in its next
 * request is what the tool answered, e.g. what an `exec` command printed wherever OpenClaw ran it.
 */
export const CALL_MARKER = 'STANDIN_CALL:';
export function callMarker(tool: string, args: Record<string, unknown>): string {
  return `${CALL_MARKER}${tool}:${Buffer.from(JSON.stringify(args)).toString('base64url')}`;
}
/**
 * A user message carrying `STANDIN_SLOW` makes the stand-in model stream one word every 200 ms for up to a
 * minute: long enough for a caller to cancel, so a test sees whether OpenClaw closes the model's stream.
 */
export const SLOW_MARKER = 'STANDIN_SLOW';

/** One request as the stand-in model received it. */
export interface ModelRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, or undefined when there was none or it was not JSON. */
  body: ChatRequestBody | undefined;
  rawBody: string;
  at: number;
  /** Set when the client (OpenClaw) closed the connection before the answer ended. */
  closedEarly?: number;
}

export interface ChatMessage {
  role: string;
  content?: unknown;
  [key: string]: unknown;
}

export interface ChatRequestBody {
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  messages?: ChatMessage[];
  tools?: { type?: string; function?: { name?: string } }[];
  [key: string]: unknown;
}

export interface ModelServer {
  /** Base URL to give OpenClaw as the provider's `baseUrl` (ends in `/v1`). */
  baseUrl: string;
  port: number;
  requests: ModelRequest[];
  /** Only the chat-completion calls. */
  chatRequests(): ModelRequest[];
  close(): Promise<void>;
}

/** Flattens OpenAI message content (a string or an array of parts) into plain text. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => {
        if (typeof part === 'string') return part;
        if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') {
          return (part as { text: string }).text;
        }
        return '';
      })
      .join('\n');
  }
  return '';
}

/** The names of the function tools offered in one chat request, in order. */
export function toolNames(body: ChatRequestBody | undefined): string[] {
  return (body?.tools ?? []).map((tool) => tool.function?.name ?? '(unnamed)');
}

/** The joined text of every message with the given role (`system` also matches `developer`). */
export function messagesText(
  body: ChatRequestBody | undefined,
  role: 'system' | 'user' | 'assistant',
): string {
  return (body?.messages ?? [])
    .filter((m) => m.role === role || (role === 'system' && m.role === 'developer'))
    .map((m) => contentText(m.content))
    .join('\n');
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

let completionCounter = 0;

/** The tool call a marked user message asks for, once per conversation (none after its result). */
function plannedCall(body: ChatRequestBody): { name: string; arguments: string } | undefined {
  const messages = body.messages ?? [];
  if (messages.some((m) => m.role === 'tool')) return undefined;
  const user = messagesText(body, 'user');
  const call = new RegExp(`${CALL_MARKER}([A-Za-z0-9_]+):([A-Za-z0-9_-]+)`).exec(user);
  if (call?.[1] && call[2]) {
    const args = Buffer.from(call[2], 'base64url').toString('utf8');
    if (toolNames(body).includes(call[1])) return { name: call[1], arguments: args };
    // A tool behind Tool Search (listed in the system prompt) is called through tool_call.
    if (toolNames(body).includes('tool_call')) {
      return {
        name: 'tool_call',
        arguments: JSON.stringify({ id: call[1], args: JSON.parse(args) as unknown }),
      };
    }
  }
  const query = new RegExp(`${SEARCH_MARKER}(\\S+)`).exec(user)?.[1];
  if (!query || !toolNames(body).includes('tool_search')) return undefined;
  return { name: 'tool_search', arguments: JSON.stringify({ query: query.replace(/_/g, ' '), limit: 20 }) };
}

/** The text of the tool results in a request (what `tool_search` or `exec` answered). */
export function toolResults(body: ChatRequestBody | undefined): string {
  return (body?.messages ?? [])
    .filter((m) => m.role === 'tool')
    .map((m) => contentText(m.content))
    .join('\n');
}

function answerChat(res: ServerResponse, body: ChatRequestBody): void {
  const id = `chatcmpl-standin-${++completionCounter}`;
  const created = Math.floor(Date.now() / 1000);
  const model = body.model ?? STANDIN_MODEL_ID;
  const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
  const call = plannedCall(body);
  if (call) {
    answerToolCall(res, body, { id, created, model, usage }, call);
    return;
  }
  if (body.stream && messagesText(body, 'user').includes(SLOW_MARKER)) {
    answerSlowly(res, { id, created, model });
    return;
  }
  if (!body.stream) {
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: STANDIN_REPLY }, finish_reason: 'stop' }],
      usage,
    });
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const frame = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`,
    );
  frame([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  // Two pieces, so a streaming consumer has to join them.
  const half = Math.floor(STANDIN_REPLY.length / 2);
  frame([{ index: 0, delta: { content: STANDIN_REPLY.slice(0, half) }, finish_reason: null }]);
  frame([{ index: 0, delta: { content: STANDIN_REPLY.slice(half) }, finish_reason: null }]);
  frame([{ index: 0, delta: {}, finish_reason: 'stop' }]);
  if (body.stream_options?.include_usage) frame([], { usage });
  res.write('data: [DONE]\n\n');
  res.end();
}

/** Streams a word every 200 ms for up to a minute, and stops when the client goes away. */
function answerSlowly(res: ServerResponse, base: { id: string; created: number; model: string }): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let sent = 0;
  const timer = setInterval(() => {
    const last = ++sent >= 300;
    const choices = [{ index: 0, delta: { content: `word${sent} ` }, finish_reason: last ? 'stop' : null }];
    res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices })}\n\n`);
    if (!last) return;
    clearInterval(timer);
    res.end('data: [DONE]\n\n');
  }, 200);
  res.once('close', () => clearInterval(timer));
}

function answerToolCall(
  res: ServerResponse,
  body: ChatRequestBody,
  base: { id: string; created: number; model: string; usage: object },
  call: { name: string; arguments: string },
): void {
  const toolCall = { id: `call_${base.id}`, type: 'function', function: call };
  if (!body.stream) {
    sendJson(res, 200, {
      id: base.id,
      object: 'chat.completion',
      created: base.created,
      model: base.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, tool_calls: [toolCall] },
          finish_reason: 'tool_calls',
        },
      ],
      usage: base.usage,
    });
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const frame = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    res.write(
      `data: ${JSON.stringify({ id: base.id, object: 'chat.completion.chunk', created: base.created, model: base.model, choices, ...extra })}\n\n`,
    );
  frame([
    { index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, ...toolCall }] }, finish_reason: null },
  ]);
  frame([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]);
  if (body.stream_options?.include_usage) frame([], { usage: base.usage });
  res.write('data: [DONE]\n\n');
  res.end();
}

export async function startModelServer(): Promise<ModelServer> {
  const requests: ModelRequest[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const rawBody = await readBody(req);
      let body: ChatRequestBody | undefined;
      try {
        body = rawBody ? (JSON.parse(rawBody) as ChatRequestBody) : undefined;
      } catch {
        body = undefined;
      }
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const request: ModelRequest = {
        method: req.method ?? 'GET',
        path,
        headers: req.headers,
        body,
        rawBody,
        at: Date.now(),
      };
      requests.push(request);
      res.once('close', () => {
        if (!res.writableEnded) request.closedEarly = Date.now();
      });
      if (req.method === 'POST' && path.endsWith('/chat/completions')) {
        answerChat(res, body ?? {});
        return;
      }
      if (req.method === 'GET' && path.endsWith('/models')) {
        sendJson(res, 200, {
          object: 'list',
          data: [{ id: STANDIN_MODEL_ID, object: 'model', created: 0, owned_by: 'standin' }],
        });
        return;
      }
      // Anything else (e.g. the Responses API) is recorded and refused, so a test sees what was tried.
      sendJson(res, 404, {
        error: { message: `stand-in model: no route ${req.method} ${path}`, type: 'not_found' },
      });
    })().catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error), type: 'api_error' } });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    chatRequests: () => requests.filter((r) => r.method === 'POST' && r.path.endsWith('/chat/completions')),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
