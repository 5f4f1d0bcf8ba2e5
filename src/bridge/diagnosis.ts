// What went wrong between the bridge and the gateway, said twice: in full for the operator (diagnosis and
// fix, from GATEWAY.md's failure table) and briefly for a remote caller (no URL, token or local path).
import { oneLine } from '../lib/text.js';

export type GatewayProblem =
  | 'not-configured'
  | 'unreachable'
  | 'timeout'
  | 'endpoint-disabled'
  | 'unauthorized'
  | 'forbidden-scope'
  | 'rate-limited'
  | 'bad-request'
  | 'gateway-error'
  | 'not-chat-server'
  | 'stream-error'
  | 'aborted'
  | 'agent-missing'
  | 'agent-ambiguous'
  | 'agent-unknown'
  | 'agent-exposed'
  | 'agent-unverified'
  | 'skill-unavailable'
  | 'starting';

/** Facts known where the problem was seen; every field is optional. */
export interface ProblemContext {
  /** The gateway URL; shown to the operator only, with any user:password part removed. */
  url?: string;
  httpStatus?: number;
  retryAfterSeconds?: number;
  timeoutMs?: number;
  /** A short detail for the operator (the gateway's own error message, the socket error code). */
  detail?: string;
  /** The OpenClaw agent callers reach (for the agent rows). */
  agentId?: string;
  cause?: unknown;
}

export interface GatewayErrorInit extends ProblemContext {
  problem: GatewayProblem;
  diagnosis: string;
  fix: string;
  callerMessage: string;
}

