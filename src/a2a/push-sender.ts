import type { StreamResponse, Task, TaskPushNotificationConfig, TaskState } from '@a2a-js/sdk';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import {
  V1PushNotificationSerializer,
  type PushNotificationSender,
  type PushNotificationStore,
  type ServerCallContext,
  type StoredPushNotificationConfig,
} from '@a2a-js/sdk/server';
import { scopeOf } from './call-context.js';
import { TERMINAL_STATES } from './task-store.js';

/** One webhook POST, ready to send: the network part (address rules, retries, once across replicas) is not ours. */
export interface PushNotification {
  taskId: string;
  url: string;
  body: string;
  contentType: string;
  /** Authentication as the config asked for (§4.3.3): these may hold the caller's secrets. */
  headers: Record<string, string>;
}

/**
 * Queues one event's notifications (one per config, built meanwhile) after the task's earlier ones;
 * resolves once they are sent or given up.
 */
export type DeliverPush = (taskId: string, notifications: Promise<PushNotification[]>) => Promise<void>;

export interface A2APushSenderOptions {
  store: PushNotificationStore;
  deliver: DeliverPush;
  onError?(error: unknown): void;
}

const v1 = new V1PushNotificationSerializer();
const v03 = new V03PushNotificationSerializer();

/**
 * The SDK calls its push sender for every event of a task, each reply delta included; a webhook gets the
 * events that change what a poller would see: the task, its non-final status changes, and the reply's last
 * chunk (the whole reply). Each is shaped for the version its config was registered in (v1.0
 * StreamResponse as application/a2a+json, v0.3 bare event as application/json) and authenticated as the
 * config says. The final status is not sent from here: the task store hands it to the one replica that
 * ended the task (or recovered it), so it is delivered once (`finalNotifications`). An event is queued the
 * moment the SDK reports it, so a task's notifications go out in order.
 *
 * Used instead of the SDK's DefaultPushNotificationSender, which posts with the global fetch to any
 * address (SSRF), logs webhook URLs, and sends one POST per token.
 */
export class A2APushSender implements PushNotificationSender {
  constructor(private readonly options: A2APushSenderOptions) {}

  async send(event: StreamResponse, context: ServerCallContext, task?: Task): Promise<void> {
    // A quiet task (a blocking send without configs) can have none: nobody knew its id until the reply.
    if (scopeOf(context).quiet) return;
    const taskId = notableTaskId(event);
    if (!taskId) return;
    // The SDK goes on changing its task object: the notification shows it as it is now.
    const snapshot = task && structuredClone(task);
    const notifications = this.configs(taskId, context).then((configs) =>
      notificationsFor(taskId, event, snapshot, configs),
    );
    await this.options
      .deliver(taskId, notifications)
      .catch((error: unknown) => this.options.onError?.(error));
  }

  private async configs(taskId: string, context: ServerCallContext): Promise<StoredPushNotificationConfig[]> {
    const { store } = this.options;
    if (store.loadWithMetadata) return store.loadWithMetadata(taskId, context);
    const configs = await store.load(taskId, context);
    return configs.map((config) => ({ config, wireVersion: context.requestedVersion }));
  }
}

/** A finished task's final notification (its status, as a status update), for each config. */
export function finalNotifications(task: Task, configs: StoredPushNotificationConfig[]): PushNotification[] {
  const event: StreamResponse = {
    payload: {
      $case: 'statusUpdate',
      value: { taskId: task.id, contextId: task.contextId, status: task.status, metadata: undefined },
    },
  };
  return notificationsFor(task.id, event, task, configs);
}

function notificationsFor(
  taskId: string,
  event: StreamResponse,
  task: Task | undefined,
  configs: StoredPushNotificationConfig[],
): PushNotification[] {
  return configs.map(({ config, wireVersion }) => {
    const { body, contentType } = (wireVersion === '0.3' ? v03 : v1).serialize(event, task);
    return { taskId, url: config.url, body, contentType, headers: authHeaders(config) };
  });
}

/**
 * The task an event is worth a notification for, or undefined: a reply delta, a stand-alone message, or
 * the final status (the store's to send, once).
 */
function notableTaskId(event: StreamResponse): string | undefined {
  const payload = event.payload;
  switch (payload?.$case) {
    case 'task':
      return isFinal(payload.value.status?.state) ? undefined : payload.value.id;
    case 'statusUpdate':
      return isFinal(payload.value.status?.state) ? undefined : payload.value.taskId;
    case 'artifactUpdate':
      return payload.value.lastChunk ? payload.value.taskId : undefined;
    default:
      return undefined;
  }
}

function isFinal(state: TaskState | undefined): boolean {
  return state !== undefined && TERMINAL_STATES.has(state);
}

/** §4.3.3: `Authorization: <scheme> <credentials>`; the config's token in X-A2A-Notification-Token. */
export function authHeaders(config: TaskPushNotificationConfig): Record<string, string> {
  const headers: Record<string, string> = {};
  const auth = config.authentication;
  if (auth?.scheme && auth.credentials) headers.Authorization = `${auth.scheme} ${auth.credentials}`;
  if (config.token) headers['X-A2A-Notification-Token'] = config.token;
  return headers;
}
