// The bridge's client for the gateway's OpenAI-compatible chat-completions endpoint (GATEWAY.md),
// plain and streaming. undici's dispatcher on a keep-alive pool per gateway, rather than node:http or fetch:
// it is the hot path, and node:http cost three times its CPU per call.
import http from 'node:http';
import https from 'node:https';
import { StringDecoder } from 'node:string_decoder';
import { Pool, type Dispatcher } from 'undici';
import { diagnoseConnectionError, diagnoseResponse, errorMessageOf, gatewayError } from './diagnosis.js';
import type { GatewayError, UnusableResponse } from './diagnosis.js';
import type { SystemMessage } from './framing.js';

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

/** An image for the user message, as an OpenAI `image_url` part with a data: URL (GATEWAY.md, images). */
export interface ChatImage {
  mediaType: string;
  base64: string;
}

export interface ChatCall {
  message: string;
  /** Images beside the message: the user message's content becomes a list of parts. */
  images?: readonly ChatImage[];
  /** Instructions the caller cannot influence (who is calling, that its text is untrusted input). */
  system?: SystemMessage;
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

/** What a call that ended without its reply had cost by then (see `partialCost`). */
export interface PartialCost {
  /** The gateway's own count, when it had sent it before the end. */
  usage: ChatUsage | null;
  /** Characters of reply already handed to `onDelta`. */
  deliveredChars: number;
}

const CHAT_PATH = '/v1/chat/completions';
const MAX_REPLY_BYTES = 8 * 1024 * 1024; // a bigger answer is not a chat reply; never buffer without bound
const MAX_ERROR_BYTES = 16 * 1024; // enough to diagnose an error page
const MAX_LINE_CHARS = 1024 * 1024; // one SSE line; a longer one is a broken stream
const LEGACY_ERROR = 'Error: internal error'; // how older OpenClaw builds reported a failed run
const CLOSED_EARLY = 'the connection closed before the reply was complete';

// Keep-alive agents for the health probe (gateway-health.ts), which is not on the hot path.
const agents = {
  http: new http.Agent({ keepAlive: true, scheduling: 'lifo' }),
  https: new https.Agent({ keepAlive: true, scheduling: 'lifo' }),
};

/** The shared keep-alive agent for a gateway URL (the health probe's node:http requests). */
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
  return new Promise<ChatReply>((resolve, reject) => new Exchange(request, true, resolve, reject).start());
}

// Recorded only for failures: a call that succeeds pays nothing for it.
const partialCosts = new WeakMap<Error, PartialCost>();

/**
 * What the call that failed with `error` had cost: set when the gateway had the call and had not answered in
 * full (the caller left, the call timed out, the connection dropped, a stream broke off), so hanging up is
 * no way around the budget. Undefined when the gateway never had it, or answered it with an error.
 */
export function partialCost(error: unknown): PartialCost | undefined {
  return error instanceof Error ? partialCosts.get(error) : undefined;
}

/**
 * One gateway URL: its chat path and keep-alive pool, worked out once (this is the hot path). Its own
 * deadlines are off (`0`): the call's timeout governs, as a whole or, when streaming, as silence.
 */
class Target {
  readonly path: string;
  readonly pool: Pool;
  /**
   * Connections open and calls sent and not settled, counted here: whether a call goes out on an idle
   * connection is `connected > inFlight`. undici's `pool.stats` builds an object and walks every connection
   * six times per read: about 2% of a call's CPU at 32 calls in flight.
   */
  connected = 0;
  inFlight = 0;
  private headers: { token: string; plain: RequestHeaders; stream: RequestHeaders } | undefined;

  constructor(readonly endpoint: URL) {
    this.path = `${endpoint.pathname}${endpoint.search}`;
    // The call's own timer decides how long a call may take (undici's deadlines are off); connecting to a
    // gateway that does not answer gives up sooner, and calls past the connection cap wait their turn.
    this.pool = new Pool(endpoint.origin, {
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: { timeout: CONNECT_TIMEOUT_MS },
      connections: MAX_CONNECTIONS,
    });
    this.pool.on('connect', () => this.connected++);
    this.pool.on('disconnect', () => this.connected--);
  }

