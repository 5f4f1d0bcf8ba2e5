import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import {
  DEFAULT_ENDPOINTS,
  type AgentCard,
  type Envelope,
  type Mode,
  type Signer,
  type TaskRecord,
} from '../protocol/index.js';
import { baseUrlFor } from './base-url.js';
import { CardCache, type BeforeRequest } from './card-fetch.js';
import { createDelegationToken, type DelegationClaimsInput } from './delegation.js';
import { buildEnvelope, signEnvelope, type SignatureForm, type SignedRequest } from './envelope.js';
import { AgentCallError, ClientError } from './errors.js';
import { readCapped } from '../lib/http.js';
import { deadline, fetchOrExplain, parseBody } from './http.js';
import { readSse, type SseBlock } from './sse-reader.js';
import { verifyEvent, verifyResponse, type KeyLookup } from './verify.js';

export interface AgentClientOptions {
  /** Our agent:// id: the envelope's `from`. */
  id: string;
  signer: Signer;
  /** Default 'headers': what the reference SDK sends. */
  form?: SignatureForm;
  /** Reach loopback ids (127.x, localhost, *.localhost -> 127.0.0.1, [::1]) over plain http: testing only. */
  devHttp?: boolean;
  /** Replaces the id -> base URL mapping (e.g. a public id through a loopback tunnel); https unless devHttp. */
  resolveBaseUrl?: (agentId: string) => string;
  /** Per request; for streams, until the response headers arrive. Default 30 s. */
  timeoutMs?: number;
  /** Replies (and cards) go through this connection pool, e.g. one that refuses private addresses. */
  dispatcher?: Dispatcher;
  /** Replies larger than this are refused while they are read. Default REPLY_MAX_BYTES. */
  maxReplyBytes?: number;
  /**
   * Accept replies, 202s and final stream events that carry no signature at all (the protocol's own SDKs
   * sign none), marked `unsigned`; default false: refused as unverifiable. A wrong signature is always refused.
   */
  acceptUnsigned?: boolean;
  /**
   * Called before every HTTP request the client sends: card fetches (redirects and re-fetches for a new kid
   * included), calls, task submissions and polls, streams. What it throws stops the request.
   */
  beforeRequest?: BeforeRequest;
}

export interface CallOptions {
  form?: SignatureForm;
  /** Fields to set or override on the envelope (auth, nonce, timestamp, ...). */
  envelope?: Partial<Envelope>;
  signal?: AbortSignal;
  /** Check the reply's signature against the agent's card. Default true. */
  verify?: boolean;
  /** A delegation token to send (PROTOCOL.md §9): we act for its issuer, which named us as `sub`. */
  delegationToken?: string;
}

export interface CallResult {
  status: number;
  body: unknown;
  /** True when the reply's digest and signature were checked against an active key of the agent's card. */
  verified: boolean;
  /** True when it carried no signature and `acceptUnsigned` let it through. */
  unsigned: boolean;
  headers: Headers;
}

export interface StreamEvent {
  event?: string;
  /** The parsed JSON of the `data:` lines, or their text when it is not JSON. */
  data: unknown;
  raw: string;
  /** True on final events (result, error, unnamed done) whose Form B signature checked. */
  verified: boolean;
  /** True on final events that carry no signature, when `acceptUnsigned` lets them through. */
  unsigned: boolean;
}

export interface WaitOptions {
  intervalMs?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  verify?: boolean;
}

/** Replies are buffered to verify their digest; anything bigger than this is refused. */
export const REPLY_MAX_BYTES = 8 * 1024 * 1024;

/** Calls SAMVAD agents: signs requests (PROTOCOL.md §3) and verifies every reply against the agent's card. */
export class AgentClient {
  readonly id: string;
  private readonly signer: Signer;
  private readonly form: SignatureForm;
  private readonly timeoutMs: number;
  private readonly cards: CardCache;
  private readonly urls: Pick<AgentClientOptions, 'devHttp' | 'resolveBaseUrl'>;
  private readonly dispatcher: Dispatcher | undefined;
  private readonly maxReplyBytes: number;
  private readonly beforeRequest: BeforeRequest;
  private readonly acceptUnsigned: boolean;

  constructor(options: AgentClientOptions) {
    this.id = options.id;
    this.signer = options.signer;
    this.form = options.form ?? 'headers';
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.urls = { devHttp: options.devHttp ?? false, resolveBaseUrl: options.resolveBaseUrl };
    this.dispatcher = options.dispatcher;
    this.maxReplyBytes = options.maxReplyBytes ?? REPLY_MAX_BYTES;
    this.beforeRequest = options.beforeRequest ?? (() => undefined);
    this.acceptUnsigned = options.acceptUnsigned ?? false;
    this.cards = new CardCache({
      ...this.urls,
      dispatcher: options.dispatcher,
      beforeRequest: this.beforeRequest,
    });
  }

  /** The agent's card, validated; cached for its cardTTL. `force` re-fetches. */
  fetchCard(agentId: string, force = false): Promise<AgentCard> {
    return this.cards.get(agentId, force);
  }

