import {
  Artifact,
  type AgentCard,
  type CancelTaskRequest,
  type DeleteTaskPushNotificationConfigRequest,
  type GetExtendedAgentCardRequest,
  type GetTaskPushNotificationConfigRequest,
  type GetTaskRequest,
  type ListTaskPushNotificationConfigsRequest,
  type ListTaskPushNotificationConfigsResponse,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type SendMessageRequest,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type Task,
  type TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import {
  ContentTypeNotSupportedError,
  RequestMalformedError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import type { A2AStep } from '../protocol/console-api.js';
import { authFailed, ProtocolError, type CallChain, type Mode } from '../protocol/index.js';
import { countedAs, isKeyless } from './key-gate.js';
import { callerOf, scopeOf } from './call-context.js';
import { isTask, noteEvent, noteTask, passStep } from './call-record.js';
import type { A2ACaller, A2AGate } from './chat-core.js';
import { INLINE_ONLY, type ContentRules, type TurnContent } from '../calls/attachments.js';
import type { KnockHandling } from './knock.js';
import { checkContextId, checkReferenceTaskIds, messageContent, messageFiles } from './message-text.js';
import { messageChain } from './chain-metadata.js';
import { OpenStreams, type StreamPlace } from './open-streams.js';
import { pushConfigProblem } from './push-config-bounds.js';
import { TERMINAL_STATES, WAITING_STATES } from './task-store.js';

const NO_KNOCKS =
  "This agent takes A2A calls from holders of an A2A key only: ask this agent's operator for one.";

const KEYLESS_LIST =
  'Listing tasks needs an A2A key: keyless callers share their address with every other caller behind the ' +
  "same tunnel. Ask this agent's operator for a key, or read each of your tasks by its id (GetTask).";

/** How often a task running at another replica is read again for a resubscribed caller. */
const FOLLOW_EVERY_MS = 300;
/** How often a task that waits (for the operator, for its caller) is read again: it changes seldom. */
const FOLLOW_WAITING_EVERY_MS = 1000;

export interface GatedHandlerOptions<C extends A2ACaller> {
  gate: A2AGate<C>;
  tasks: TaskStore;
  /** Why a push notification URL is refused (the SAMVAD callback rule: public https only), or undefined. */
  pushUrlProblem(url: string): string | undefined;
  /**
   * Refuses a new task when its caller holds as many as it may (A2ATaskStore.admit); before the gate.
   * Returns what gives back the place it holds until the task is first written.
   */
  taskCapacity?(owner: string): Promise<() => void>;
  /** With replicas: cancels a run at another replica and waits for it (A2ATaskStore.cancelElsewhere). */
  cancelElsewhere?(taskId: string, context: ServerCallContext): Promise<void>;
  /** The caps on the streams each caller holds open here (default: OpenStreams' own). */
  streams?: OpenStreams;
  /** How the message's files are taken now (the operator's settings); default: inline only. */
  attachments?(): ContentRules;
  /**
   * Knocks (knock.ts): a keyless caller's messages under `pairing` wait for the operator; its reads show
   * the key issued on approval, once. Absent: a knocker's message is refused.
   */
  knocks?: KnockHandling;
  onError?(error: unknown): void;
}

/**
 * The SDK's request handler behind the gate: a message is admitted before the SDK creates a task (so a
 * refusal stores nothing), push configs are checked before they are kept, a config write and a
 * subscription are requests the gate counts, each caller's open streams are capped (OpenStreams), a
 * resubscribe to a task running at another replica follows its records, and everything else passes
 * through. Both transports and both protocol versions reach the SDK through here, with v1.0 shapes. A
 * refusal of ours raised inside the SDK (the task store does not answer: 503) is kept for the transport,
 * which the SDK would turn into a 500. Each call also notes on its traffic record (RequestScope.call) the
 * mode of a message, the task it concerns and the state it was left in, the steps it passed (the request,
 * the limits, the screen) and what refused or failed it.
 */
export class GatedHandler<C extends A2ACaller> implements A2ARequestHandler {
  /**
   * Streams admitted whose SDK stream has not ended, their caller still there or gone (see admittedStream):
   * the SDK saves a streamed task's events as the stream is read, so each one may still owe a write.
   */
  private streamsOpen = 0;
  private readonly streams: OpenStreams;

  constructor(
    private readonly inner: A2ARequestHandler,
    private readonly options: GatedHandlerOptions<C>,
  ) {
    this.streams = options.streams ?? new OpenStreams();
  }

  sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    return this.noted(context, async () => {
      const configuration = params.configuration;
      const mode = configuration?.returnImmediately ? 'async' : 'sync';
      if (callerOf<C>(context).knock) return this.knock(params, context, mode);
      await this.admit(params, context, mode);
      const scope = scopeOf(context);
      // A follow-up continues a task already written: never a quiet one, written once as it ends.
      const quiet = !configuration?.returnImmediately && !configuration?.taskPushNotificationConfig;
      if (quiet && !params.message?.taskId) scope.quiet = true;
      try {
        return await this.inner.sendMessage(params, context);
      } finally {
        scope.slot?.();
      }
    });
  }

  sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    if (callerOf<C>(context).knock) return this.noting(context, this.knockStream(params, context));
    return this.noting(context, this.admittedStream(params, context));
  }

  /**
   * The config's sizes, URL and values are checked here, then the write is admitted as a request; its cap
   * (per task, across replicas) is the store's.
   */
  createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.noted(context, async () => {
      this.enter(context, params.taskId);
      this.checkPush(params);
      this.passed(context, 'request');
      await this.admitRequest(context);
      return this.inner.createTaskPushNotificationConfig(params, context);
    });
  }

  getAgentCard(): Promise<AgentCard> {
    return this.inner.getAgentCard();
  }

  getAuthenticatedExtendedAgentCard(
    params: GetExtendedAgentCardRequest,
    context: ServerCallContext,
  ): Promise<AgentCard> {
    return this.noted(context, () => {
      this.enter(context);
      this.passed(context, 'request');
      return this.inner.getAuthenticatedExtendedAgentCard(params, context);
    });
  }

  getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.noted(context, async () => {
      this.enter(context, params.id);
      this.passed(context, 'request');
      return this.revealed(await this.inner.getTask(params, context), context);
    });
  }

  listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return this.noted(context, () => {
      this.enter(context);
      // Keyless callers are named by their address, which every caller behind the tunnel shares: a list
      // would show one stranger another's tasks. A task's id (a random UUID) stays enough to read it.
      if (isKeyless(callerOf<C>(context).id)) throw this.refusal(authFailed(KEYLESS_LIST, 'access'), context);
      this.passed(context, 'request');
      return this.inner.listTasks(params, context);
    });
  }

  /**
   * A run at another replica is canceled there first, outside the SDK (whose cancel reaches this
   * process's runs only, under a per-task lock); then the SDK answers from the records.
   */
  cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.noted(context, async () => {
      this.enter(context, params.id);
      this.passed(context, 'request');
      await this.options.cancelElsewhere?.(params.id, context);
      const task = await this.inner.cancelTask(params, context);
      // A knock canceled by its caller needs no decision any more.
      this.options.knocks?.canceled(params.id, context);
      return task;
    });
  }

  /** Streams whose task may still owe a write: shutdown waits for them as for runs. */
  get openStreamCount(): number {
    return this.streamsOpen;
  }

  /**
   * The SDK streams the events of a run in this process; for a run at another replica it gives the task
   * as stored and ends. Then the records are followed (read every FOLLOW_EVERY_MS; a running task's form
   * is written at most a second apart) until the task ends: the reply as a whole artifact each time it
   * grew, and each change of status.
   */
  resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const call = scopeOf(context).call;
    if (call) call.mode = 'stream';
    // Checked before any stream opens, so a malformed request is answered as plain JSON.
    try {
      this.enter(context, params.id);
    } catch (error) {
      if (call) call.error = error;
      throw error;
    }
    this.passed(context, 'request');
    return this.noting(context, this.resubscribed(params, context));
  }

  getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.noted(context, () => {
      this.enter(context, params.taskId, params.id);
      this.passed(context, 'request');
      return this.inner.getTaskPushNotificationConfig(params, context);
    });
  }

  listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.noted(context, () => {
      this.enter(context, params.taskId);
      this.passed(context, 'request');
      return this.inner.listTaskPushNotificationConfigs(params, context);
    });
  }

  /** A write like a create (the task's file or Redis value): admitted as a request. */
  deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    return this.noted(context, async () => {
      this.enter(context, params.taskId, params.id);
      this.passed(context, 'request');
      await this.admitRequest(context);
      return this.inner.deleteTaskPushNotificationConfig(params, context);
    });
  }

  private async *admittedStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const place = (await this.admit(params, context, 'stream'))!;
    const events = this.inner.sendMessageStream(params, context);
    // Counted from here: a caller's leaving takes effect only at the next event, which the SDK saved first.
    this.streamsOpen++;
    const ended = () => this.streamsOpen--;
    let left = true;
    const next = () =>
      events.next().catch((error: unknown) => {
        left = false;
        throw error;
      });
    try {
      for (let event = await next(); !event.done; event = await next()) {
        // The SDK's first event is the task it created: the stream counts on that task from here.
        if (event.value.payload?.$case === 'task') place.onTask(event.value.payload.value.id);
        yield event.value;
      }
      left = false;
    } finally {
      place.release();
      scopeOf(context).slot?.();
      // The caller left (its connection closed). The SDK saves a streamed task's events only while its
      // stream is read: read on to the end here, or the task would stay `working`, held against the
      // caller's cap, with its final push notification never sent.
      if (left) {
        void drain(events)
          .catch((error: unknown) => this.options.onError?.(error))
          .finally(ended);
      } else ended();
    }
  }

  /**
   * Admitted as a request once a place among the caller's open streams is free (a refusal there costs the
   * caller nothing), inside the stream: every transport but v0.3's waits for its first event before it
   * answers, so a refusal is a plain 429. Then as `resubscribe` says. The place is given back when the
   * stream ends or, sooner, when the caller leaves (RequestScope.leave).
   */
  private async *resubscribed(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const place = this.takeStream(context, params.id);
    try {
      await this.admitRequest(context);
      let last: Task | undefined;
      for await (const sent of this.inner.resubscribe(params, context)) {
        const payload = sent.payload;
        const event: StreamResponse =
          payload?.$case === 'task'
            ? { payload: { $case: 'task', value: this.revealed(payload.value, context) } }
            : sent;
        last = seen(last, event);
        yield event;
      }
      if (last && !isTerminal(last)) yield* this.follow(last, context);
    } finally {
      place.release();
    }
  }

  /** A task running elsewhere, from its records: what changed since `previous`, until it ends. */
  private async *follow(previous: Task, context: ServerCallContext): AsyncGenerator<StreamResponse> {
    const { id: taskId, contextId } = previous;
    for (;;) {
      const state = previous.status?.state;
      const every =
        state !== undefined && WAITING_STATES.has(state) ? FOLLOW_WAITING_EVERY_MS : FOLLOW_EVERY_MS;
      await new Promise((resolve) => setTimeout(resolve, every));
      const loaded = await this.options.tasks.load(taskId, context);
      if (!loaded) return;
      const task = this.revealed(loaded, context);
      const ended = isTerminal(task);
      for (const artifact of task.artifacts) {
        const before = previous.artifacts.find((known) => known.artifactId === artifact.artifactId);
        if (before && sameArtifact(before, artifact)) continue;
        yield {
          payload: {
            $case: 'artifactUpdate',
            value: { taskId, contextId, artifact, append: false, lastChunk: ended, metadata: undefined },
          },
        };
      }
      const status = task.status;
      if (status?.state !== previous.status?.state || status?.timestamp !== previous.status?.timestamp) {
        yield {
          payload: { $case: 'statusUpdate', value: { taskId, contextId, status, metadata: undefined } },
        };
      }
      if (ended) return;
      previous = task;
    }
  }

  /** One call's outcome on its traffic record: the task it answered with, or what refused or failed it. */
  private async noted<T>(context: ServerCallContext, run: () => Promise<T>): Promise<T> {
    const call = scopeOf(context).call;
    try {
      const result = await run();
      if (call && isTask(result)) noteTask(call, result);
      return result;
    } catch (error) {
      if (call) call.error = error;
      throw this.kept(error, context);
    }
  }

  /** A stream's events and failure on its traffic record. */
  private async *noting(
    context: ServerCallContext,
    stream: AsyncGenerator<StreamResponse, void, undefined>,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const call = scopeOf(context).call;
    try {
      for await (const event of stream) {
        if (call) noteEvent(call, event);
        yield event;
      }
    } catch (error) {
      if (call) call.error = error;
      throw this.kept(error, context);
    }
  }

  private kept(error: unknown, context: ServerCallContext): unknown {
    if (error instanceof ProtocolError) scopeOf(context).refusal = error;
    return error;
  }

  /**
   * Everything the SDK would not check, then the gate; the turn is refused before any task exists. A
   * stream takes its place among the caller's open streams first (returned, to give back when it ends).
   */
  private async admit(
    params: SendMessageRequest,
    context: ServerCallContext,
    mode: Mode,
  ): Promise<StreamPlace | undefined> {
    const message = params.message;
    const scope = scopeOf(context);
    const call = scope.call;
    const { content, chain } = this.checkMessage(params, context, mode);
    if (message?.taskId) await this.checkFollowUp(message.taskId, context);
    passStep(call, 'request');
    const caller = callerOf<C>(context);
    let place: StreamPlace | undefined;
    try {
      // The caps first: the gate's admission counts the request and holds the turn's budget reservation.
      if (mode === 'stream') place = this.takeStream(context);
      scope.slot = await this.options.taskCapacity?.(caller.id);
      const turn = { message: content.text, contextId: message?.contextId || undefined, content, chain };
      scope.content = content;
      await this.options.gate.admit(caller, turn, {
        passed: (step) => passStep(call, step),
        matched: (match) => {
          if (call) call.screened = match;
        },
      });
      passStep(call, 'limits');
    } catch (error) {
      place?.release();
      scope.slot?.();
      throw this.refusal(error, context);
    }
    return place;
  }

  /** A place among the caller's open streams (on `taskId`), given back at once if the caller leaves. */
  private takeStream(context: ServerCallContext, taskId?: string): StreamPlace {
    let place: StreamPlace;
    try {
      place = this.streams.take(countedAs(callerOf<C>(context)), taskId);
    } catch (error) {
      throw this.refusal(error, context);
    }
    scopeOf(context).leave = place.release;
    return place;
  }

  /** A request that runs no turn, counted by the gate (its rate limits; no token budget). */
  private async admitRequest(context: ServerCallContext): Promise<void> {
    try {
      await this.options.gate.admitRequest(callerOf<C>(context));
    } catch (error) {
      throw this.refusal(error, context);
    }
    this.passed(context, 'limits');
  }

  /** Notes on the traffic record that the request passed `step` (call-record.ts). */
  private passed(context: ServerCallContext, step: A2AStep): void {
    passStep(scopeOf(context).call, step);
  }

  /**
   * What a message is checked for before anything is counted or stored (a knock's too); returns its text.
   */
  private checkMessage(
    params: SendMessageRequest,
    context: ServerCallContext,
    mode: Mode,
  ): { content: TurnContent; chain?: CallChain } {
    const message = params.message;
    const call = scopeOf(context).call;
    if (call) call.mode = mode;
    if (call && message?.contextId) call.contextId = message.contextId;
    this.enter(context);
    // Named before they are judged: a refused call still shows what it carried.
    if (call) call.files = messageFiles(message);
    const content = messageContent(message, this.options.attachments?.() ?? INLINE_ONLY);
    if (call) call.files = content.files;
    checkContextId(message?.contextId);
    checkReferenceTaskIds(message?.referenceTaskIds);
    const push = params.configuration?.taskPushNotificationConfig;
    if (push) this.checkPush(push);
    const chain = messageChain(message);
    if (call && chain) call.chain = chain;
    return { content, ...(chain ? { chain } : {}) };
  }

  /**
   * A follow-up message (one that names its task): a task in an interrupted state takes it, and the SDK
   * runs it as that task's next turn (A2A §3.1.1; its history keeps both); a task that ended refuses it
   * (UnsupportedOperation, CORE-SEND-002). A task still working refuses it too: the SDK would run a second
   * turn inside it, concurrently with the first; its caller sends it once the task ends or asks for input.
   */
  private async checkFollowUp(taskId: string, context: ServerCallContext): Promise<void> {
    const task = await this.options.tasks.load(taskId, context);
    if (!task) throw new TaskNotFoundError(`No task "${taskId.slice(0, 80)}" of yours is kept here.`);
    const state = task.status?.state;
    if (state !== undefined && WAITING_STATES.has(state)) return;
    throw new UnsupportedOperationError(
      isTerminal(task)
        ? 'This task has ended and takes no more messages. To continue the conversation, send a new message with the same contextId and no taskId.'
        : 'This task is still working on a message; send the next once it ends (GetTask, SubscribeToTask), with the same contextId and no taskId.',
    );
  }

  /** A keyless caller's message under `pairing`: it knocks (knock.ts), and runs nothing. */
  private async knock(params: SendMessageRequest, context: ServerCallContext, mode: Mode): Promise<Task> {
    const knocks = this.options.knocks;
    if (!knocks) throw this.refusal(authFailed(NO_KNOCKS, 'access'), context);
    const { content } = this.checkMessage(params, context, mode);
    // A knock keeps its text alone (knock.ts): images would be lost by the time the operator approves.
    if (content.images.length > 0) {
      throw new ContentTypeNotSupportedError(
        'A message that waits for the operator carries text only (text files and data are inlined): send it without its images, and send them once the operator has approved you (your key arrives in this task).',
      );
    }
    const text = content.text;
    const call = scopeOf(context).call;
    passStep(call, 'request');
    const push = params.configuration?.taskPushNotificationConfig;
    return knocks.knock(
      { message: params.message!, text, ...(push ? { push } : {}), ...(call ? { call } : {}) },
      context,
    );
  }

  /** A knock over a stream: its task, waiting, then the stream ends (it is followed by its id). */
  private async *knockStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const task = await this.knock(params, context, 'stream');
    yield { payload: { $case: 'task', value: task } };
  }

  /** The task as its caller reads it: a knock's key shown once (knock.ts `reveal`). */
  private revealed(task: Task, context: ServerCallContext): Task {
    return this.options.knocks?.reveal(task, context) ?? task;
  }

  /** Its sizes and header values (PUSH_CONFIG_BOUNDS), then its URL's address (the webhook rules). */
  private checkPush(config: TaskPushNotificationConfig): void {
    const problem = pushConfigProblem(config);
    if (problem) throw new RequestMalformedError(problem);
    const refused = this.options.pushUrlProblem(config.url);
    if (refused) throw new RequestMalformedError(`Push notification URL refused: ${refused}`);
  }

  /** Every call: the request is decoded (RequestScope.decoded), names no tenant, and its ids are strings. */
  private enter(context: ServerCallContext, ...ids: unknown[]): void {
    const scope = scopeOf(context);
    scope.decoded = true;
    // The first id names the task, for the traffic record.
    if (scope.call && typeof ids[0] === 'string' && ids[0]) scope.call.taskId = ids[0];
    if (context.tenant) throw new RequestMalformedError('This agent has no tenants: leave "tenant" empty.');
    if (ids.some((id) => typeof id !== 'string')) {
      throw new RequestMalformedError('Task and push config ids are strings.');
    }
  }

  /** Kept on the request for the transport to answer in its terms (status, Retry-After, error code). */
  private refusal(error: unknown, context: ServerCallContext): ProtocolError {
    let refusal: ProtocolError;
    if (error instanceof ProtocolError) refusal = error;
    else {
      this.options.onError?.(error);
      refusal = new ProtocolError(
        'AGENT_UNAVAILABLE',
        500,
        'The agent could not admit this message; the operator can see why in the agent log.',
      );
    }
    scopeOf(context).refusal = refusal;
    return refusal;
  }
}

async function drain(events: AsyncGenerator<unknown>): Promise<void> {
  for (let next = await events.next(); !next.done; next = await events.next());
}

/** The task as a stream showed it so far: its snapshot, then its status changes. */
function seen(last: Task | undefined, event: StreamResponse): Task | undefined {
  const payload = event.payload;
  if (payload?.$case === 'task') return payload.value;
  if (payload?.$case === 'statusUpdate' && last) return { ...last, status: payload.value.status };
  return last;
}

function isTerminal(task: Task): boolean {
  const state = task.status?.state;
  return state !== undefined && TERMINAL_STATES.has(state);
}

function sameArtifact(a: Artifact, b: Artifact): boolean {
  return JSON.stringify(Artifact.toJSON(a)) === JSON.stringify(Artifact.toJSON(b));
}