  /** The request headers, the same for every call with this token (undici does not change them). */
  headersFor(token: string, stream: boolean): RequestHeaders {
    if (this.headers?.token !== token) {
      const common = {
        authorization: `Bearer ${token}`,
        'x-openclaw-scopes': 'operator.write',
        'x-gateway-scopes': 'operator.write',
        'content-type': 'application/json',
        // OpenClaw's message channel: every bridged call arrives as `samvad`, whatever the caller says.
        'x-openclaw-message-channel': 'samvad',
      };
      this.headers = {
        token,
        plain: { ...common, accept: 'application/json' },
        stream: { ...common, accept: 'text/event-stream' },
      };
    }
    return stream ? this.headers.stream : this.headers.plain;
  }
}

type RequestHeaders = Record<string, string>;

const targets = new Map<string, Target>();

function targetFor(baseUrl: string): Target {
  let found = targets.get(baseUrl);
  if (!found) {
    found = new Target(gatewayEndpoint(baseUrl, CHAT_PATH));
    if (targets.size >= 16) {
      // Settings changed many times: the old pools finish what they carry, then close.
      for (const old of targets.values()) old.pool.close().catch(() => {});
      targets.clear();
    }
    targets.set(baseUrl, found);
  }
  return found;
}

interface Prepared {
  config: GatewayConfig;
  /** The call and its body are let go once it is settled (see Exchange.cleanUp). */
  call: ChatCall;
  target: Target;
  stream: boolean;
  body: string;
}

// Node's rule for a header value (RFC 9110 field-value): a token with a line break would add headers.
const INVALID_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

function prepare(config: GatewayConfig, call: ChatCall): Prepared {
  let target: Target;
  try {
    target = targetFor(config.url);
  } catch {
    throw gatewayError('not-configured', { detail: 'the gateway URL is not a valid http(s) URL' });
  }
  // An unauthenticated call would count as a failed login towards the gateway's lockout.
  if (!config.token) throw gatewayError('not-configured', { detail: 'no gateway token is set' });
  if (INVALID_HEADER_CHAR.test(config.token)) {
    throw gatewayError('not-configured', {
      detail: 'the gateway token contains characters not allowed in HTTP',
    });
  }
  const stream = call.onDelta !== undefined;
  // JSON.stringify({model, messages, user?, stream?, stream_options?}), written out: the framing comes
  // escaped already (framing.ts escapes a sender's parts once). The caller's text goes only in the user
  // message; the framing is a system message it cannot touch.
  const system = call.system?.text ? `{"role":"system","content":${call.system.json}},` : '';
  const user = call.user ? `,"user":${JSON.stringify(call.user)}` : '';
  const content = call.images?.length ? userParts(call.message, call.images) : JSON.stringify(call.message);
  const body =
    `{"model":${JSON.stringify(config.model || 'openclaw')},` +
    `"messages":[${system}{"role":"user","content":${content}}]${user}` +
    `${stream ? ',"stream":true,"stream_options":{"include_usage":true}' : ''}}`;
  return { config, call, target, stream, body };
}

/**
 * The user message as OpenAI content parts: its text, then each image as a data: URL, the form OpenClaw takes
 * (URL-sourced images it refuses unless its `images.allowUrl` is on). Base64 needs no JSON escaping.
 */
function userParts(message: string, images: readonly ChatImage[]): string {
  const parts = [`{"type":"text","text":${JSON.stringify(message)}}`];
  for (const image of images) {
    parts.push(`{"type":"image_url","image_url":{"url":"data:${image.mediaType};base64,${image.base64}"}}`);
  }
  return `[${parts.join(',')}]`;
}

// Node's documented keep-alive race (the server closed an idle connection just as we reused it) is retried
// once; nothing else is, since every call starts a paid agent run. The race shows as a reset within moments
// of sending, before any answer; a later reset may come from a run that had started, so it is not retried
// (a second, paid run would be worse than an error).
const KEEP_ALIVE_RACE_MS = 250;
const CONNECT_TIMEOUT_MS = 10_000;
/** Connections to one gateway at once; more calls queue (their timers run meanwhile). */
const MAX_CONNECTIONS = 256;
const RESETS = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);
const ONCE = { once: true } as const;