  /** The base URL requests to `agentId` go to. */
  baseUrl(agentId: string): string {
    return baseUrlFor(agentId, this.urls);
  }

  /**
   * A delegation token from us (`iss` = our id, signed with our key) letting `subject` call the skills in
   * `scope` for us; default lifetime 10 minutes, maxDepth 1 (no further delegation).
   */
  createDelegationToken(
    subject: string,
    scope: string[],
    options: Omit<DelegationClaimsInput, 'iss' | 'sub' | 'scope' | 'maxDepth'> & { maxDepth?: number } = {},
  ): string {
    const { maxDepth = 1, ...rest } = options;
    return createDelegationToken(this.signer, { ...rest, iss: this.id, sub: subject, scope, maxDepth });
  }

  buildEnvelope(to: string, skill: string, mode: Mode, payload: object, extra?: Partial<Envelope>): Envelope {
    return buildEnvelope({ from: this.id, to, skill, mode, payload, extra });
  }

  sign(envelope: Envelope, path: string, form: SignatureForm = this.form): SignedRequest {
    return signEnvelope(envelope, path, this.signer, form);
  }

  /** POST /agent/message. Any HTTP status is returned; only a failed verification throws. */
  async call(to: string, skill: string, payload: object, opts: CallOptions = {}): Promise<CallResult> {
    const envelope = this.buildEnvelope(to, skill, 'sync', payload, envelopeExtra(opts));
    return this.post(to, DEFAULT_ENDPOINTS.message, envelope, opts);
  }

  /** POST /agent/task; anything but 202 with a taskId throws AgentCallError. */
  async submitTask(
    to: string,
    skill: string,
    payload: object,
    opts: CallOptions & { callbackUrl?: string } = {},
  ): Promise<{ taskId: string; response: CallResult }> {
    const extra = opts.callbackUrl ? { callbackUrl: opts.callbackUrl } : {};
    const envelope = this.buildEnvelope(to, skill, 'async', payload, { ...extra, ...envelopeExtra(opts) });
    const response = await this.post(to, DEFAULT_ENDPOINTS.task, envelope, opts);
    const taskId = (response.body as { taskId?: unknown } | null)?.taskId;
    if (response.status !== 202 || typeof taskId !== 'string') {
      throw callError(`${to} did not accept the task`, response);
    }
    return { taskId, response };
  }

  /** GET /agent/task/:taskId. */
  async getTask(
    to: string,
    taskId: string,
    opts: Omit<CallOptions, 'form' | 'envelope'> = {},
  ): Promise<TaskRecord> {
    return (await this.getTaskReply(to, taskId, opts)).task;
  }

  /** GET /agent/task/:taskId, with the reply it came in (its status, whether it was signed). */
  async getTaskReply(
    to: string,
    taskId: string,
    opts: Omit<CallOptions, 'form' | 'envelope'> = {},
  ): Promise<{ task: TaskRecord; response: CallResult }> {
    const path = DEFAULT_ENDPOINTS.taskStatus.replace(':taskId', encodeURIComponent(taskId));
    const response = await this.send(to, path, { method: 'GET' }, opts);
    const body = response.body as Partial<TaskRecord> | null;
    if (response.status !== 200 || typeof body?.taskId !== 'string' || typeof body.status !== 'string') {
      throw callError(`${to} did not return task ${taskId}`, response);
    }
    return { task: body as TaskRecord, response };
  }

  /** Polls until the task is done or failed; throws when timeoutMs (default 60 s) passes first. */
  async waitForTask(to: string, taskId: string, opts: WaitOptions = {}): Promise<TaskRecord> {
    const { intervalMs = 500, timeoutMs = 60_000 } = opts;
    const end = Date.now() + timeoutMs;
    for (;;) {
      const task = await this.getTask(to, taskId, opts);
      if (task.status === 'done' || task.status === 'failed') return task;
      if (Date.now() + intervalMs > end) {
        throw new ClientError(`Task ${taskId} on ${to} is not done after ${timeoutMs} ms`);
      }
      await sleep(intervalMs, undefined, { signal: opts.signal });
    }
  }

