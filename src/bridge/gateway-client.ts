// The bridge's client for the gateway's OpenAI-compatible chat-completions endpoint (GATEWAY.md),
// plain and streaming. node:http with a keep-alive agent rather than fetch: it is the hot path.
import http from 'node:http';
import https from 'node:https';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { diagnoseConnectionError, diagnoseResponse, errorMessageOf, gatewayError } from './diagnosis.js';
import type { GatewayError, UnusableResponse } from './diagnosis.js';

export interface GatewayConfig {
  url: string;
  token: string;
  model: string;
  timeoutMs: number;
}

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ChatCall {
  message: string;
  /** Instructions the caller cannot influence (who is calling, that its text is untrusted input). */
  system?: string;
  user: string;
  signal?: AbortSignal;
  /** When present, the gateway is asked to stream and this is called with each content delta. */
  onDelta?: (text: string) => void;
}

export interface ChatReply {
  reply: string;
  /** null when the gateway sent none or all zeros (older gateways): count nothing rather than guess. */
  usage: ChatUsage | null;
}

const CHAT_PATH = '/v1/chat/completions';
const MAX_REPLY_BYTES = 8 * 1024 * 1024; // a bigger answer is not a chat reply; never buffer without bound
const MAX_ERROR_BYTES = 16 * 1024; // enough to diagnose an error page
const MAX_LINE_CHARS = 1024 * 1024; // one SSE line; a longer one is a broken stream
const LEGACY_ERROR = 'Error: internal error'; // how older OpenClaw builds reported a failed run
const CLOSED_EARLY = 'the connection closed before the reply was complete';

// Keep-alive so a call reuses a warm connection instead of paying a TCP handshake (the <1 ms target).
const agents = {
  http: new http.Agent({ keepAlive: true, scheduling: 'lifo' }),
  https: new https.Agent({ keepAlive: true, scheduling: 'lifo' }),
};

/** The shared keep-alive agent for a gateway URL. */
export function agentFor(url: URL): http.Agent {
  return url.protocol === 'https:' ? agents.https : agents.http;
}

/**
 * `path` under the gateway's base URL: trailing slashes and a base path are kept, and a base that
 * already ends in `/v1` (or the full chat path, as OpenAI-style servers are often configured) is not doubled.
 * Throws a TypeError for anything but an http(s) URL.
 */
export function gatewayEndpoint(baseUrl: string, path: string): URL {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('not an http(s) URL');
  const base = url.pathname.replace(/\/+$/, '').replace(/\/v1(\/chat\/completions)?$/, '');
  url.pathname = `${base}${path}`;
  url.hash = '';
  return url;
}

/** Sends one chat turn to the gateway. Every failure is a GatewayError (or an error thrown by onDelta). */
export async function callGateway(config: GatewayConfig, call: ChatCall): Promise<ChatReply> {
  const request = prepare(config, call);
  if (call.signal?.aborted) throw gatewayError('aborted');
  return exchange(request, true);
}

interface Prepared {
  config: GatewayConfig;
  call: ChatCall;
  endpoint: URL;
  /** The endpoint as request options, worked out once per gateway URL (this is the hot path). */
  target: http.RequestOptions;
  stream: boolean;
  body: string;
  headers: Record<string, string | number>;
}

const targets = new Map<string, { endpoint: URL; target: http.RequestOptions }>();

function targetFor(baseUrl: string): { endpoint: URL; target: http.RequestOptions } {
  let found = targets.get(baseUrl);
  if (!found) {
    const endpoint = gatewayEndpoint(baseUrl, CHAT_PATH);
    const target: http.RequestOptions = {
      protocol: endpoint.protocol,
      hostname: endpoint.hostname.replace(/^\[|\]$/g, ''),
      port: endpoint.port || undefined,
      path: `${endpoint.pathname}${endpoint.search}`,
      agent: agentFor(endpoint),
      ...(endpoint.username
        ? { auth: `${decodeURIComponent(endpoint.username)}:${decodeURIComponent(endpoint.password)}` }
        : {}),
    };
    found = { endpoint, target };
    if (targets.size > 16) targets.clear();
    targets.set(baseUrl, found);
  }
  return found;
}