/**
 * One HTTP exchange, as undici's handler: a small object per call rather than a set of closures. Every
 * outcome goes through `finish` once; after it, late events are ignored.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private settled = false;
  private responded = false;
  private controller: Dispatcher.DispatchController | undefined;
  private timer: NodeJS.Timeout | undefined;
  private sentAt = 0;
  /** An idle connection was open when the call was sent: it went out on a reused one. */
  private reused = false;
  /** Counted in its target's `inFlight` (until cleanUp). */
  private counted = false;
  private status = 0;
  private contentType = '';
  private retryAfter: string | undefined;
  /** A plain answer (or an error page), kept up to `limit` bytes. */
  private chunks: Buffer[] = [];
  private size = 0;
  private limit = MAX_REPLY_BYTES;
  /** A 2xx answer must fit whole; an error page is cut. */
  private strict = true;
  /** An event stream being read. */
  private events: EventReader | undefined;

  constructor(
    private readonly p: Prepared,
    private readonly canRetry: boolean,
    private readonly resolve: (reply: ChatReply) => void,
    private readonly reject: (error: Error) => void,
  ) {}

  start(): void {
    const { target, config, call } = this.p;
    call.signal?.addEventListener('abort', this, ONCE);
    // Plain mode: one deadline for the whole call. Stream mode: re-armed on every byte (idle timeout),
    // because a minute of silence is normal while the agent uses tools.
    this.timer = setTimeout(timedOut, config.timeoutMs, this);
    this.sentAt = Date.now();
    // With an idle connection open, the call goes out on it (a reused one).
    this.reused = target.connected > target.inFlight;
    target.inFlight++;
    this.counted = true;
    target.pool.dispatch(
      {
        path: target.path,
        method: 'POST',
        headers: target.headersFor(config.token, this.p.stream),
        body: this.p.body,
      },
      this,
    );
  }

  /** The caller's signal fired (EventTarget calls this for the listener object). */
  handleEvent(): void {
    this.finish(gatewayError('aborted'));
  }

  /** @internal */
  timeout(): void {
    this.finish(gatewayError('timeout', { url: this.p.config.url, timeoutMs: this.p.config.timeoutMs }));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Settled while waiting for a connection: nothing may be sent now.
    if (this.settled) controller.abort(new Error('the call already ended'));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (this.settled || statusCode < 200) return; // 1xx: informational, the answer follows
    this.responded = true;
    const { stream, config, call } = this.p;
    if (stream) this.timer?.refresh(); // the first byte came; from now on the timeout measures silence
    this.status = statusCode;
    this.contentType = String(headers['content-type'] ?? '').toLowerCase();
    const retryAfter = headers['retry-after'];
    this.retryAfter = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
    const ok = statusCode >= 200 && statusCode < 300;
    if (stream && ok && this.contentType.includes('text/event-stream')) {
      this.events = new EventReader(new CompletionStream(config.url, config.token, call.onDelta ?? noop));
      return;
    }
    this.limit = ok ? MAX_REPLY_BYTES : MAX_ERROR_BYTES;
    this.strict = ok;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    // Only an event stream's bytes count as life: an error page trickled byte by byte must not hold the call.
    if (this.events) {
      this.timer?.refresh();
      return this.consume(this.events.push(chunk));
    }
    // Past the limit: a reply fails; an error page is cut.
    if (this.strict && this.size + chunk.length > this.limit) {
      const { url } = this.p.config;
      const detail = 'the reply is too large';
      return this.finish(gatewayError('not-chat-server', { url, httpStatus: this.status, detail }));
    }
    if (this.size < this.limit) this.chunks.push(chunk.subarray(0, this.limit - this.size));
    this.size += chunk.length;
  }

  onResponseEnd(): void {
    if (this.settled) return;
    if (this.events) {
      this.consume(this.events.end());
      if (!this.settled) this.finish(this.events.stream.end());
      return;
    }
    const { config, call } = this.p;
    const text = (
      this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks)
    ).toString('utf8');
    const answer = {
      status: this.status,
      contentType: this.contentType,
      body: text,
      retryAfter: this.retryAfter,
    };
    const outcome = interpretBody(answer, config.url, config.token);
    try {
      // A server that ignored `stream: true` still gets its reply delivered, as one delta.
      if (!(outcome instanceof Error) && outcome.reply) call.onDelta?.(outcome.reply);
      this.finish(outcome);
    } catch (error) {
      this.finish(asError(error));
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.settled) return;
    const { url } = this.p.config;
    if (this.responded) return this.finish(gatewayError('unreachable', { url, detail: CLOSED_EARLY }));
    const code = (error as { code?: unknown }).code;
    const race = Date.now() - this.sentAt < KEEP_ALIVE_RACE_MS;
    if (this.canRetry && race && this.reused && typeof code === 'string' && RESETS.has(code)) {
      this.cleanUp();
      new Exchange(this.p, false, this.resolve, this.reject).start();
      return;
    }
    this.finish(diagnoseConnectionError(error, url));
  }

  // Delivers the stream's outcome once it is decided; onDelta may throw (the caller's code).
  private consume(payloads: string[] | SseOverflow): void {
    const { events } = this;
    if (!events) return;
    if (payloads instanceof SseOverflow) return this.finish(events.stream.fail('a stream line is too long'));
    try {
      for (const data of payloads) {
        if (this.settled) return; // e.g. onDelta aborted the call: deliver nothing more
        const outcome = events.stream.accept(data);
        if (outcome) return this.finish(outcome);
      }
    } catch (error) {
      this.finish(asError(error));
    }
  }

  private finish(outcome: ChatReply | Error): void {
    if (this.settled) return;
    const { controller, p } = this;
    // Sent (a connection took it) and not answered in full: the gateway was working on it, or streaming.
    if (outcome instanceof Error && controller && (!this.responded || this.events))
      partialCosts.set(outcome, this.events?.stream.partialCost() ?? { usage: null, deliveredChars: 0 });
    this.cleanUp();
    p.call = SETTLED;
    p.body = '';
    if (outcome instanceof Error) {
      this.reject(outcome);
      // Frees the connection (and so aborts the gateway's run); a no-op once the answer was read.
      controller?.abort(outcome);
    } else {
      this.resolve(outcome);
    }
  }

  private cleanUp(): void {
    this.settled = true;
    if (this.counted) this.p.target.inFlight--;
    this.counted = false;
    clearTimeout(this.timer);
    this.p.call.signal?.removeEventListener('abort', this);
    // undici keeps its request, and so this handler, until a GC of old objects, long after the call: what
    // the call carried is let go now. Otherwise old objects keep young ones alive, they are promoted in turn,
    // and the agent's memory grows under load (finish also lets go of the call and its body).
    this.controller = undefined;
    this.chunks = [];
    this.events = undefined;
  }
}

const SETTLED: ChatCall = { message: '', user: '' };

function timedOut(exchange: Exchange): void {
  exchange.timeout();
}

const noop = (): void => {};

/** A streamed answer: bytes to text (a character may span chunks), text to `data` payloads. */
class EventReader {
  private readonly decoder = new StringDecoder('utf8');
  private readonly parser = new SseParser();

  constructor(readonly stream: CompletionStream) {}

  push(chunk: Buffer): string[] | SseOverflow {
    try {
      return this.parser.push(this.decoder.write(chunk));
    } catch (error) {
      if (error instanceof SseOverflow) return error;
      throw error;
    }
  }

  end(): string[] | SseOverflow {
    const rest = this.decoder.end();
    const last = rest ? this.push(Buffer.from(rest)) : [];
    return last instanceof SseOverflow ? last : [...last, ...this.parser.end()];
  }
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

  /** What was passed on so far, and the gateway's count if it came. */
  partialCost(): PartialCost {
    return { usage: this.usage, deliveredChars: this.reply.length };
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