  /**
   * POST /agent/stream and yield its events as they arrive. A refusal before the stream starts throws
   * AgentCallError; a final event with a bad or missing signature throws ResponseVerificationError.
   */
  async *stream(
    to: string,
    skill: string,
    payload: object,
    opts: CallOptions = {},
  ): AsyncGenerator<StreamEvent> {
    const verify = opts.verify ?? true;
    const envelope = this.buildEnvelope(to, skill, 'stream', payload, envelopeExtra(opts));
    const url = this.baseUrl(to) + DEFAULT_ENDPOINTS.stream;
    const signed = this.sign(envelope, new URL(url).pathname, opts.form);
    // The timeout covers the wait for headers only: a stream may rightly last longer than a call.
    const connect = new AbortController();
    const timer = setTimeout(() => connect.abort(timeoutError(url, this.timeoutMs)), this.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([connect.signal, opts.signal]) : connect.signal;
    const headers = { ...signed.headers, Accept: 'text/event-stream' };
    this.beforeRequest({ method: 'POST', url });
    let response: Response;
    try {
      const init: RequestInit = { method: 'POST', body: signed.body, headers, signal, redirect: 'manual' };
      response = await fetchOrExplain(url, this.withDispatcher(init), this.timeoutMs);
    } finally {
      clearTimeout(timer);
    }
    const type = response.headers.get('content-type') ?? '';
    if (!response.ok || !type.startsWith('text/event-stream') || !response.body) {
      const result = await this.finish(to, response, verify);
      throw callError(`${to} did not open a stream`, result);
    }
    const lookup = this.lookup(to);
    const blocks = readSse(response.body);
    try {
      for (;;) {
        let next: IteratorResult<SseBlock>;
        try {
          next = await blocks.next();
        } catch (error) {
          // The body broke off, or a block passed the parser's bound: said in our words.
          throw new ClientError(`The stream from ${to} failed: ${(error as Error).message}`, {
            cause: error,
          });
        }
        if (next.done) return;
        const block = next.value;
        const data = parseJson(block.data);
        const event: StreamEvent = { data, raw: block.raw, verified: false, unsigned: false };
        if (block.event !== undefined) event.event = block.event;
        // Final events are named result or error, or unnamed: the name in the message is one of ours.
        if (verify && isFinalEvent(block.event, data)) {
          const what = `event "${block.event ?? 'done'}"`;
          const check = await verifyEvent(data, lookup, what, this.acceptUnsigned);
          event.verified = check === 'verified';
          event.unsigned = check === 'unsigned';
        }
        yield event;
      }
    } finally {
      // The consumer stopped early (or verification failed): close the body, and with it the connection.
      await blocks.return(undefined);
    }
  }

  private async post(to: string, path: string, envelope: Envelope, opts: CallOptions): Promise<CallResult> {
    const url = this.baseUrl(to) + path;
    const signed = this.sign(envelope, new URL(url).pathname, opts.form);
    return this.send(to, path, { method: 'POST', body: signed.body, headers: signed.headers }, opts);
  }

  private async send(to: string, path: string, init: RequestInit, opts: CallOptions): Promise<CallResult> {
    const url = this.baseUrl(to) + path;
    const signal = deadline(this.timeoutMs, opts.signal);
    // Never follow a redirect: it would re-send the signed body to a URL the signature was not made for.
    const request = this.withDispatcher({ ...init, signal, redirect: 'manual' });
    this.beforeRequest({ method: init.method ?? 'GET', url });
    const response = await fetchOrExplain(url, request, this.timeoutMs);
    return this.finish(to, response, opts.verify ?? true);
  }

  private withDispatcher(init: RequestInit): RequestInit {
    return this.dispatcher ? ({ ...init, dispatcher: this.dispatcher } as unknown as RequestInit) : init;
  }

  /** Reads the whole reply (bounded) and checks its Form A signature before anyone trusts the body. */
  private async finish(to: string, response: Response, verify: boolean): Promise<CallResult> {
    let bytes: Uint8Array;
    try {
      bytes = await readCapped(response, this.maxReplyBytes);
    } catch (error) {
      throw new ClientError(`The reply from ${to} was not read: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const body = parseBody(bytes);
    const check = verify
      ? await verifyResponse(response, bytes, this.lookup(to), body, this.acceptUnsigned)
      : undefined;
    return {
      status: response.status,
      body,
      verified: check === 'verified',
      unsigned: check === 'unsigned',
      headers: response.headers,
    };
  }

  private lookup(agentId: string): KeyLookup {
    return (kid) => this.cards.keyFor(agentId, kid);
  }
}

/** The caller's envelope fields; `opts.envelope` wins, so a test can still send anything. */
function envelopeExtra(opts: CallOptions): Partial<Envelope> {
  const delegation = opts.delegationToken !== undefined ? { delegationToken: opts.delegationToken } : {};
  return { ...delegation, ...opts.envelope };
}

/** The events that carry a Form B signature (PROTOCOL.md §7): named result/error and the unnamed done. */
function isFinalEvent(name: string | undefined, data: unknown): boolean {
  if (name === 'result' || name === 'error') return true;
  const done = typeof data === 'object' && data !== null && (data as { done?: unknown }).done === true;
  return (name === undefined || name === 'message') && done;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The refusal in the client's words: the status and a published code; the agent's own words stay in `body`. */
function callError(what: string, result: CallResult): AgentCallError {
  const error = new AgentCallError(what, result.status, result.body, result.unsigned);
  error.message = `${what} (HTTP ${result.status}${error.code ? ` ${error.code}` : ''})`;
  return error;
}

function timeoutError(url: string, ms: number): Error {
  const error = new Error(`No answer from ${url} within ${ms} ms`);
  error.name = 'TimeoutError';
  return error;
}
