/** The published SAMVAD 1.2 error codes and the HTTP statuses this agent answers them with. */
export const ERROR_CODES = [
  'AUTH_FAILED',
  'REPLAY_DETECTED',
  'SKILL_NOT_FOUND',
  'SCHEMA_INVALID',
  'INJECTION_DETECTED',
  'DELEGATION_EXCEEDED',
  'RATE_LIMITED',
  'TOKEN_BUDGET_EXCEEDED',
  'AGENT_UNAVAILABLE',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** The pipeline step that refused a request: the operator's log shows it as the verdict. */
export type RefusalStep =
  | 'size'
  | 'shape'
  | 'signature'
  | 'delegation'
  | 'chain'
  | 'timestamp'
  | 'trust'
  | 'rate-limit'
  | 'nonce'
  | 'skill'
  | 'input'
  | 'access'
  | 'handler';

export interface ProtocolErrorOptions {
  step?: RefusalStep;
  retryAfterSeconds?: number;
  /** The internal reason (e.g. a gateway diagnosis): for the operator's log, never sent to callers. */
  cause?: unknown;
}

/**
 * An error meant for the caller: its message is safe to send and says what to fix.
 * Anything thrown that is not a ProtocolError is answered with a generic message (never leaked).
 */
export class ProtocolError extends Error {
  readonly step: RefusalStep | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly code: ErrorCode,
    readonly httpStatus: number,
    message: string,
    options: ProtocolErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProtocolError';
    this.step = options.step;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export const authFailed = (message: string, step: RefusalStep = 'signature') =>
  new ProtocolError('AUTH_FAILED', 401, message, { step });
export const forbidden = (message: string) =>
  new ProtocolError('AUTH_FAILED', 403, message, { step: 'trust' });
export const schemaInvalid = (message: string, step: RefusalStep = 'shape', httpStatus = 400) =>
  new ProtocolError('SCHEMA_INVALID', httpStatus, message, { step });

export interface ErrorBody {
  traceId: string;
  spanId: string;
  status: 'error';
  code: ErrorCode;
  message: string;
  error: { code: ErrorCode; message: string };
}

/** Both shapes at once: top-level code/message (product spec) and error{} (what SDK clients read). */
export function errorBody(code: ErrorCode, message: string, traceId = '', spanId = ''): ErrorBody {
  return { traceId, spanId, status: 'error', code, message, error: { code, message } };
}
