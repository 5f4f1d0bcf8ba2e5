/** Errors the client throws; each says what happened and, where it can, what to do. */

/** The agent answered, but not with what the call expects (non-2xx, wrong status, not a stream). */
export class AgentCallError extends Error {
  /** The SAMVAD error code from the reply (`error.code` or `code`), when there is one. */
  readonly code: string | undefined;

  constructor(
    message: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    super(message);
    this.name = 'AgentCallError';
    this.code = errorCodeOf(body);
  }
}

/** A reply or a final stream event whose digest or signature does not check against the agent's card. */
export class ResponseVerificationError extends Error {
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
export class CardFetchError extends Error {
  constructor(
    message: string,
    readonly agentId: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'CardFetchError';
  }
}

/** Reads the code from either error shape of PROTOCOL.md §5 (`error{code}` first: what SDKs read). */
export function errorCodeOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as { code?: unknown; error?: { code?: unknown } };
  const code = record.error?.code ?? record.code;
  return typeof code === 'string' ? code : undefined;
}
