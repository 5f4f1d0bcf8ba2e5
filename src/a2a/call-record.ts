import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  A2AError,
  ExtendedAgentCardNotConfiguredError,
  InvalidAgentResponseError,
  TaskNotCancelableError,
  TaskNotFoundError,
} from '@a2a-js/sdk/errors';
import { isLegacyJsonRpcMethod, isV1JsonRpcMethod, legacyJsonRpcToV1Method } from '@a2a-js/sdk/compat/v0_3';
import type { EnvelopeEvent } from '../agent/events.js';
import { A2A_METHOD_STEPS, A2A_STEPS, type A2AStep, type TrafficFile } from '../protocol/console-api.js';
import { DEFAULT_SKILL, ProtocolError, type CallChain, type Mode } from '../protocol/index.js';
import { KnownCallerRefused, type A2ACaller } from './chat-core.js';

/**
 * What one A2A request was, filled in as it goes (the front door, the transport, the handler): at its end
 * it becomes one traffic entry (`protocol: 'a2a'`), refusals included.
 */
export interface A2ACallRecord {
  startedAt: number;
  started: number;
  path: string;
  transport: 'jsonrpc' | 'rest';
  /** The skill whose door it came through (`/a2a/skills/<id>`); none: the default skill's (chat). */
  skill?: string;
  version?: '1.0' | '0.3';
  method?: string;
  caller?: A2ACaller;
  mode?: Mode;
  taskId?: string;
  contextId?: string;
  taskState?: string;
  bytesIn: number;
  /** The door's steps it passed so far, in order (A2A_STEPS); noted where each one ends (`passStep`). */
  passed: A2AStep[];
  /** The rule the injection screen matched (`flag`: let through; `refuse`: refused at the screen). */
  screened?: { rule: string };
  /** The chain of calls the message said it belongs to (its call-chain extension's metadata). */
  chain?: CallChain;
  /** What refused or failed the request, when something did. */
  error?: unknown;
  /** The message's files and data parts (names, types, sizes; never their bytes). */
  files?: TrafficFile[];
  /** A keyless caller's message that waits for the operator (a knock, or a follow-up to one). */
  held?: boolean;
}

/**
 * The most of a refusal's message the traffic log keeps and `serve` prints. The SDK's messages quote what
 * the caller sent (`Task not found: <id>`, the id as long as the body limit allows): one request made a
 * 150 KB line. Ours are shorter.
 */
const MESSAGE_CHARS = 300;

/** Notes that the request passed `step` (once: a stream's events note nothing twice). */
export function passStep(call: A2ACallRecord | undefined, step: A2AStep): void {
  if (call && !call.passed.includes(step)) call.passed.push(step);
}

/** The methods that send a message: a skill's calls. */
const SEND_METHODS = new Set(['SendMessage', 'SendStreamingMessage']);

/** The v1.0 name of a JSON-RPC method (a v0.3 one mapped to it); undefined for anything unknown. */
export function v1MethodName(method: unknown): string | undefined {
  if (isV1JsonRpcMethod(method)) return method as string;
  return isLegacyJsonRpcMethod(method) ? legacyJsonRpcToV1Method(method as string) : undefined;
}

/** `TASK_STATE_INPUT_REQUIRED` as `input-required`. */
export function stateName(state: TaskState | undefined): string | undefined {
  if (state === undefined || state === TaskState.TASK_STATE_UNSPECIFIED) return undefined;
  const name = TaskState[state];
  return typeof name === 'string'
    ? name
        .replace(/^TASK_STATE_/, '')
        .toLowerCase()
        .replace(/_/g, '-')
    : undefined;
}

/** Notes what a task says of itself (its id, context and state). */
export function noteTask(call: A2ACallRecord, task: Pick<Task, 'id' | 'contextId' | 'status'>): void {
  call.taskId = task.id;
  if (task.contextId) call.contextId = task.contextId;
  call.taskState = stateName(task.status?.state) ?? call.taskState;
}

/** Whether a handler's answer is a task (not a message). */
export function isTask(value: unknown): value is Task {
  return typeof value === 'object' && value !== null && 'status' in value && 'id' in value;
}

/** Notes what a stream event says of its task. */
export function noteEvent(call: A2ACallRecord, event: StreamResponse): void {
  const payload = event.payload;
  if (payload?.$case === 'task') noteTask(call, payload.value);
  else if (payload?.$case === 'statusUpdate') {
    call.taskId = payload.value.taskId;
    call.taskState = stateName(payload.value.status?.state) ?? call.taskState;
  }
}

/**
 * The record as the operator's traffic log keeps it, once the response is over: with the steps it passed
 * and the one that refused or failed it. A call that ended well passed its task step too.
 */
