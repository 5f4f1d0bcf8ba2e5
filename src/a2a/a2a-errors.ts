import {
  A2AError,
  A2A_ERROR_CODE,
  ERROR_INFO_TYPE,
  RequestMalformedError,
  restStatusFor,
  toJsonRpcError,
  toRestErrorBody,
} from '@a2a-js/sdk/errors';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { ProtocolError } from '../protocol/index.js';
import type { RequestScope } from './call-context.js';

/**
 * Every A2A error answer, in one place. Three kinds of error reach a transport:
 * - the gate's ProtocolError (no key, rate limited, screened...): its status, code and Retry-After hold on
 *   both transports (JSON-RPC answers with the HTTP status too, so proxies and clients see a 401 or 429);
 * - the SDK's own A2AError (task not found, not cancelable...): mapped as the SDK maps it;
 * - anything else is a bug or a store failure: a generic message, the detail only in the operator's log
 *   (a store's error text can hold a path, and the SDK would send it as is).
 */

/** JSON-RPC code for the gate's refusals: implementation-defined, clear of A2A's -32001..-32099 codes. */
export const REFUSAL_CODE = -32000;
/** google.rpc.ErrorInfo domain of the gate's refusals (A2A's own errors use a2a-protocol.org). */
export const REFUSAL_DOMAIN = 'agent-bridge';

const INTERNAL_MESSAGE = 'The agent failed to answer; the operator can see why in the agent log.';

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  408: 'DEADLINE_EXCEEDED',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  503: 'UNAVAILABLE',
};

/** The detail A2A names for validation errors (§9.5, §11.6): which field, and why. */
export const BAD_REQUEST_TYPE = 'type.googleapis.com/google.rpc.BadRequest';

/**
 * A request parameter refused (InvalidParams: JSON-RPC -32602, HTTP+JSON 400), its field named in the message
 * and in a google.rpc.BadRequest detail beside the ErrorInfo (§3.3.2: "Servers SHOULD specify which
 * parameter(s) failed validation and why"). The SDK maps it as the RequestMalformedError it is.
 */
export class InvalidFieldError extends RequestMalformedError {
  constructor(
    readonly field: string,
    readonly description: string,
  ) {
    super(`${field} ${description}`);
    // The SDK maps its errors by name (toJsonRpcError, restStatusFor).
    this.name = 'RequestMalformedError';
  }

  badRequest() {
    return {
      '@type': BAD_REQUEST_TYPE,
      fieldViolations: [{ field: this.field, description: this.description }],
    };
  }
}

export interface ErrorReply {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

type Report = (error: unknown) => void;

/** The HTTP+JSON answer (google.rpc.Status with an ErrorInfo, §11.6). */
export function restErrorReply(error: unknown, report: Report): ErrorReply {
  if (error instanceof ProtocolError) {
    return {
      status: error.httpStatus,
      headers: refusalHeaders(error),
      body: {
        error: {
          code: error.httpStatus,
          status: STATUS_NAMES[error.httpStatus] ?? 'UNKNOWN',
          message: error.message,
          details: [errorInfo(error)],
        },
      },
    };
  }
  if (error instanceof A2AError) {
    const status = restStatusFor(error);
    if (status < 500) {
      const body = toRestErrorBody(error, status);
      if (error instanceof InvalidFieldError) body.error.details.push(error.badRequest());
      return { status, headers: {}, body };
    }
  }
  report(error);
  return { status: 500, headers: {}, body: toRestErrorBody(new Error(INTERNAL_MESSAGE), 500) };
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** The JSON-RPC error object and the HTTP status to send it with; `legacy`: v0.3 shapes. */
export function jsonRpcError(
  error: unknown,
  legacy: boolean,
  report: Report,
): { status: number; headers: Record<string, string>; error: JsonRpcErrorObject } {
  if (error instanceof ProtocolError) {
    const code = error.code === 'SCHEMA_INVALID' ? A2A_ERROR_CODE.INVALID_PARAMS : REFUSAL_CODE;
    const info = errorInfo(error);
    const data = legacy ? { reason: info.reason, ...info.metadata } : [info];
    return {
      status: error.httpStatus,
      headers: refusalHeaders(error),
      error: { code, message: error.message, data },
    };
  }
  if (error instanceof A2AError) {
    const mapped: JsonRpcErrorObject = legacy
      ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(error)
      : toJsonRpcError(error);
    if (!legacy && error instanceof InvalidFieldError && Array.isArray(mapped.data)) {
      mapped.data = [...(mapped.data as unknown[]), error.badRequest()];
    }
    if (mapped.code !== A2A_ERROR_CODE.INTERNAL_ERROR) return { status: 200, headers: {}, error: mapped };
  }
  report(error);
  return {
    status: 500,
    headers: {},
    error: { code: A2A_ERROR_CODE.INTERNAL_ERROR, message: INTERNAL_MESSAGE },
  };
}

/**
 * An error object the SDK's JSON-RPC handler already wrote into its response. The gate's refusal is found
 * again on the request (the SDK keeps only its text). An internal error raised before the request reached
 * the handler came from decoding the caller's malformed params; any other internal error's text is
 * replaced (it may hold a path).
 */
export function fixJsonRpcError(
  written: JsonRpcErrorObject,
  scope: RequestScope,
  legacy: boolean,
  report: Report,
): { status: number; headers: Record<string, string>; error: JsonRpcErrorObject } {
  if (scope.refusal) return jsonRpcError(scope.refusal, legacy, report);
  if (written.code !== A2A_ERROR_CODE.INTERNAL_ERROR) return { status: 200, headers: {}, error: written };
  if (!scope.decoded) {
    const message = `The params do not have the shape A2A ${legacy ? '0.3' : '1.0'} gives this method; check them against the spec.`;
    return { status: 200, headers: {}, error: { code: A2A_ERROR_CODE.INVALID_PARAMS, message } };
  }
  return jsonRpcError(new Error(written.message), legacy, report);
}

function errorInfo(error: ProtocolError) {
  const metadata: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) metadata.retryAfterSeconds = String(error.retryAfterSeconds);
  return { '@type': ERROR_INFO_TYPE, reason: error.code, domain: REFUSAL_DOMAIN, metadata };
}

function refusalHeaders(error: ProtocolError): Record<string, string> {
  const headers: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) headers['Retry-After'] = String(error.retryAfterSeconds);
  // RFC 9110 §11.6.1: a 401 names the scheme to use (the card's security scheme: an A2A key as a bearer).
  if (error.httpStatus === 401) headers['WWW-Authenticate'] = 'Bearer realm="a2a"';
  if (error.httpStatus === 413) headers.Connection = 'close';
  return headers;
}
