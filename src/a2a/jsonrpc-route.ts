import type { IncomingMessage, ServerResponse } from 'node:http';
import { A2A_ERROR_CODE, RequestMalformedError, VersionNotSupportedError } from '@a2a-js/sdk/errors';
import {
  isV1JsonRpcMethod,
  LEGACY_METHOD_TASKS_RESUBSCRIBE,
  legacyJsonRpcToV1Method,
} from '@a2a-js/sdk/compat/v0_3';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { JsonRpcTransportHandler, type A2ARequestHandler } from '@a2a-js/sdk/server';
import type { SseOptions } from '../agent/sse.js';
import { ProtocolError } from '../protocol/index.js';
import { isLegacyVersion } from './agent-card.js';
import { fixJsonRpcError, jsonRpcError, type JsonRpcErrorObject } from './a2a-errors.js';
import { callContext, scopeOf } from './call-context.js';
import type { A2ACallRecord } from './call-record.js';
import type { A2ACaller } from './chat-core.js';
import { sendJson, streamSse } from './http-io.js';
import { checkedLegacyPush } from './legacy-push-schemes.js';
import { answerId, checkParams, invalidJsonRpcRequest, isJsonRpcMethod } from './request-checks.js';
import { requestedVersion } from './version-param.js';

export type WireVersion = '1.0' | '0.3';

interface JsonRpcReply {
  jsonrpc: string;
  id: string | number | null;
  result?: unknown;
  error?: JsonRpcErrorObject;
}

/**
 * The version a JSON-RPC request speaks. `A2A-Version` decides when present (1.0, or 0.3 through the
 * SDK's compatibility layer). Without it the spec says 0.3, but OpenClaw's A2A client sends v1.0 method
 * names and shapes with no header (GATEWAY.md): a v1.0 method name is v1.0, anything else is v0.3.
 */
export function jsonRpcVersion(header: string | undefined, method: unknown): WireVersion {
  const requested = header?.trim();
  if (!requested) return isV1JsonRpcMethod(method) ? '1.0' : '0.3';
  if (/^1\.0(\.\d+)?$/.test(requested)) return '1.0';
  if (isLegacyVersion(requested)) return '0.3';
  throw new VersionNotSupportedError(
    `A2A-Version ${requested.slice(0, 20)} is not served here; send 1.0 (or 0.3).`,
  );
}

/** The SDK's two JSON-RPC transport handlers (v1.0, and v0.3 through the compat layer) on node http. */
export class JsonRpcRoute {
  private readonly v1: JsonRpcTransportHandler;
  private readonly legacy: LegacyJsonRpcTransportHandler;

  constructor(
    handler: A2ARequestHandler,
    private readonly options: { sse?: SseOptions; report(error: unknown): void },
  ) {
    this.v1 = new JsonRpcTransportHandler(handler);
    this.legacy = new LegacyJsonRpcTransportHandler(handler);
  }

