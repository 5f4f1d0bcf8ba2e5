import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { ProtocolError } from '../protocol/index.js';
import { callerOf, scopeOf } from './call-context.js';
import type { A2ACaller, A2AGate } from './chat-core.js';
import { checkContextId, messageText } from './message-text.js';

/** Webhooks per task: each event is posted to every one, so more would make the agent an amplifier. */
export const MAX_PUSH_CONFIGS_PER_TASK = 4;

/** What a push config puts in a header: visible ASCII only (a CR or LF would split the request). */
const HEADER_VALUE = /^[\x21-\x7e]{1,4096}$/;

export interface GatedHandlerOptions<C extends A2ACaller> {
  gate: A2AGate<C>;
  tasks: TaskStore;
  /** Why a push notification URL is refused (the SAMVAD callback rule: public https only), or undefined. */
  pushUrlProblem(url: string): string | undefined;
  /** Refuses a new task when its caller holds as many as it may (A2ATaskStore.admit); after the gate. */
  taskCapacity?(owner: string): Promise<void>;
  onError?(error: unknown): void;
}

/**
 * The SDK's request handler behind the gate: a message is admitted before the SDK creates a task (so a
 * refusal stores nothing), push configs are checked before they are kept, and everything else passes
 * through. Both transports and both protocol versions reach the SDK through here, with v1.0 shapes.
 */
export class GatedHandler<C extends A2ACaller> implements A2ARequestHandler {
  constructor(
    private readonly inner: A2ARequestHandler,
    private readonly options: GatedHandlerOptions<C>,
  ) {}

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    await this.admit(params, context);
    return this.inner.sendMessage(params, context);
  }

  async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    await this.admit(params, context);
    yield* this.inner.sendMessageStream(params, context);
  }

  async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    this.enter(context, params.taskId);
    this.checkPush(params);
    const { configs } = await this.inner.listTaskPushNotificationConfigs(
      { tenant: '', taskId: params.taskId, pageSize: 0, pageToken: '' },
      context,
    );
    const replaces = params.id !== '' && configs.some((config) => config.id === params.id);
    if (!replaces && configs.length >= MAX_PUSH_CONFIGS_PER_TASK) {
      throw new RequestMalformedError(
        `A task takes at most ${MAX_PUSH_CONFIGS_PER_TASK} push notification configs; delete one first.`,
      );
    }
    return this.inner.createTaskPushNotificationConfig(params, context);
  }

  getAgentCard(): Promise<AgentCard> {
    return this.inner.getAgentCard();
  }

  getAuthenticatedExtendedAgentCard(
    params: GetExtendedAgentCardRequest,
    context: ServerCallContext,
  ): Promise<AgentCard> {
    this.enter(context);
    return this.inner.getAuthenticatedExtendedAgentCard(params, context);
  }

  getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    this.enter(context, params.id);
    return this.inner.getTask(params, context);
  }

  listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    this.enter(context);
    return this.inner.listTasks(params, context);
  }

  cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    this.enter(context, params.id);
    return this.inner.cancelTask(params, context);
  }

  resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    this.enter(context, params.id);
    return this.inner.resubscribe(params, context);
  }

  getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    this.enter(context, params.taskId, params.id);
    return this.inner.getTaskPushNotificationConfig(params, context);
  }

  listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    this.enter(context, params.taskId);
    return this.inner.listTaskPushNotificationConfigs(params, context);
  }

  deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    this.enter(context, params.taskId, params.id);
    return this.inner.deleteTaskPushNotificationConfig(params, context);
  }

  /** Everything the SDK would not check, then the gate; the turn is refused before any task exists. */
  private async admit(params: SendMessageRequest, context: ServerCallContext): Promise<void> {
    this.enter(context);
    const message = params.message;
    const text = messageText(message);
    checkContextId(message?.contextId);
    if (message?.taskId) await this.refuseFollowUp(message.taskId, context);
    const push = params.configuration?.taskPushNotificationConfig;
    if (push) this.checkPush(push);
    const caller = callerOf<C>(context);
    try {
      await this.options.gate.admit(caller, { message: text, contextId: message?.contextId || undefined });
      await this.options.taskCapacity?.(caller.id);
    } catch (error) {
      throw this.refusal(error, context);
    }
  }

  /**
   * A task here takes one message (its reply ends it): a follow-up belongs in a new task of the same
   * context. The SDK would run a second turn inside a working task, concurrently with the first.
   */
  private async refuseFollowUp(taskId: string, context: ServerCallContext): Promise<never> {
    const task = await this.options.tasks.load(taskId, context);
    if (!task) throw new TaskNotFoundError(`No task "${taskId.slice(0, 80)}" of yours is kept here.`);
    throw new UnsupportedOperationError(
      'Each task here answers one message. To continue the conversation, send a new message with the same contextId and no taskId.',
    );
  }

  private checkPush(config: TaskPushNotificationConfig): void {
    const problem = this.options.pushUrlProblem(config.url);
    if (problem) throw new RequestMalformedError(`Push notification URL refused: ${problem}`);
    const { token, authentication } = config;
    const fields = [token, authentication?.scheme, authentication?.credentials].filter(Boolean) as string[];
    if (fields.some((value) => !HEADER_VALUE.test(value))) {
      throw new RequestMalformedError(
        'The push notification token, scheme and credentials must be visible ASCII without spaces (at most 4096 characters each).',
      );
    }
  }

  /** Every call: the request is decoded (RequestScope.decoded), names no tenant, and its ids are strings. */
  private enter(context: ServerCallContext, ...ids: unknown[]): void {
    scopeOf(context).decoded = true;
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
