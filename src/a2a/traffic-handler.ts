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
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { noteTask, stateName, type A2ACallRecord } from './call-record.js';
import { scopeOf } from './call-context.js';

/**
 * Notes on each request's call record what the operator's traffic log shows of it: the mode of a message,
 * the task it concerns and the state it was left in, and what refused or failed it (the method is named by
 * the front door, which knows it before the SDK runs). Passes everything through unchanged.
 */
export class TrafficHandler implements A2ARequestHandler {
  constructor(private readonly inner: A2ARequestHandler) {}

  getAgentCard(): Promise<AgentCard> {
    return this.inner.getAgentCard();
  }

  getAuthenticatedExtendedAgentCard(params: GetExtendedAgentCardRequest, context: ServerCallContext) {
    return this.noted(context, undefined, () =>
      this.inner.getAuthenticatedExtendedAgentCard(params, context),
    );
  }

  sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    const call = this.begin(context);
    if (call) call.mode = params.configuration?.returnImmediately ? 'async' : 'sync';
    if (call && params.message?.contextId) call.contextId = params.message.contextId;
    return this.outcome(call, () => this.inner.sendMessage(params, context));
  }

  sendMessageStream(params: SendMessageRequest, context: ServerCallContext) {
    const call = this.begin(context);
    if (call) call.mode = 'stream';
    if (call && params.message?.contextId) call.contextId = params.message.contextId;
    return this.followed(call, () => this.inner.sendMessageStream(params, context));
  }

  getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.noted(context, params.id, () => this.inner.getTask(params, context));
  }

  listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return this.noted(context, undefined, () => this.inner.listTasks(params, context));
  }

  cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.noted(context, params.id, () => this.inner.cancelTask(params, context));
  }

  resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext) {
    const call = this.begin(context, params.id);
    if (call) call.mode = 'stream';
    return this.followed(call, () => this.inner.resubscribe(params, context));
  }

  createTaskPushNotificationConfig(params: TaskPushNotificationConfig, context: ServerCallContext) {
    return this.noted(context, params.taskId, () =>
      this.inner.createTaskPushNotificationConfig(params, context),
    );
  }

  getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest, context: ServerCallContext) {
    return this.noted(context, params.taskId, () =>
      this.inner.getTaskPushNotificationConfig(params, context),
    );
  }

  listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.noted(context, params.taskId, () =>
      this.inner.listTaskPushNotificationConfigs(params, context),
    );
  }

  deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    return this.noted(context, params.taskId, () =>
      this.inner.deleteTaskPushNotificationConfig(params, context),
    );
  }

  private begin(context: ServerCallContext, taskId?: string): A2ACallRecord | undefined {
    const call = scopeOf(context).call;
    if (!call) return undefined;
    if (taskId) call.taskId = taskId;
    return call;
  }

  private noted<T>(
    context: ServerCallContext,
    taskId: string | undefined,
    run: () => Promise<T>,
  ): Promise<T> {
    return this.outcome(this.begin(context, taskId), run);
  }

  private async outcome<T>(call: A2ACallRecord | undefined, run: () => Promise<T>): Promise<T> {
    try {
      const result = await run();
      if (call && isTask(result)) noteTask(call, result);
      return result;
    } catch (error) {
      if (call) call.error = error;
      throw error;
    }
  }

  /**
   * Opened at once, not at the first read: what the inner handler refuses before any stream opens (a
   * malformed id) must reach the transport as it did, to be answered as plain JSON.
   */
  private followed(
    call: A2ACallRecord | undefined,
    open: () => AsyncGenerator<StreamResponse, void, undefined>,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      return this.watched(call, open());
    } catch (error) {
      if (call) call.error = error;
      throw error;
    }
  }

  private async *watched(
    call: A2ACallRecord | undefined,
    stream: AsyncGenerator<StreamResponse, void, undefined>,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      for await (const event of stream) {
        if (call) noteEvent(call, event);
        yield event;
      }
    } catch (error) {
      if (call) call.error = error;
      throw error;
    }
  }
}

function isTask(value: unknown): value is Task {
  return typeof value === 'object' && value !== null && 'status' in value && 'id' in value;
}

function noteEvent(call: A2ACallRecord, event: StreamResponse): void {
  const payload = event.payload;
  if (payload?.$case === 'task') noteTask(call, payload.value);
  else if (payload?.$case === 'statusUpdate') {
    call.taskId = payload.value.taskId;
    call.taskState = stateName(payload.value.status?.state) ?? call.taskState;
  }
}
