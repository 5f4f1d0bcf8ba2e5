import { randomUUID } from 'node:crypto';
import {
  Role,
  TaskState,
  type Artifact,
  type Message,
  type Task,
  type TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { PushNotificationStore, ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import type { KnockRecord, Knocks, UnreadKey } from '../access/knocks.js';
import { screenCall, type PayloadScreen } from '../calls/admission.js';
import { escapedLine, oneLine } from '../lib/text.js';
import { ProtocolError, authFailed } from '../protocol/index.js';
import { callerOf } from './call-context.js';
import type { A2ACallRecord } from './call-record.js';
import type { A2AKeyCaller } from './key-gate.js';
import { agentMessage, textPart } from './message-text.js';
import { TERMINAL_STATES } from './task-store.js';

/**
 * Knock to pair (issue 28): under `pairing`, an A2A caller without a key does not get a bare 401. Its message
 * becomes a task in TASK_STATE_AUTH_REQUIRED that waits for the operator (the knocks' list: access/knocks.ts),
 * which it follows as any task (GetTask, SubscribeToTask, a push config) by the task's id, its only
 * credential. This is the caller's side of it: the knock itself, follow-up messages to it, the key shown
 * once in the task after an approval, and a cancel that withdraws it. The operator's side (approve, deny,
 * expiry) is knock-decisions.ts.
 */

/** A chat message is at most 32,000 characters (PROTOCOL.md's chat schema): what a knock parks, in all. */
export const MAX_KNOCK_CHARS = 32_000;
/** Messages a knock parks: the first and its follow-ups while it waits. */
export const MAX_KNOCK_MESSAGES = 3;
/** The preview the operator reads: the start of the first message, escaped. */
const PREVIEW_CHARS = 300;
/** The artifact that shows the key, once. */
export const KEY_ARTIFACT_ID = 'a2a-key';

/** Message metadata a caller may send to say who it is (shown to the operator as claimed, never checked). */
export const CLAIMED_NAME = 'agentName';
export const CLAIMED_CARD_URL = 'agentCardUrl';

/** What the gated handler asks of knocks (front door: GatedHandler). */
export interface KnockHandling {
  /** A knocker's message: a new knock, or a follow-up to its own waiting knock. Answers with the task. */
  knock(request: KnockRequest, context: ServerCallContext): Promise<Task>;
  /** The task as its caller reads it: with the key issued on approval, the first time only. */
  reveal(task: Task, context: ServerCallContext): Task;
  /** Its caller canceled the task (the SDK wrote it canceled): a waiting knock leaves the list. */
  canceled(taskId: string, context: ServerCallContext): void;
}

export interface KnockRequest {
  message: Message;
  /** Its text parts, joined (message-text.ts), checked already. */
  text: string;
  push?: TaskPushNotificationConfig;
  /** The request's traffic record (where it came in; marked held). */
  call?: A2ACallRecord;
}

export interface KnockDoorOptions {
  knocks: Knocks;
  tasks: TaskStore;
  pushConfigs: PushNotificationStore;
  /** The caps on the knocker's tasks (A2ATaskStore.admit), as for any new task. */
  taskCapacity?(owner: string): Promise<() => void>;
  /** A knock (or a follow-up) is a request: the strangers' bucket and its address's limit (A2AGate). */
  admitRequest?(caller: A2AKeyCaller): Promise<void>;
  settings(): { injectionScreen: 'flag' | 'refuse' | 'off'; pendingExpiryHours: number };
  screen?: PayloadScreen;
  /** The list changed (a knock added: `added`; followed or withdrawn): the console and the tray are told. */
  onChange(added?: KnockRecord): void;
  now?: () => number;
}

/** A knock's messages, as the caller's task holds them: their text, joined as one turn's. */
export function parkedText(task: Task): string {
  return task.history
    .filter((message) => message.role === Role.ROLE_USER)
    .map((message) =>
      message.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('\n\n'),
    )
    .filter((text) => text.trim() !== '')
    .join('\n\n');
}

export class KnockDoor implements KnockHandling {
  private readonly now: () => number;

  constructor(private readonly options: KnockDoorOptions) {
    this.now = options.now ?? Date.now;
  }

  async knock(request: KnockRequest, context: ServerCallContext): Promise<Task> {
    const { message } = request;
    if (message.taskId) return this.followUp(request, context);
    // A knock starts a conversation: a keyless caller names none (conversations.ts).
    if (message.contextId) {
      throw new RequestMalformedError(
        'Without an A2A key a message starts a conversation: omit contextId (this agent gives one with the task).',
      );
    }
    const caller = callerOf<A2AKeyCaller>(context);
    const address = caller.knock?.address;
    if (!address) throw authFailed('This caller cannot knock.', 'access');
    checkSize(request.text, 0, 0);
    const screened = this.screened(request.text);
    const place = this.options.knocks.admit(address);
    if ('reason' in place) throw refusal(place);
    try {
      await this.options.admitRequest?.(caller);
    } catch (error) {
      place.release();
      this.options.knocks.refusedOne();
      throw error;
    }
    let release: (() => void) | undefined;
    try {
      release = await this.options.taskCapacity?.(caller.id);
      const now = this.now();
      const expiresAt = now + this.options.settings().pendingExpiryHours * 3600_000;
      const taskId = randomUUID();
      const contextId = randomUUID();
      const task = await this.written(
        {
          taskId,
          owner: caller.id,
          address,
          ...(caller.knock?.skill === undefined ? {} : { skill: caller.knock.skill }),
          contextId,
          ...claimed(message),
          preview: escapedLine(request.text, PREVIEW_CHARS),
          ...(screened ? { screened } : {}),
          messages: 1,
          chars: request.text.length,
          firstAt: now,
          lastAt: now,
          expiresAt,
          path: request.call?.path ?? '',
          transport: request.call?.transport ?? 'jsonrpc',
        },
        place,
        async (code) => {
          if (request.push) await this.options.pushConfigs.save(taskId, context, request.push);
          const task: Task = {
            id: taskId,
            contextId,
            status: waitingStatus(taskId, contextId, code, expiresAt, now),
            artifacts: [],
            history: [parked(message, taskId, contextId)],
            metadata: undefined,
          };
          await this.options.tasks.save(task, context);
          return task;
        },
      );
      if (request.call) request.call.held = true;
      const added = this.options.knocks.byTask(task.id);
      this.options.onChange(added);
      return task;
    } finally {
      place.release();
      release?.();
    }
  }

  reveal(task: Task, context: ServerCallContext): Task {
    const unread = this.options.knocks.hasUnreadKey(task.id)
      ? this.options.knocks.claim(task.id, callerOf(context).id)
      : undefined;
    return unread ? { ...task, artifacts: [...task.artifacts, keyArtifact(unread)] } : task;
  }

  canceled(taskId: string, context: ServerCallContext): void {
    const record = this.options.knocks.byTask(taskId);
    if (!record || record.owner !== callerOf(context).id) return;
    if (this.options.knocks.withdraw(taskId)) this.options.onChange();
  }

  /**
   * The knock's code, with its task written first and then the knock listed (a knock listed without its task
   * would wait for nothing); a list that cannot be written leaves the task failed, not waiting.
   */
  private async written(
    record: Omit<KnockRecord, 'code'>,
    place: { release(): void },
    write: (code: string) => Promise<Task>,
  ): Promise<Task> {
    const { knocks } = this.options;
    const added = knocks.add(record, place);
    try {
      return await write(added.code);
    } catch (error) {
      knocks.withdraw(record.taskId);
      throw error;
    }
  }

  /**
   * A follow-up message to one of the caller's tasks (A2A: a task in an interrupted state takes one). A
   * waiting knock parks it (bounded, screened), and stays waiting; a task that ended takes none
   * (UnsupportedOperation, the spec's CORE-SEND-002); anything else needs a key.
   */
  private async followUp(request: KnockRequest, context: ServerCallContext): Promise<Task> {
    const { message, text } = request;
    const task = await this.options.tasks.load(message.taskId, context);
    if (!task) throw new TaskNotFoundError(`No task "${message.taskId.slice(0, 80)}" of yours is kept here.`);
    const state = task.status?.state;
    if (state !== undefined && TERMINAL_STATES.has(state)) {
      throw new UnsupportedOperationError(
        `This task has ended (${stateWord(state)}) and takes no more messages; send a new message without taskId.`,
      );
    }
    if (message.contextId && message.contextId !== task.contextId) {
      throw new RequestMalformedError(
        "contextId does not match this task's: leave it out, or send the task's.",
      );
    }
    const record = this.options.knocks.byTask(task.id);
    if (!record || record.owner !== callerOf(context).id) {
      throw new UnsupportedOperationError(
        state === TaskState.TASK_STATE_WORKING
          ? "This agent's operator approved you and your message runs now: wait for this task to end (GetTask, SubscribeToTask), then continue with your key."
          : 'Without an A2A key, only a task waiting for the operator takes follow-up messages.',
      );
    }
    checkSize(text, record.messages, record.chars);
    const screened = this.screened(text);
    await this.options.admitRequest?.(callerOf<A2AKeyCaller>(context));
    task.history = [...task.history, parked(message, task.id, task.contextId)];
    await this.options.tasks.save(task, context);
    this.options.knocks.followed(record.code, text.length, screened);
    if (request.call) request.call.held = true;
    this.options.onChange();
    return task;
  }

  /** The injection screen's rule for `text` (`flag`), or a refusal (`refuse`: the knock is not taken). */
  private screened(text: string): string | undefined {
    const { screen } = this.options;
    if (!screen) return undefined;
    return screenCall(screen, this.options.settings().injectionScreen, { message: text })?.rule;
  }
}

function checkSize(text: string, messages: number, chars: number): void {
  if (messages >= MAX_KNOCK_MESSAGES) {
    throw new ProtocolError(
      'RATE_LIMITED',
      429,
      `This knock holds ${MAX_KNOCK_MESSAGES} messages already: wait for the operator's decision (follow the task).`,
      { step: 'rate-limit', retryAfterSeconds: 600 },
    );
  }
  if (chars + text.length > MAX_KNOCK_CHARS) {
    throw new ProtocolError(
      'SCHEMA_INVALID',
      413,
      `Without an A2A key, the messages of a knock hold at most ${MAX_KNOCK_CHARS.toLocaleString('en-US')} characters in all; send a shorter one, and the rest once the operator approved you.`,
      { step: 'input' },
    );
  }
}

function refusal(refused: Exclude<ReturnType<Knocks['admit']>, { release(): void }>): ProtocolError {
  switch (refused.reason) {
    case 'blocked':
      return new ProtocolError(
        'AUTH_FAILED',
        403,
        `This agent's operator declined a request from your address; do not knock again before ${new Date(refused.until).toISOString()}.`,
        { step: 'access' },
      );
    case 'address':
      return new ProtocolError(
        'RATE_LIMITED',
        429,
        `Your address has ${refused.max} knocks waiting for this agent's operator already: follow them (GetTask) and wait for a decision before knocking again.`,
        { step: 'rate-limit', retryAfterSeconds: 600 },
      );
    case 'full':
      return new ProtocolError(
        'RATE_LIMITED',
        429,
        "This agent's operator has too many requests waiting to take another; knock again later.",
        { step: 'rate-limit', retryAfterSeconds: 3600 },
      );
  }
}

/**
 * The message as its task keeps it while it waits: its text parts and what it claims, nothing else a caller
 * without a key could fill the disk with (metadata, extensions, part metadata: up to the body limit each).
 */
function parked(message: Message, taskId: string, contextId: string): Message {
  const { claimedName, claimedCardUrl } = claimed(message);
  const metadata = {
    ...(claimedName ? { [CLAIMED_NAME]: claimedName } : {}),
    ...(claimedCardUrl ? { [CLAIMED_CARD_URL]: claimedCardUrl } : {}),
  };
  return {
    messageId: message.messageId.slice(0, 128),
    contextId,
    taskId,
    role: Role.ROLE_USER,
    parts: message.parts.map((part) => textPart(part.content?.$case === 'text' ? part.content.value : '')),
    metadata: Object.keys(metadata).length > 0 ? metadata : undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** What the caller says it is: its message's metadata `agentName` and `agentCardUrl`, checked for form only. */
function claimed(message: Message): Pick<KnockRecord, 'claimedName' | 'claimedCardUrl'> {
  const metadata = (message.metadata ?? {}) as Record<string, unknown>;
  const name = oneLine(metadata[CLAIMED_NAME], 60);
  const url = typeof metadata[CLAIMED_CARD_URL] === 'string' ? metadata[CLAIMED_CARD_URL].trim() : '';
  const cardUrl =
    url.length <= 300 && /^https?:\/\/[\x21-\x7e]+$/.test(url) && URL.canParse(url) ? url : undefined;
  return { ...(name ? { claimedName: name } : {}), ...(cardUrl ? { claimedCardUrl: cardUrl } : {}) };
}

function waitingStatus(taskId: string, contextId: string, code: string, expiresAt: number, now: number) {
  const text =
    `This agent answers A2A callers its operator approved, and you sent no key: its operator has been asked ` +
    `(knock ${code}) and your message waits for the decision, until ${new Date(expiresAt).toISOString()}. ` +
    'Follow this task by its id (your only credential for it: keep it): GetTask, SubscribeToTask, or a push ' +
    'notification config on it. Approved, your message runs and this task shows once, on the first read after, an ' +
    `A2A key for your next calls (artifact "${KEY_ARTIFACT_ID}"); declined, the task ends rejected with the ` +
    "operator's reason. You may add up to two messages to this task while it waits.";
  return {
    state: TaskState.TASK_STATE_AUTH_REQUIRED,
    message: agentMessage(taskId, contextId, text),
    timestamp: new Date(now).toISOString(),
  };
}

/** The key, shown once: a sentence with it, and the same as data. */
function keyArtifact(unread: UnreadKey): Artifact {
  const scope = unread.skills
    ? `skill${unread.skills.length === 1 ? '' : 's'} ${unread.skills.join(', ')}`
    : '';
  const text =
    `This agent's operator approved you. Your A2A key, shown this once (this agent keeps only its hash): ` +
    `${unread.secret} . Send it with every request as "Authorization: Bearer <key>"` +
    `${scope ? `; it opens ${scope}` : ''}${unread.expiresAt ? `; it expires ${unread.expiresAt}` : ''}.`;
  return {
    artifactId: KEY_ARTIFACT_ID,
    name: 'A2A key',
    description: 'The A2A key issued to you on approval, shown once.',
    parts: [
      textPart(text),
      {
        content: {
          $case: 'data',
          value: {
            key: unread.secret,
            keyId: unread.keyId,
            scheme: 'Bearer',
            ...(unread.skills ? { skills: [...unread.skills] } : {}),
            ...(unread.expiresAt ? { expiresAt: unread.expiresAt } : {}),
          },
        },
        mediaType: 'application/json',
        filename: '',
        metadata: undefined,
      },
    ],
    metadata: undefined,
    extensions: [],
  };
}

function stateWord(state: TaskState): string {
  return TaskState[state]?.replace('TASK_STATE_', '').toLowerCase() ?? 'ended';
}
