/**
 * Errors the client throws; each says what happened and, where it can, what to do. Their messages are the
 * client's own words (ids and URLs it was given, HTTP statuses, codes from the published set), never text
 * the other agent sent: that agent's values are on fields (`body`), for the caller to show with care.
 */
import { ERROR_CODES, type ErrorCode } from '../protocol/index.js';

/** Any failure the client reports in its own words (a network failure, a refused reply, ...). */
export class ClientError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ClientError';
  }
}

/** The agent answered, but not with what the call expects (non-2xx, wrong status, not a stream). */
export class AgentCallError extends ClientError {
  /** The SAMVAD error code from the reply (`error.code` or `code`), when it is a published one. */
  readonly code: ErrorCode | undefined;

  constructor(
    message: string,
    readonly status: number,
    readonly body: unknown,
    /** The answer carried no signature (accepted as such: the client's `acceptUnsigned`). */
    readonly unsigned = false,
  ) {
    super(message);
    this.name = 'AgentCallError';
    this.code = errorCodeOf(body);
  }
}

/** A reply or a final stream event whose digest or signature does not check against the agent's card. */
export class ResponseVerificationError extends ClientError {
  constructor(
    message: string,
    readonly status?: number,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'ResponseVerificationError';
  }
}

/** The agent card could not be fetched, was refused by the fetch limits, or is not a valid card. */
export class CardFetchError extends ClientError {
  constructor(
    message: string,
    readonly agentId: string,
    options?: ErrorOptions,
    /** Where the card fetch was redirected to another origin: the other host's text, never in the message. */
    readonly redirectedTo?: string,
  ) {
    super(message, options);
    this.name = 'CardFetchError';
  }
}

/**
 * The published code of either error shape of PROTOCOL.md §5 (`error{code}` first: what SDKs read);
 * undefined when there is none or it is not one of the published codes.
 */
export function errorCodeOf(body: unknown): ErrorCode | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as { code?: unknown; error?: { code?: unknown } };
  const code = record.error?.code ?? record.code;
  return ERROR_CODES.find((known) => known === code);
}
