/**
 * What an A2A agent answered, read with care: a task's id and contextId checked against a short pattern,
 * its state from the protocol's enum, its artifacts, messages and status text kept as the callee's own
 * words (untrusted parts); a stream's events gathered into one answer; every failure of a call turned into
 * an OutboundError whose message is the bridge's own words.
 */
import { TaskState, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import { A2AError } from '@a2a-js/sdk/errors';
import type { A2ACallLog } from './a2a-fetch.js';
import type { OutboundFrame } from './outbound-frame.js';
import { OutboundError } from './outbound-policy.js';
import { shortToken, type UntrustedPart } from './untrusted.js';

export type A2AState =
  | 'submitted'
  | 'working'
  | 'input-required'
  | 'auth-required'
  | 'completed'
  | 'failed'
  | 'canceled'
  | 'rejected'
  | 'unknown';

const STATES: Partial<Record<TaskState, A2AState>> = {
  [TaskState.TASK_STATE_SUBMITTED]: 'submitted',
  [TaskState.TASK_STATE_WORKING]: 'working',
  [TaskState.TASK_STATE_INPUT_REQUIRED]: 'input-required',
  [TaskState.TASK_STATE_AUTH_REQUIRED]: 'auth-required',
  [TaskState.TASK_STATE_COMPLETED]: 'completed',
  [TaskState.TASK_STATE_FAILED]: 'failed',
  [TaskState.TASK_STATE_CANCELED]: 'canceled',
  [TaskState.TASK_STATE_REJECTED]: 'rejected',
};

/** The SDK's codec has already mapped the wire's state to its enum; anything it did not know is `unknown`. */
export function stateName(state: unknown): A2AState {
  return STATES[state as TaskState] ?? 'unknown';
}

/** The task is over: it will not change again. */
export const isFinal = (state: A2AState) =>
  state === 'completed' || state === 'failed' || state === 'canceled' || state === 'rejected';

/** The task waits for the caller (more input, or authentication): following it longer changes nothing. */
export const isWaiting = (state: A2AState) => state === 'input-required' || state === 'auth-required';

/** What a send, a stream, a poll or a look-up found, as the bridge may repeat it. */
export interface A2AAnswer {
  /** A task, or a message the agent answered with directly (no task: it is done). */
  kind: 'task' | 'message';
  /** The task's id, when it passed its shape (shortToken). */
  taskId?: string;
  /** The conversation's id, when it passed its shape: the model continues with it. */
  contextId?: string;
  state: A2AState;
  /** The reply, the callee's words: a task's artifacts, or the message's parts. */
  reply?: unknown;
  /** The task's status message (why it failed, what input it needs), the callee's words. */
  status?: unknown;
  /** Ids that did not pass their shape: shown only in blocks. */
  oddities: UntrustedPart[];
}

/** A task, as sent back by a send, a poll, a look-up or a cancel. */
export function readTask(task: Task): A2AAnswer {
  const answer = idsOf(task.id, task.contextId, 'task');
  answer.state = stateName(task.status?.state);
  const reply = partsValue((task.artifacts ?? []).flatMap((artifact) => artifact?.parts ?? []));
  if (reply !== undefined) answer.reply = reply;
  const status = partsValue(task.status?.message?.parts ?? []);
  if (status !== undefined) answer.status = status;
  return answer;
}

/** A message the agent answered with directly. */
export function readMessage(message: Message): A2AAnswer {
  const answer = idsOf(message.taskId, message.contextId, 'message');
  answer.state = 'completed';
  const reply = partsValue(message.parts ?? []);
  if (reply !== undefined) answer.reply = reply;
  return answer;
}

/** A send's result: a Message (it has a messageId) or a Task, as the SDK's client tells them apart. */
export function readResult(result: Message | Task): A2AAnswer {
  return 'messageId' in result ? readMessage(result) : readTask(result);
}

/**
 * A stream's events gathered into one answer: the task as it stands (its id, state and status message),
 * its artifacts (appended or replaced as the events say), or the message that ended it.
 */
export class StreamAnswer {
  private task: Task | undefined;
  private readonly artifacts = new Map<string, Part[]>();
  private message: Message | undefined;

  /** Adds one event; true once the answer is settled (a message, a final state, or waiting for the caller). */
  add(event: StreamResponse): boolean {
    const payload = event.payload;
    if (payload?.$case === 'message') {
      this.message = payload.value;
      return true;
    }
    if (payload?.$case === 'task') {
      this.task = payload.value;
      this.artifacts.clear();
      for (const artifact of payload.value.artifacts ?? [])
        this.artifacts.set(artifact?.artifactId ?? '', [...(artifact?.parts ?? [])]);
    } else if (payload?.$case === 'statusUpdate') {
      const update = payload.value;
      this.task = {
        ...(this.task ?? emptyTask(update.taskId, update.contextId)),
        status: update.status,
      };
    } else if (payload?.$case === 'artifactUpdate') {
      const { artifact, append } = payload.value;
      const id = artifact?.artifactId ?? '';
      const before = append ? (this.artifacts.get(id) ?? []) : [];
      this.artifacts.set(id, [...before, ...(artifact?.parts ?? [])]);
      this.task ??= emptyTask(payload.value.taskId, payload.value.contextId);
    }
    const state = stateName(this.task?.status?.state);
    return isFinal(state) || isWaiting(state);
  }

  /** The answer so far; undefined when the stream sent neither a task nor a message. */
  answer(): A2AAnswer | undefined {
    if (this.message) return readMessage(this.message);
    if (!this.task) return undefined;
    const artifacts = [...this.artifacts].map(([artifactId, parts]) => ({
      artifactId,
      name: '',
      description: '',
      parts,
      metadata: undefined,
      extensions: [],
    }));
    return readTask({ ...this.task, artifacts });
  }
}

function emptyTask(id: string, contextId: string): Task {
  return { id, contextId, status: undefined, artifacts: [], history: [], metadata: undefined };
}

function idsOf(id: unknown, contextId: unknown, kind: A2AAnswer['kind']): A2AAnswer {
  const answer: A2AAnswer = { kind, state: 'unknown', oddities: [] };
  const taskId = shortToken(id);
  if (taskId) answer.taskId = taskId;
  else if (kind === 'task' || (typeof id === 'string' && id !== ''))
    answer.oddities.push({
      what: 'what it sent as the task id (not in a form the bridge repeats)',
      value: id,
    });
  const context = shortToken(contextId);
  if (context) answer.contextId = context;
  else if (typeof contextId === 'string' && contextId !== '')
    answer.oddities.push({
      what: 'what it sent as the contextId (not in a form the bridge repeats)',
      value: contextId,
    });
  return answer;
}

/**
 * Parts as the model reads them: their text joined when all are text; otherwise each part described
 * (text, data, a file's URL or name and type; raw bytes only counted). Undefined when there are none.
 */
function partsValue(parts: Part[]): unknown {
  const described = parts.map((part) => {
    const content = part?.content;
    if (content?.$case === 'text') return { text: content.value };
    if (content?.$case === 'data') return { data: content.value };
    const file = { mediaType: part?.mediaType, filename: part?.filename };
    if (content?.$case === 'url') return { file: { ...file, url: content.value } };
    if (content?.$case === 'raw') return { file: { ...file, bytes: content.value?.length ?? 0 } };
    return { empty: true };
  });
  if (described.length === 0) return undefined;
  if (described.every((part) => 'text' in part)) return described.map((part) => part.text).join('');
  return described;
}

/** What the SDK's errors are, in the bridge's words: matched by their class name, a fixed set. */
const REFUSALS: Record<string, string> = {
  TaskNotFoundError: 'it has no such task (or none this caller may see)',
  TaskNotCancelableError: 'the task cannot be canceled (it has ended, or the agent does not cancel tasks)',
  PushNotificationNotSupportedError: 'it does not support push notifications',
  UnsupportedOperationError: 'it does not support this operation',
  ContentTypeNotSupportedError: 'it does not accept the content type sent (text)',
  InvalidAgentResponseError: 'its agent produced an invalid answer',
  ExtendedAgentCardNotConfiguredError: 'it has no extended card',
  ExtensionSupportRequiredError: 'it requires an A2A extension the bridge does not speak',
  VersionNotSupportedError: 'it does not support the A2A version the bridge used',
  RequestMalformedError: 'it found the request malformed',
};

export interface A2AFailureContext {
  frame: OutboundFrame;
  /** Whether the operator keeps a credential for this agent (what to say about a 401). */
  credentialKept: boolean;
}

/**
 * Every failure of an A2A call as an OutboundError the log and the model can read. The SDK's own messages
 * quote what the agent answered, so they are shown only in a block. Undefined: not a failure of the call.
 */
export function a2aFailure(
  error: unknown,
  call: A2ACallLog,
  context: A2AFailureContext,
): OutboundError | undefined {
  const ours = causeOf(error, (cause): cause is OutboundError => cause instanceof OutboundError);
  if (ours) return ours;
  if (call.tooLarge !== undefined) {
    return new OutboundError(
      'size',
      502,
      `The answer from ${call.callee} is larger than the ${call.tooLarge}, so it was not read.`,
    );
  }
  const transport = context.frame.transportFailure(error, call);
  if (transport) return transport;
  if (call.unreachable) {
    return new OutboundError(
      'handler',
      502,
      `Cannot reach ${call.callee} (${call.unreachable}): is the agent running and its URL right?`,
    );
  }
  const refusal = causeOf(error, (cause): cause is A2AError => cause instanceof A2AError);
  const parts = refusal ? refusalParts(refusal) : error instanceof Error ? clientParts(error) : [];
  if (call.status === 401 || call.status === 403) {
    const what = context.credentialKept
      ? 'The bridge sent the credential the operator keeps for it: it may be wrong, expired or of another kind. Tell the operator.'
      : 'The operator keeps no credential for it. If you need this agent, tell the operator: they can add one on the console (Access > Calls out > Credentials).';
    return new OutboundError(
      'trust',
      call.status,
      `${call.callee} refused the request as not authorized (HTTP ${call.status}). ${what}`,
      { untrusted: parts },
    );
  }
  const status = call.status >= 400 ? call.status : 502;
  const verdict = status === 429 ? 'rate-limit' : status === 413 ? 'size' : 'handler';
  if (refusal) {
    const code = (refusal as { envelopeCode?: unknown }).envelopeCode;
    const why =
      REFUSALS[refusal.name] ??
      (Number.isSafeInteger(code)
        ? `it answered with JSON-RPC error ${String(code)}`
        : 'it answered with an error');
    const http = call.status >= 400 ? ` (HTTP ${call.status})` : '';
    return new OutboundError(verdict, status, `${call.callee} refused: ${why}${http}.`, { untrusted: parts });
  }
  if (error instanceof Error) {
    return new OutboundError(
      verdict,
      status,
      `${call.callee} answered in a way the A2A client could not use (HTTP ${call.status}).`,
      { untrusted: parts },
    );
  }
  return undefined;
}

/** The callee's words in an A2A error: its message, and its data (JSON-RPC) or metadata (HTTP+JSON). */
function refusalParts(error: A2AError): UntrustedPart[] {
  const parts: UntrustedPart[] = [{ what: 'its error message', value: error.message }];
  const data = (error as { data?: unknown }).data;
  if (data !== undefined) parts.push({ what: 'its error data', value: data });
  if (error.metadata !== undefined) parts.push({ what: 'its error details', value: error.metadata });
  return parts;
}

/** What the A2A client said when it could not use an answer: it quotes the answer, so it is a block. */
function clientParts(error: Error): UntrustedPart[] {
  return [{ what: 'what the A2A client said of its answer', value: error.message }];
}

function causeOf<T>(error: unknown, match: (cause: unknown) => cause is T): T | undefined {
  for (let cause: unknown = error, depth = 0; cause && depth < 5; depth++) {
    if (match(cause)) return cause;
    cause = (cause as { cause?: unknown }).cause;
  }
  return undefined;
}