  /** Answers a request whose caller is known and whose body is read; `call` is its traffic record. */
  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    caller: A2ACaller,
    body: unknown,
    call?: A2ACallRecord,
  ): Promise<void> {
    const method = (body as { method?: unknown } | null)?.method;
    const id = answerId(body);
    let version: WireVersion;
    try {
      version = jsonRpcVersion(requestedVersion(req), method);
    } catch (error) {
      if (call) call.error = error;
      return this.replyError(res, id, error, false);
    }
    const legacy = version === '0.3';
    // JSON-RPC 2.0 §5.1: -32600 "The JSON sent is not a valid Request object"; -32601 "The method does not
    // exist / is not available", whatever its params. Answered with 200, as JSON-RPC answers errors: the
    // traffic log still shows them refused.
    const invalid = invalidJsonRpcRequest(body);
    if (invalid) return this.replyRpcError(res, id, A2A_ERROR_CODE.INVALID_REQUEST, invalid, call);
    let request = body as Record<string, unknown>;
    const name = request.method as string;
    if (!isJsonRpcMethod(name, legacy)) {
      const hint = legacy
        ? ''
        : isJsonRpcMethod(name, true)
          ? ' (a v0.3 name: send it with A2A-Version: 0.3)'
          : ' (its methods are named as SendMessage, GetTask)';
      const message = `Method not found: "${name.slice(0, 64)}" is no A2A ${version} method${hint}.`;
      return this.replyRpcError(res, id, A2A_ERROR_CODE.METHOD_NOT_FOUND, message, call);
    }
    try {
      // Before the SDK's v0.3 layer, which prints what it drops of a push config (finding 4).
      if (legacy) request = checkedLegacyPush(request);
      // v0.3 names the fields checked (historyLength) as v1.0 does.
      checkParams(legacy ? legacyJsonRpcToV1Method(name) : name, request.params);
    } catch (error) {
      if (call) call.error = error;
      return this.replyError(res, id, error, legacy);
    }
    const context = callContext(caller, version, call);
    const transport = legacy ? this.legacy : this.v1;
    const answer = await transport.handle(request, context);
    if (!isStream(answer)) {
      const reply = answer as JsonRpcReply;
      if (!reply.error) return sendJson(res, 200, reply);
      const fixed = fixJsonRpcError(reply.error, scopeOf(context), legacy, this.options.report);
      return sendJson(res, fixed.status, { ...reply, error: fixed.error }, fixed.headers);
    }
    const rest = answer[Symbol.asyncIterator]();
    const errorData = (error: unknown) => ({
      jsonrpc: '2.0',
      id,
      error: jsonRpcError(scopeOf(context).refusal ?? error, legacy, this.options.report).error,
    });
    // Strict v0.3 clients read tasks/resubscribe as a stream whatever happens: its errors are events too.
    const alwaysStream = legacy && method === LEGACY_METHOD_TASKS_RESUBSCRIBE;
    const onLeave = () => scopeOf(context).leave?.();
    const plan = { rest, encode: (event: unknown) => event, errorData, onLeave, sse: this.options.sse };
    if (alwaysStream) return streamSse(res, plan);
    let first: IteratorResult<unknown>;
    try {
      first = await rest.next();
    } catch (error) {
      return this.replyError(res, id, scopeOf(context).refusal ?? error, legacy);
    }
    return streamSse(res, { ...plan, first });
  }

  /** An error before any method ran (no key, a body that is not JSON-RPC): in the shape `header` asks for. */
  refuse(req: IncomingMessage, res: ServerResponse, error: unknown): void {
    const legacy = isLegacyVersion(requestedVersion(req));
    if (error instanceof ProtocolError && error.code === 'SCHEMA_INVALID' && error.httpStatus === 400) {
      const parseError = { code: A2A_ERROR_CODE.PARSE_ERROR, message: error.message };
      return sendJson(res, 200, { jsonrpc: '2.0', id: null, error: parseError });
    }
    this.replyError(res, null, error, legacy);
  }

  /** A JSON-RPC error of the envelope's own (-32600, -32601): no A2A error type, so no details. */
  private replyRpcError(
    res: ServerResponse,
    id: JsonRpcReply['id'],
    code: number,
    message: string,
    call: A2ACallRecord | undefined,
  ): void {
    if (call) call.error = new RequestMalformedError(message);
    sendJson(res, 200, { jsonrpc: '2.0', id, error: { code, message } });
  }

  private replyError(res: ServerResponse, id: JsonRpcReply['id'], error: unknown, legacy: boolean): void {
    const mapped = jsonRpcError(error, legacy, this.options.report);
    sendJson(res, mapped.status, { jsonrpc: '2.0', id, error: mapped.error }, mapped.headers);
  }
}

function isStream(value: unknown): value is AsyncGenerator<unknown> {
  return typeof (value as AsyncGenerator<unknown>)?.[Symbol.asyncIterator] === 'function';
}
