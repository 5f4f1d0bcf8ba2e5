/**
 * What a called agent answered, read with care: its card's skills, its task records and its refusals
 * checked against their shapes, and every failure of a call turned into an OutboundError whose message is
 * the bridge's own words. The callee's own values go into untrusted parts (untrusted.ts).
 */
import { AgentCallError, CardFetchError, ClientError, ResponseVerificationError } from '../client/index.js';
import {
  ERROR_CODES,
  type AgentCard,
  type ErrorCode,
  type Mode,
  type RefusalStep,
  type TaskStatus,
} from '../protocol/index.js';
import { OutboundError } from './outbound-policy.js';
import type { ReplyCheck, UsedReply } from './reply-signature.js';
import { fraction, knownValue, shortToken, type UntrustedPart } from './untrusted.js';

const TASK_STATES: readonly TaskStatus[] = ['pending', 'running', 'done', 'failed'];

/** The skill must be on the callee's card and offer the mode: say which ones exist rather than call blind. */
export function checkSkill(agent: string, card: AgentCard, skill: string, mode: Mode): void {
  const found = card.skills.find((candidate) => candidate.id === skill);
  if (!found) {
    // Skill ids are the card's text: listed in the block, never in the bridge's sentence.
    throw new OutboundError(
      'skill',
      404,
      `${agent} has no skill "${skill}": its card lists the skills shown below (samvad_agent_card describes them).`,
      {
        untrusted: [{ what: 'the skill ids on its card', value: card.skills.map((s) => s.id) }],
      },
    );
  }
  if (!found.modes.includes(mode)) {
    // Modes passed the card schema's enum.
    throw new OutboundError(
      'input',
      400,
      `Skill "${skill}" of ${agent} does not offer mode ${mode} (it offers ${found.modes.join(', ')}).`,
    );
  }
}

/** A task id from a 202, checked before the bridge repeats it or polls it. */
export function acceptedTaskId(agent: string, value: unknown): string {
  const taskId = shortToken(value);
  if (taskId) return taskId;
  throw new OutboundError(
    'handler',
    502,
    `${agent} accepted the task, but what it sent as the taskId is not a task id (letters, digits and ` +
      '. _ ~ : + = -, at most 64 characters), so the task cannot be followed.',
    { untrusted: [{ what: 'what it sent as the taskId', value }] },
  );
}

/** A task record as the bridge may repeat it: the id asked about, a known status, a real progress. */
export interface CheckedTask {
  taskId: string;
  status: TaskStatus;
  progress?: number;
  result?: unknown;
  /** A failed task: its published code, and its own words (parts). */
  error?: { code?: ErrorCode; parts: UntrustedPart[] };
}

/** GET /agent/task/:taskId's answer against PROTOCOL.md §6, or an OutboundError saying what is wrong. */
export function checkTask(agent: string, taskId: string, body: unknown): CheckedTask {
  const record = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (record.taskId !== taskId) {
    throw new OutboundError('handler', 502, `${agent} answered about another task than ${taskId}.`);
  }
  const status = knownValue(TASK_STATES, record.status);
  if (!status) {
    throw new OutboundError(
      'handler',
      502,
      `${agent} answered with a status for task ${taskId} that is none of pending, running, done, failed.`,
      { untrusted: [{ what: 'the status it sent', value: record.status }] },
    );
  }
  const task: CheckedTask = { taskId, status };
  const progress = fraction(record.progress);
  if (progress !== undefined) task.progress = progress;
  if (status === 'done') task.result = record.result;
  if (status === 'failed') task.error = readRefusal(record);
  return task;
}

/** The step of the callee's pipeline its error code comes from (PROTOCOL.md §4, §5). */
export function stepForCode(code: ErrorCode | undefined, status: number): RefusalStep {
  switch (code) {
    case 'AUTH_FAILED':
      return status === 403 ? 'trust' : 'signature';
    case 'REPLAY_DETECTED':
      return 'nonce';
    case 'SKILL_NOT_FOUND':
      return 'skill';
    case 'SCHEMA_INVALID':
      return status === 413 ? 'size' : 'input';
    case 'INJECTION_DETECTED':
      return 'input';
    case 'DELEGATION_EXCEEDED':
      return 'delegation';
    case 'RATE_LIMITED':
    case 'TOKEN_BUDGET_EXCEEDED':
      return 'rate-limit';
    default:
      return 'handler';
  }
}

