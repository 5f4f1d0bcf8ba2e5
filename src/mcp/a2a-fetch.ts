/**
 * The one way the A2A SDK's client reaches another agent (its `fetchImpl`): every request checked against
 * the operator's outbound policy (an interface the card lists on another host too), counted against the
 * per-minute cap, sent through the public-only connection pool (private, link-local and loopback addresses
 * refused after DNS), bounded by the call's deadline, never redirected, its answer cut at the reply limit;
 * the operator's credential for exactly that origin added, and nothing else.
 */
import { StreamResponse } from '@a2a-js/sdk';
import { SseParser, type SseBlock } from '../client/index.js';
import { appFetch } from '../lib/http.js';
import { publicOnlyDispatcher } from '../lib/public-dispatcher.js';
import { isLoopbackHost, normalizeAgentId } from '../protocol/index.js';
import { originKey, type A2ACredentials } from './a2a-credentials.js';
import type { CallLog, OutboundFrame } from './outbound-frame.js';
import {
  OutboundError,
  checkOutboundPolicy,
  type A2AAgentRef,
  type OutboundSettings,
} from './outbound-policy.js';

/** One A2A tool call, as its requests see it. */
export interface A2ACallLog extends CallLog {
  /** The agent once parsed (undefined while the model's text is being read). */
  ref?: A2AAgentRef;
  /** A reply was cut at this limit: whatever the SDK makes of the broken body, this is what happened. */
  tooLarge?: string;
  /** The network failed before an answer (the code, never a message: a TLS message quotes the peer). */
  unreachable?: string;
}

export interface GuardedFetchOptions {
  frame: OutboundFrame;
  settings: OutboundSettings;
  call: A2ACallLog & { ref: A2AAgentRef };
  credentials: A2ACredentials;
  /** The call's deadline; each request is bounded by it too. */
  signal: AbortSignal;
  /** Each answer's bytes at most (the reply limit; a card's own, smaller), and where that limit comes from. */
  maxBytes: number;
  limitNote: string;
}

/** A fetch for the SDK's transports and card resolver, under every rule above. */
export function guardedFetch(options: GuardedFetchOptions): typeof fetch {
  const { frame, settings, call, credentials, signal, maxBytes, limitNote } = options;
  const dispatcher = publicOnlyDispatcher(settings.devHttpPeers);
  const send = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const target = input instanceof Request ? input.url : String(input);
    if (!URL.canParse(target)) {
      throw new OutboundError(
        'handler',
        502,
        `The card of ${call.callee} gives an address for this request that is not a URL: nothing was sent.`,
        { untrusted: [{ what: 'the address its card gives', value: target }] },
      );
    }
    const url = new URL(target);
    checkRequestTarget(url, call.ref, settings);
    frame.takeRequest();
    // Names in lower case (Headers writes them so), so the credential replaces any header of its name.
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    for (const [name, value] of Object.entries(credentials.headersFor(url) ?? {}))
      headers[name.toLowerCase()] = value;
    if (typeof init.body === 'string') call.bytesOut += Buffer.byteLength(init.body);
    const bounded = init.signal ? AbortSignal.any([init.signal, signal]) : signal;
    let response: Response;
    try {
      const request = {
        ...init,
        headers,
        signal: bounded,
        // A redirect would carry the message (and a credential) to a URL nobody checked.
        redirect: 'manual',
        dispatcher,
      };
      response = (await appFetch(url, request as Parameters<typeof appFetch>[1])) as unknown as Response;
    } catch (error) {
      if (!bounded.aborted) call.unreachable = networkCode(error);
      throw error;
    }
    call.status = response.status;
    // The A2A version the SDK's client spoke (it sends it on every request): 1.0 events are decoded first.
    const v1 = /^1\./.test(headers['a2a-version'] ?? '');
    return cappedResponse(response, { maxBytes, limitNote, v1 }, call);
  };
  return send as typeof fetch;
}

/**
 * A request's target under the operator's policy. The agent itself passed it before anything was sent; an
 * interface its card lists elsewhere must pass it too (an allowlisted agent must not point the bridge at
 * another host). Addresses from the card are named only in a block: its text, not the bridge's.
 */