export function trafficEvent(call: A2ACallRecord, status: number, bytesOut: number): EnvelopeEvent {
  const { error } = call;
  const failedAt = failedStep(call, status);
  if (!failedAt) passStep(call, 'task');
  const event: EnvelopeEvent = {
    time: new Date(call.startedAt).toISOString(),
    endpoint: call.path,
    sender: call.caller?.id,
    signatureForm: 'none',
    verdict: verdictOf(call, status),
    status,
    durationMs: Math.round((performance.now() - call.started) * 1000) / 1000,
    bytesIn: call.bytesIn,
    bytesOut,
    protocol: 'a2a',
    a2a: {
      version: call.version ?? '1.0',
      transport: call.transport,
    },
    passed: [...call.passed],
  };
  if (call.method && event.a2a) event.a2a.method = call.method;
  if (failedAt && event.a2a) event.a2a.failedAt = failedAt;
  if (call.screened) event.screen = call.screened;
  if (call.files?.length) event.files = call.files.map((file) => ({ ...file }));
  if (call.chain) event.chain = call.chain;
  // Only a message runs a skill (its door's): reading, listing or canceling a task runs none.
  if (call.method !== undefined && SEND_METHODS.has(call.method)) event.skill = call.skill ?? DEFAULT_SKILL;
  if (call.caller?.name) event.callerName = call.caller.name;
  // A revoked or expired key that matched its record: the log names it (sender, name), marked.
  if (error instanceof KnownCallerRefused) {
    event.sender = error.caller.id;
    event.callerName = error.caller.name;
    event.keyStatus = error.keyStatus;
  }
  if (call.mode) event.mode = call.mode;
  if (call.held && !failedAt) event.held = true;
  if (call.taskId) event.taskId = call.taskId.slice(0, 100);
  if (call.taskState && event.a2a) event.a2a.taskState = call.taskState;
  if (call.contextId && event.a2a) event.a2a.contextId = call.contextId.slice(0, 200);
  if (error instanceof ProtocolError) {
    event.code = error.code;
    event.message = cut(error.message);
  } else if (error instanceof A2AError) event.message = cut(error.message);
  else if (error !== undefined) event.message = 'The agent failed to answer (see the agent log).';
  if (status === 499) event.message = 'caller disconnected';
  return event;
}

function verdictOf(call: A2ACallRecord, status: number): EnvelopeEvent['verdict'] {
  const { error } = call;
  if (error instanceof ProtocolError) return error.step ?? 'handler';
  if (error instanceof A2AError) return 'input';
  if (error !== undefined || status >= 500) return 'handler';
  if (status >= 400) return 'input';
  // A message whose task failed (the gateway did not answer) was taken, but not served.
  return call.taskState === 'failed' ? 'handler' : 'accepted';
}

function cut(message: string): string {
  return message.length > MESSAGE_CHARS ? `${message.slice(0, MESSAGE_CHARS - 1)}…` : message;
}

/**
 * The step that refused or failed the call, if one did. A refusal of ours names its kind (the limits, the
 * key, a malformed request, the screen, the turn); the SDK's own errors are the request's, but for a task
 * it cannot find or change; anything else (the SDK answering an error itself, a bug, the caller leaving)
 * stopped the call at the first step of its method it had not passed.
 */
function failedStep(call: A2ACallRecord, status: number): A2AStep | undefined {
  const { error } = call;
  if (error instanceof ProtocolError) {
    if (error.code === 'INJECTION_DETECTED') return 'screen';
    const step = error.step && PROTOCOL_STEPS[error.step];
    if (step) return step;
  } else if (error instanceof A2AError) {
    return TASK_ERRORS.some((kind) => error instanceof kind) ? 'task' : 'request';
  }
  if (error === undefined && status < 400) return call.taskState === 'failed' ? 'task' : undefined;
  const steps = (call.method && A2A_METHOD_STEPS[call.method]) || A2A_STEPS;
  return steps.find((step) => !call.passed.includes(step)) ?? 'task';
}

/** Where each kind of refusal of ours stops an A2A call (the steps are SAMVAD's names for them). */
const PROTOCOL_STEPS: Partial<Record<NonNullable<ProtocolError['step']>, A2AStep>> = {
  access: 'key',
  size: 'request',
  shape: 'request',
  input: 'request',
  'rate-limit': 'limits',
  // The gate checks a message's chain before its rate and budget: too deep, or come back round a loop.
  chain: 'limits',
  handler: 'task',
};

/** The SDK's errors about the task itself, not about how it was asked for. */
const TASK_ERRORS = [
  TaskNotFoundError,
  TaskNotCancelableError,
  InvalidAgentResponseError,
  ExtendedAgentCardNotConfiguredError,
];