/**
 * An error body in either shape of PROTOCOL.md §5 (or a bare `{error: "..."}`, as the reference SDK answers
 * an unknown task): its code when published, and as parts its message and any other code.
 */
export function readRefusal(body: unknown): { code?: ErrorCode; parts: UntrustedPart[] } {
  const record = (typeof body === 'object' && body !== null ? body : {}) as {
    code?: unknown;
    message?: unknown;
    error?: unknown;
  };
  const nested = (typeof record.error === 'object' && record.error !== null ? record.error : {}) as {
    code?: unknown;
    message?: unknown;
  };
  const rawCode = nested.code ?? record.code;
  const code = knownValue(ERROR_CODES, rawCode);
  const message =
    nested.message ?? record.message ?? (typeof record.error === 'string' ? record.error : undefined);
  const parts: UntrustedPart[] = [];
  if (rawCode !== undefined && !code)
    parts.push({ what: 'its error code (not a published SAMVAD code)', value: rawCode });
  if (message !== undefined) parts.push({ what: 'its error message', value: message });
  return code ? { code, parts } : { parts };
}

/** The callee answered, and its answer was accepted, with an error: its code, status and own words. */
export function calleeRefusal(
  agent: string,
  status: number,
  { code, parts }: ReturnType<typeof readRefusal>,
  reply: UsedReply,
  taskId?: string,
): OutboundError {
  const what = taskId ? `Task ${taskId} on ${agent} failed` : `${agent} refused the call`;
  // A failed task or a stream's error event came with HTTP 200: its code says what happened, not the status.
  const http = status >= 400 ? ` (HTTP ${status})` : '';
  return new OutboundError(
    stepForCode(code, status),
    status >= 400 ? status : 502,
    `${what}${code ? ` with ${code}` : ''}${http}.`,
    { code, untrusted: parts, replySignature: reply.signature, replyNote: reply.note, taskId },
  );
}

export interface FailureContext {
  agent: string;
  /** The failures any HTTP call meets (an address refused after DNS, out of time, cancelled): outbound-frame.ts. */
  transport: (error: unknown) => OutboundError | undefined;
  /** Uses one more reply of the call (a refusal): its signature note, or why it may not be used. */
  useReply: (check: ReplyCheck) => UsedReply | OutboundError;
}

/**
 * Every failure as an OutboundError the log and the model can read: the client's errors carry its own
 * words; anything else is unexpected and goes back as it is (the tool says so, the operator's log says why).
 */
export function toOutboundError(error: unknown, context: FailureContext): OutboundError | undefined {
  const { agent } = context;
  if (error instanceof OutboundError) return error;
  if (error instanceof ResponseVerificationError) {
    return new OutboundError(
      'handler',
      error.status ?? 502,
      `The reply from ${agent} did not verify against its card, so it was discarded: ${error.message}.`,
      { replySignature: 'failed', discarded: true },
    );
  }
  if (error instanceof CardFetchError) {
    if (error.redirectedTo === undefined) {
      return new OutboundError('handler', 502, `Could not use the card of ${agent}: ${error.message}`);
    }
    return new OutboundError(
      'handler',
      502,
      `Could not use the card of ${agent}: ${error.message} (where it redirects is shown below).`,
      {
        untrusted: [
          { what: 'where its card fetch was redirected', value: error.redirectedTo, maxChars: 300 },
        ],
      },
    );
  }
  if (error instanceof AgentCallError) {
    // A refusal the client checked: signed and verified, or unsigned.
    const reply = context.useReply({ verified: !error.unsigned, unsigned: error.unsigned });
    if (reply instanceof OutboundError) return reply;
    return calleeRefusal(agent, error.status, readRefusal(error.body), reply);
  }
  const transport = context.transport(error);
  if (transport) return transport;
  if (error instanceof ClientError) {
    return new OutboundError('handler', 502, `The call to ${agent} failed: ${error.message}`);
  }
  return undefined;
}