export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  readonly problem: GatewayProblem;
  readonly httpStatus?: number;
  readonly retryAfterSeconds?: number;
  /** Operator-facing: what is wrong. Same as `message`. */
  readonly diagnosis: string;
  /** Operator-facing: what to do about it. */
  readonly fix: string;
  /** Safe to send to a remote caller: never the URL, the token or a local path. */
  readonly callerMessage: string;

  constructor(init: GatewayErrorInit) {
    super(init.diagnosis, init.cause === undefined ? undefined : { cause: init.cause });
    this.problem = init.problem;
    this.diagnosis = init.diagnosis;
    this.fix = init.fix;
    this.callerMessage = init.callerMessage;
    if (init.httpStatus !== undefined) this.httpStatus = init.httpStatus;
    if (init.retryAfterSeconds !== undefined) this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

const ENABLE_ENDPOINT =
  'Set gateway.http.endpoints.chatCompletions.enabled to true in ~/.openclaw/openclaw.json and restart the gateway.';
const READ_LOGS = "Look at the gateway's logs for the failed agent run.";

interface ProblemText {
  diagnosis: (where: string, c: ProblemContext) => string;
  fix: (c: ProblemContext) => string;
  callerMessage: string;
}

// One row per line of GATEWAY.md's failure table (plus the bridge's own: not configured, aborted).
const PROBLEMS: Record<GatewayProblem, ProblemText> = {
  'not-configured': {
    diagnosis: (_w, c) => `The gateway is not configured${suffix(c.detail, ': ')}.`,
    fix: () =>
      'Set the gateway URL (--gateway-url or GATEWAY_URL) and token (--gateway-token or GATEWAY_TOKEN); ' +
      'next to an OpenClaw gateway the bridge reads both from ~/.openclaw/openclaw.json.',
    callerMessage: "The operator's agent is not set up to answer right now.",
  },
  unreachable: {
    diagnosis: (w, c) => `Could not reach the gateway${w}${suffix(c.detail, ' (', ')')}.`,
    fix: () =>
      'Start the gateway and check that the gateway URL points at it (OpenClaw listens on http://127.0.0.1:18789 by default).',
    callerMessage: "The operator's gateway is not reachable right now.",
  },
  timeout: {
    diagnosis: (w, c) =>
      `The gateway${w} did not answer within ${seconds(c.timeoutMs)}${suffix(c.detail, ' (', ')')}.`,
    fix: () =>
      'Start the gateway and check the gateway URL; if agent turns legitimately take longer, raise the gateway timeout setting.',
    callerMessage: "The operator's gateway did not answer in time.",
  },
  'endpoint-disabled': {
    diagnosis: (w, c) =>
      `The gateway${w} has no chat-completions endpoint${status(c)}: the endpoint is disabled, ` +
      'or the URL points at something else.',
    fix: () => `${ENABLE_ENDPOINT} If the URL does not point at the gateway, correct the gateway URL.`,
    callerMessage: "The operator's gateway is not accepting chat requests right now.",
  },
  unauthorized: {
    diagnosis: (w, c) => `The gateway${w} refused the bridge's token${status(c)}: it is wrong or expired.`,
    fix: () =>
      'Copy the token from the gateway config (gateway.auth.token, or gateway.auth.password in password mode, ' +
      "in ~/.openclaw/openclaw.json) into the bridge's gateway token setting (GATEWAY_TOKEN).",
    callerMessage: "The operator's gateway refused the bridge's credentials.",
  },
  'forbidden-scope': {
    diagnosis: (w, c) =>
      `The gateway${w} refused the call${status(c)} although the bridge sends the operator.write scope headers.`,
    fix: () =>
      'This is a gateway version issue (some OpenClaw 2026.3 builds demand the scope even with a valid token): ' +
      'update the OpenClaw gateway.',
    callerMessage: "The operator's gateway refused the request.",
  },
  'rate-limited': {
    diagnosis: (w, c) =>
      `The gateway${w} is locking out failed logins${status(c)}` +
      `${c.retryAfterSeconds === undefined ? '' : `; it asks to wait ${c.retryAfterSeconds} s`}.`,
    fix: () =>
      'Wait for the lockout to end (5 minutes by default), then fix the gateway token. ' +
      'The bridge does not retry by itself: every retry extends the lockout.',
    callerMessage: "The operator's gateway is temporarily refusing requests.",
  },
  'bad-request': {
    diagnosis: (w, c) => `The gateway${w} rejected the request as invalid${status(c)}.`,
    fix: () =>
      'Check the gateway model setting: OpenClaw accepts openclaw, openclaw/<agentId> or openclaw:<agentId>. ' +
      'An empty message is refused too.',
    callerMessage: "The operator's gateway rejected the request.",
  },
  'gateway-error': {
    diagnosis: (w, c) => `The gateway${w} failed to run the agent${status(c)}.`,
    fix: () => READ_LOGS,
    callerMessage: "The operator's agent failed to produce a reply.",
  },
  'not-chat-server': {
    diagnosis: (w, c) =>
      `The server${w} answered, but not as a chat-completions server${suffix(c.detail, ' (', ')')}.`,
    fix: () =>
      'Check the gateway URL: it must point at the OpenClaw gateway or another OpenAI-compatible ' +
      'chat-completions server.',
    callerMessage: "The operator's gateway gave an unusable answer.",
  },
  'stream-error': {
    diagnosis: (w, c) => `The gateway${w} failed while streaming the reply${suffix(c.detail, ' (', ')')}.`,
    fix: () => READ_LOGS,
    callerMessage: "The operator's agent failed while replying.",
  },
  'agent-missing': {
    diagnosis: (w, c) =>
      `The gateway${w} has no agent "${c.agentId ?? '?'}" for callers${suffix(c.detail, ' (', ')')}, so the bridge forwards nothing.`,
    fix: (c) =>
      `Add a restricted agent "${c.agentId ?? 'public'}" to the gateway config (the console shows the snippet; ` +
      'OpenClaw applies it without a restart), then check again; or choose another agent for callers in Settings.',
    callerMessage: "The operator's agent is not set up to take calls from other agents yet.",
  },
  'agent-ambiguous': {
    diagnosis: (w, c) =>
      `The gateway${w} has several agents and the call named none${suffix(c.detail, ' (', ')')}.`,
    fix: () =>
      'Choose the agent callers reach in Settings > Gateway (gatewayAgent); leave the explicit model setting empty.',
    callerMessage: "The operator's agent is not set up to take calls from other agents yet.",
  },
  'agent-unknown': {
    diagnosis: (w, c) =>
      `The gateway${w} does not know the agent "${c.agentId ?? '?'}"${suffix(c.detail, ' (', ')')}.`,
    fix: (c) =>
      `Add the agent "${c.agentId ?? 'public'}" to the gateway config (the console shows a restricted one to copy; ` +
      'OpenClaw applies it without a restart), or pick an existing agent for callers in Settings.',
    callerMessage: "The operator's agent is not set up to take calls from other agents yet.",
  },
  'agent-exposed': {
    diagnosis: (w, c) =>
      `Callers would reach the agent "${c.agentId ?? '?'}" on the gateway${w}, which is offered host tools` +
      `${suffix(c.detail, ' (', ')')}, and you have not accepted that, so the bridge forwards nothing.`,
    fix: () =>
      "Give callers a restricted agent (the console's Overview shows the config to add), or, if you mean callers " +
      "to reach this agent with these tools, accept it on the Overview's Gateway card.",
    callerMessage: "The operator's agent is not set up to take calls from other agents yet.",
  },
  'agent-unverified': {
    diagnosis: (w, c) =>
      `The gateway${w} does not run what its config file says${suffix(c.detail, ' (', ')')}, so the bridge ` +
      `cannot tell which tools callers would reach through "${c.agentId ?? '?'}" and forwards nothing.`,
    fix: () =>
      'Run `openclaw config validate` where the gateway runs and fix what it reports (the gateway reloads a ' +
      'valid file by itself), then press Check again in the console.',
    callerMessage: "The operator's agent is not set up to take calls from other agents yet.",
  },
  'skill-unavailable': {
    diagnosis: (_w, c) => `A skill on agent "${c.agentId ?? '?'}" does not serve${suffix(c.detail, ': ')}.`,
    fix: () => 'The Skills page says why and what to do (GET /api/skills).',
    callerMessage: 'This skill is not available right now; its operator can see why.',
  },
  starting: {
    diagnosis: (w) => `The gateway${w} is still starting (its plugin runtime is not ready yet).`,
    fix: () => 'Nothing to fix: it answers in a few seconds. Callers are asked to retry.',
    callerMessage: "The operator's gateway is starting; retry in a few seconds.",
  },
  aborted: {
    diagnosis: () => 'The call to the gateway was cancelled because its caller went away.',
    fix: () => 'Nothing to fix: the caller cancelled the request.',
    callerMessage: 'The request was cancelled.',
  },
};

/** Builds the error for one problem from what is known about it. */
export function gatewayError(problem: GatewayProblem, context: ProblemContext = {}): GatewayError {
  const text = PROBLEMS[problem];
  const where = context.url ? ` at ${displayUrl(context.url)}` : '';
  return new GatewayError({
    ...context,
    problem,
    diagnosis: text.diagnosis(where, context),
    fix: text.fix(context),
    callerMessage: text.callerMessage,
  });
}

/** An HTTP answer the bridge could not use as a chat reply. */
export interface UnusableResponse {
  status: number;
  contentType: string;
  /** The start of the body, already freed of secrets by the caller. */
  body: string;
  retryAfter?: string;
}

/** Classifies a non-2xx answer, or a 2xx answer that is not chat-completions JSON. */
export function diagnoseResponse(response: UnusableResponse, url: string): GatewayError {
  const { status: httpStatus, contentType } = response;
  // The gateway's JSON error message, or a short plain-text body such as `Not Found`.
  const plain = contentType.startsWith('text/plain') ? shorten(response.body.slice(0, 200)) : '';
  const detail = errorMessageOf(response.body) || plain;
  const context: ProblemContext = { url, httpStatus, ...(detail ? { detail } : {}) };
  const isHtml = contentType.includes('text/html');
  if (httpStatus === 401) return gatewayError('unauthorized', context);
  if (httpStatus === 403) return gatewayError('forbidden-scope', context);
  if (httpStatus === 429) {
    const retryAfterSeconds = parseRetryAfter(response.retryAfter);
    return gatewayError('rate-limited', { ...context, ...(retryAfterSeconds ? { retryAfterSeconds } : {}) });
  }
  // OpenClaw's own wording for its agent rows (GATEWAY.md, "More failure rows").
  if (httpStatus === 400 && /multiple agents are configured/i.test(detail))
    return gatewayError('agent-ambiguous', context);
  if (httpStatus === 400 && /unknown agent/i.test(detail)) {
    const agentId = /unknown agent '([^']{1,64})'/i.exec(detail)?.[1];
    return gatewayError('agent-unknown', { ...context, ...(agentId ? { agentId } : {}) });
  }
  if (httpStatus === 400 || httpStatus === 422) return gatewayError('bad-request', context);
  if (httpStatus === 503 && /plugin runtime is starting/i.test(`${detail} ${response.body.slice(0, 500)}`)) {
    const retryAfterSeconds = parseRetryAfter(response.retryAfter) ?? 5;
    return gatewayError('starting', { ...context, retryAfterSeconds });
  }
  // OpenClaw answers 404 while the endpoint is off; old builds 405; a web server at the URL an HTML page.
  if (httpStatus === 404 || httpStatus === 405 || (isHtml && httpStatus < 300)) {
    return gatewayError('endpoint-disabled', context);
  }
  if (httpStatus >= 300) return gatewayError('gateway-error', context);
  return gatewayError('not-chat-server', {
    url,
    httpStatus,
    detail: contentType.includes('json') ? 'JSON without choices' : 'the body is not JSON',
  });
}