function checkRequestTarget(url: URL, agent: A2AAgentRef, settings: OutboundSettings): void {
  if (originKey(url) === agent.origin) return;
  const plainLoopback = url.protocol === 'http:' && settings.devHttpPeers && isLoopbackHost(url.hostname);
  const refusal = (why: string) =>
    new OutboundError(
      'access',
      403,
      `The card of ${agent.origin} sends this request to another address, and ${why}: nothing was sent there.`,
      { untrusted: [{ what: 'the address its card gives', value: url.href }] },
    );
  if (url.protocol !== 'https:' && !plainLoopback) throw refusal('that address is not https');
  try {
    checkOutboundPolicy(settings, normalizeAgentId(`agent://${url.host}`));
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    throw refusal(
      settings.outbound === 'allowlist'
        ? "its host is not on the operator's list of agents this agent may call"
        : 'its host is not a public address',
    );
  }
}

interface ReadRules {
  maxBytes: number;
  limitNote: string;
  /** The request spoke A2A 1.0: its events are checked against the 1.0 codec too (`jsonEvents`). */
  v1: boolean;
}

/** The answer with its body counted and cut at `maxBytes` (memory exhaustion; the reply limit). */
function cappedResponse(response: Response, rules: ReadRules, call: A2ACallLog): Response {
  const { maxBytes, limitNote } = rules;
  const tooLarge = () => {
    call.tooLarge = `${maxBytes} bytes allowed ${limitNote}`;
    return new OutboundError(
      'size',
      502,
      `The answer from ${call.callee} is larger than the ${call.tooLarge}, so it was not read.`,
    );
  };
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    void response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!response.body) return response;
  let size = 0;
  let body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        call.bytesIn += chunk.byteLength;
        if (size > maxBytes) controller.error(tooLarge());
        else controller.enqueue(chunk);
      },
    }),
  );
  if (response.headers.get('content-type')?.startsWith('text/event-stream'))
    body = body.pipeThrough(jsonEvents(call, rules.v1));
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/**
 * An event stream passed on unchanged, once each of its events is known to be one the SDK's client reads
 * without printing it: JSON, and for A2A 1.0 an event its ProtoJSON codec decodes. Its HTTP+JSON transport
 * prints an event it cannot parse or decode, whole (up to the reply limit), to stderr, and the operator's
 * terminal is no place for a callee's text (escape sequences, forged log lines: outside review, finding 6).
 * Refused here instead, in the bridge's words, the event in a block.
 */
function jsonEvents(call: A2ACallLog, v1: boolean): TransformStream<Uint8Array, Uint8Array> {
  const parser = new SseParser();
  const decoder = new TextDecoder('utf-8');
  const check = (blocks: SseBlock[], controller: TransformStreamDefaultController<Uint8Array>) => {
    for (const block of blocks) {
      const problem = eventProblem(block, v1);
      if (problem === undefined) continue;
      controller.error(
        new OutboundError('handler', 502, `The stream from ${call.callee} sent an event ${problem}.`, {
          untrusted: [{ what: 'the event it sent', value: block.data }],
        }),
      );
      return false;
    }
    return true;
  };
  return new TransformStream({
    transform(chunk, controller) {
      try {
        if (check(parser.push(decoder.decode(chunk, { stream: true })), controller))
          controller.enqueue(chunk);
      } catch (error) {
        controller.error(error);
      }
    },
    flush(controller) {
      check(parser.push(decoder.decode()), controller);
    },
  });
}

/**
 * What the SDK's client would fail on in this event, in the bridge's words; undefined when it reads it. For
 * A2A 1.0 the same decoding its transports run: StreamResponse.fromJSON of the event (HTTP+JSON) or of a
 * JSON-RPC answer's result; an `error` event is an error body, not decoded. (v0.3 events are translated by
 * its compatibility layer, which throws without printing.)
 */
function eventProblem(block: SseBlock, v1: boolean): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(block.data);
  } catch {
    return 'that is not JSON';
  }
  if (!v1 || block.event === 'error') return undefined;
  const rpc = typeof json === 'object' && json !== null && 'jsonrpc' in json;
  const event = rpc ? (json as { result?: unknown }).result : json;
  if (rpc && event === undefined) return undefined;
  try {
    StreamResponse.fromJSON(event);
    return undefined;
  } catch {
    return 'the A2A client cannot read (not an A2A 1.0 stream event)';
  }
}

// A code, never a message: a TLS failure's message quotes the other host's certificate (its text).
function networkCode(error: unknown): string {
  const code = (error as { cause?: { code?: unknown } }).cause?.code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code) ? code : 'network error';
}