function prepare(config: GatewayConfig, call: ChatCall): Prepared {
  let resolved: { endpoint: URL; target: http.RequestOptions };
  try {
    resolved = targetFor(config.url);
  } catch {
    throw gatewayError('not-configured', { detail: 'the gateway URL is not a valid http(s) URL' });
  }
  const { endpoint, target } = resolved;
  // An unauthenticated call would count as a failed login towards the gateway's lockout.
  if (!config.token) throw gatewayError('not-configured', { detail: 'no gateway token is set' });
  const stream = call.onDelta !== undefined;
  // The caller's text goes only in the user message; the framing is a system message it cannot touch.
  const messages = call.system
    ? [
        { role: 'system', content: call.system },
        { role: 'user', content: call.message },
      ]
    : [{ role: 'user', content: call.message }];
  const body = JSON.stringify({
    model: config.model || 'openclaw',
    messages,
    ...(call.user ? { user: call.user } : {}),
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
  const headers: Record<string, string | number> = {
    Authorization: `Bearer ${config.token}`,
    'x-openclaw-scopes': 'operator.write',
    'x-gateway-scopes': 'operator.write',
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    Accept: stream ? 'text/event-stream' : 'application/json',
    // OpenClaw's message channel: every bridged call arrives as the `samvad` channel, whatever the caller says.
    'x-openclaw-message-channel': 'samvad',
  };
  return { config, call, endpoint, target, stream, body, headers };
}

// One HTTP exchange. `canRetry`: Node's documented keep-alive race (the server closed an idle socket
// just as we reused it) is retried once; nothing else is, since every call starts a paid agent run. The
// race shows as a reset within moments of sending; a later reset may come from a run that had started, so
// it is not retried (a second, paid run would be worse than an error).
const KEEP_ALIVE_RACE_MS = 250;
function exchange(p: Prepared, canRetry: boolean): Promise<ChatReply> {
  const { config, call, endpoint, target } = p;
  const url = config.url;
  return new Promise<ChatReply>((resolve, reject) => {
    let settled = false;
    let responded = false;
    let timer: NodeJS.Timeout | undefined;
    let req: ClientRequest;
    const sentAt = Date.now();

    const cleanUp = () => {
      settled = true;
      clearTimeout(timer);
      call.signal?.removeEventListener('abort', onAbort);
    };
    const finish = (outcome: ChatReply | Error) => {
      if (settled) return;
      cleanUp();
      if (outcome instanceof Error) {
        reject(outcome);
        req.destroy(); // no-op once the response was read; otherwise frees the socket (and aborts the run)
      } else {
        resolve(outcome);
      }
    };
    // Plain mode: one deadline for the whole call. Stream mode: re-armed on every byte (idle timeout),
    // because a minute of silence is normal while the agent uses tools.
    const arm = () => {
      if (settled) return; // late bytes after the outcome must not hold the process open
      clearTimeout(timer);
      timer = setTimeout(
        () => finish(gatewayError('timeout', { url, timeoutMs: config.timeoutMs })),
        config.timeoutMs,
      );
    };
    const onAbort = () => finish(gatewayError('aborted'));

    try {
      req = (endpoint.protocol === 'https:' ? https : http).request({
        ...target,
        method: 'POST',
        headers: p.headers,
      });
    } catch {
      // Node refuses header values with control characters; its message names the header, not the value.
      reject(
        gatewayError('not-configured', {
          detail: 'the gateway token contains characters not allowed in HTTP',
        }),
      );
      return;
    }
    call.signal?.addEventListener('abort', onAbort, { once: true });
    arm();

    req.on('error', (error: NodeJS.ErrnoException) => {
      if (settled) return;
      const race = Date.now() - sentAt < KEEP_ALIVE_RACE_MS;
      if (canRetry && race && !responded && req.reusedSocket && error.code === 'ECONNRESET') {
        cleanUp();
        resolve(exchange(p, false));
        return;
      }
      finish(diagnoseConnectionError(error, url));
    });

    req.on('response', (res: IncomingMessage) => {
      responded = true;
      onResponse(res, p, { finish, arm, isSettled: () => settled });
    });

    req.end(p.body);
  });
}

// What the exchange lends to the code reading its response.
interface Flow {
  finish: (outcome: ChatReply | Error) => void;
  arm: () => void;
  isSettled: () => boolean;
}

function onResponse(res: IncomingMessage, p: Prepared, flow: Flow) {
  const { url, token } = p.config;
  res.on('error', () => {}); // reported by 'close' below
  res.on('close', () => {
    if (!res.complete) flow.finish(gatewayError('unreachable', { url, detail: CLOSED_EARLY }));
  });
  if (p.stream) {
    flow.arm(); // the first byte came; from now on the timeout measures silence
    res.on('data', flow.arm);
  }
  const status = res.statusCode ?? 0;
  const contentType = String(res.headers['content-type'] ?? '').toLowerCase();
  const ok = status >= 200 && status < 300;
  if (p.stream && ok && contentType.includes('text/event-stream')) {
    const events = new CompletionStream(url, token, p.call.onDelta ?? (() => {}));
    return readEvents(res, events, flow);
  }
  readBody(res, ok ? MAX_REPLY_BYTES : MAX_ERROR_BYTES, ok, (text) => {
    if (text === undefined) {
      return flow.finish(
        gatewayError('not-chat-server', { url, httpStatus: status, detail: 'the reply is too large' }),
      );
    }
    const retryAfter = res.headers['retry-after'];
    const outcome = interpretBody({ status, contentType, body: text, retryAfter }, url, token);
    try {
      // A server that ignored `stream: true` still gets its reply delivered, as one delta.
      if (!(outcome instanceof Error) && outcome.reply) p.call.onDelta?.(outcome.reply);
      flow.finish(outcome);
    } catch (error) {
      flow.finish(asError(error));
    }
  });
}

// A whole (non-stream) answer: the reply, or what it says about the gateway.
function interpretBody(answer: UnusableResponse, url: string, token: string): ChatReply | GatewayError {
  const unusable = () => diagnoseResponse({ ...answer, body: redact(answer.body, token) }, url);
  const ok = answer.status >= 200 && answer.status < 300;
  if (!ok || answer.contentType.includes('text/html')) return unusable();
  const parsed = parseJson(answer.body);
  const reply = parsed === undefined ? undefined : completionText(parsed);
  if (reply === undefined) return unusable();
  if (reply === LEGACY_ERROR) return gatewayError('gateway-error', { url, detail: LEGACY_ERROR });
  return { reply, usage: usageOf((parsed as { usage?: unknown }).usage) };
}

// Collects a body up to `limit` bytes. Past the limit: a reply fails (undefined); an error page is cut.
function readBody(res: IncomingMessage, limit: number, strict: boolean, done: (text?: string) => void) {
  const chunks: Buffer[] = [];
  let size = 0;
  let overflowed = false;
  res.on('data', (chunk: Buffer) => {
    if (overflowed) return;
    if (strict && size + chunk.length > limit) {
      overflowed = true;
      return done(undefined);
    }
    if (size < limit) chunks.push(chunk.subarray(0, limit - size));
    size += chunk.length;
  });
  res.on('end', () => {
    if (!overflowed) done(Buffer.concat(chunks).toString('utf8'));
  });
}

function readEvents(res: IncomingMessage, stream: CompletionStream, { finish, isSettled }: Flow) {
  const parser = new SseParser();
  const consume = (payloads: () => string[]) => {
    try {
      for (const data of payloads()) {
        if (isSettled()) return; // e.g. onDelta aborted the call: deliver nothing more
        const outcome = stream.accept(data);
        if (outcome) return finish(outcome);
      }
    } catch (error) {
      finish(error instanceof SseOverflow ? stream.fail('a stream line is too long') : asError(error));
    }
  };
  res.setEncoding('utf8');
  res.on('data', (text: string) => consume(() => parser.push(text)));
  res.on('end', () => {
    consume(() => parser.end());
    finish(stream.end());
  });
}

/** Splits Server-Sent Events text into `data` payloads, whatever the chunking and line endings. */
export class SseParser {
  private pending = '';
  private data: string[] = [];

  push(text: string): string[] {
    this.pending += text;
    // A trailing \r may be the first half of a \r\n split across chunks: wait for the next one.
    const cut = this.pending.endsWith('\r') ? this.pending.length - 1 : this.pending.length;
    const lines = this.pending.slice(0, cut).split(/\r\n|\r|\n/);
    this.pending = (lines.pop() ?? '') + this.pending.slice(cut);
    if (this.pending.length > MAX_LINE_CHARS) throw new SseOverflow();
    return this.take(lines);
  }

  /** Flushes what is left when the stream ends (lenient: a last frame without its blank line counts). */
  end(): string[] {
    const lines = this.pending ? this.pending.split(/\r\n|\r|\n/) : [];
    this.pending = '';
    return this.take([...lines, '']);
  }

  private take(lines: string[]): string[] {
    const events: string[] = [];
    for (const line of lines) {
      if (line === '') {
        const payload = this.data.join('\n');
        this.data = [];
        if (payload) events.push(payload);
        continue;
      }
      const colon = line.indexOf(':');
      if (colon === 0) continue; // a comment
      if ((colon === -1 ? line : line.slice(0, colon)) !== 'data') continue; // event:, id:, retry:
      const value = colon === -1 ? '' : line.slice(colon + 1);
      this.data.push(value.startsWith(' ') ? value.slice(1) : value);
    }
    return events;
  }
}

class SseOverflow extends Error {}

// The chat-completions chunks of one streamed reply.
class CompletionStream {
  private reply = '';
  private usage: ChatUsage | null = null;
  private finished = false;

  constructor(
    private readonly url: string,
    private readonly token: string,
    private readonly onDelta: (text: string) => void,
  ) {}

  /** Takes one `data` payload; returns the outcome once the stream is decided. */
  accept(data: string): ChatReply | GatewayError | undefined {
    if (data === '[DONE]') return this.result();
    const chunk = parseJson(data) as ChunkShape | undefined;
    if (!chunk || typeof chunk !== 'object') {
      return gatewayError('not-chat-server', { url: this.url, detail: 'a stream frame is not JSON' });
    }
    if (chunk.error !== undefined) {
      const message = errorMessageOf(redact(JSON.stringify({ error: chunk.error }), this.token));
      return this.fail(message || 'an error frame');
    }
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    const content = choice?.delta?.content;
    if (typeof content === 'string' && content) {
      if (!this.reply && content === LEGACY_ERROR) return this.fail(LEGACY_ERROR);
      this.reply += content;
      if (this.reply.length > MAX_REPLY_BYTES) {
        return gatewayError('not-chat-server', { url: this.url, detail: 'the reply is too large' });
      }
      this.onDelta(content);
    }
    if (typeof choice?.finish_reason === 'string') this.finished = true;
    this.usage = usageOf(chunk.usage) ?? this.usage;
    return undefined;
  }

  /** The stream ended: without [DONE], only a finished reply counts. */
  end(): ChatReply | GatewayError {
    return this.finished ? this.result() : this.fail('the stream ended before the reply was complete');
  }

  fail(detail: string): GatewayError {
    return gatewayError('stream-error', { url: this.url, detail });
  }

  private result(): ChatReply | GatewayError {
    if (this.reply === LEGACY_ERROR) return this.fail(LEGACY_ERROR);
    return { reply: this.reply, usage: this.usage };
  }
}

interface ChunkShape {
  error?: unknown;
  choices?: Array<{ delta?: { content?: unknown }; finish_reason?: unknown } | undefined>;
  usage?: unknown;
}

function completionText(parsed: unknown): string | undefined {
  const choices = (parsed as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices)) return undefined;
  const message = (choices[0] as { message?: { content?: unknown } } | undefined)?.message;
  if (!message || typeof message !== 'object') return undefined;
  if (message.content === null) return ''; // e.g. a reply made only of tool calls
  return typeof message.content === 'string' ? message.content : undefined;
}

function usageOf(value: unknown): ChatUsage | null {
  if (!value || typeof value !== 'object') return null;
  const raw = value as Record<string, unknown>;
  const promptTokens = tokens(raw.prompt_tokens);
  const completionTokens = tokens(raw.completion_tokens);
  const totalTokens = tokens(raw.total_tokens) || promptTokens + completionTokens;
  return totalTokens === 0 ? null : { promptTokens, completionTokens, totalTokens };
}

function tokens(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

// onDelta is the caller's code and may throw anything; a non-Error must still reject the call.
function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

// A gateway may echo what it was sent; the token must never reach a message or the console.
function redact(text: string, token: string): string {
  return token ? text.split(token).join('[redacted]') : text;
}