// Socket errors that mean the request never reached a gateway.
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ETIMEDOUT',
]);

/** Classifies an error thrown by the socket (connection refused, DNS, TLS...). */
export function diagnoseConnectionError(error: unknown, url: string): GatewayError {
  const code = (error as { code?: unknown } | null)?.code;
  const detail = typeof code === 'string' ? describeCode(code) : 'connection failed';
  return gatewayError('unreachable', { url, detail, cause: error });
}

function describeCode(code: string): string {
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host name not found';
  // UND_ERR_SOCKET: undici's word (the gateway client's) for a connection the other side closed.
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET')
    return 'connection closed by the server';
  if (CONNECTION_CODES.has(code)) return code;
  return `connection failed: ${code}`;
}

/** The gateway's own `error.message` from a JSON error body, shortened; empty when there is none. */
export function errorMessageOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string };
    const message = typeof parsed.error === 'string' ? parsed.error : parsed.error?.message;
    return typeof message === 'string' ? shorten(message) : '';
  } catch {
    return '';
  }
}

/** Retry-After as seconds: either a number of seconds or an HTTP date. */
export function parseRetryAfter(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

// Credentials in a URL (http://user:pass@host) must not reach the console either.
function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return 'the configured URL';
  }
}

function status(c: ProblemContext): string {
  if (c.httpStatus === undefined) return suffix(c.detail, ' (', ')');
  return ` (HTTP ${c.httpStatus}${suffix(c.detail, ': ')})`;
}

function suffix(text: string | undefined, before: string, after = ''): string {
  return text ? `${before}${text}${after}` : '';
}

function seconds(ms: number | undefined): string {
  return ms === undefined ? 'the time allowed' : `${Math.round(ms / 100) / 10} s`;
}

// The gateway's words, quoted in the bridge's diagnosis: one line, control and bidi characters dropped, cut.
function shorten(text: string): string {
  return oneLine(text, 201) ?? '';
}
