import type { StreamResponse, Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import {
  V1PushNotificationSerializer,
  type PushNotificationSender,
  type PushNotificationStore,
  type ServerCallContext,
  type StoredPushNotificationConfig,
} from '@a2a-js/sdk/server';

/** One webhook POST, ready to send: the network part (address rules, retries, once across replicas) is not ours. */
export interface PushNotification {
  taskId: string;
  url: string;
  body: string;
  contentType: string;
  /** Authentication as the config asked for (§4.3.3): these may hold the caller's secrets. */
  headers: Record<string, string>;
}

export interface A2APushSenderOptions {
  store: PushNotificationStore;
  /** Sends one notification (the shared callback delivery); a rejection is reported, never retried here. */
  deliver(notification: PushNotification): Promise<void>;
  onError?(error: unknown): void;
}

const v1 = new V1PushNotificationSerializer();
const v03 = new V03PushNotificationSerializer();

/**
 * The SDK calls its push sender for every event of a task, each reply delta included; a webhook gets the
 * events that change what a poller would see: the task, its status changes, and the reply's last chunk
 * (the whole reply). Each is shaped for the version its config was registered in (v1.0 StreamResponse as
 * application/a2a+json, v0.3 bare event as application/json) and authenticated as the config says. Events
 * of one task are delivered in order.
 *
 * Used instead of the SDK's DefaultPushNotificationSender, which posts with the global fetch to any
 * address (SSRF), logs webhook URLs, and sends one POST per token.
 */
export class A2APushSender implements PushNotificationSender {
  private readonly chains = new Map<string, Promise<void>>();

  constructor(private readonly options: A2APushSenderOptions) {}

  async send(event: StreamResponse, context: ServerCallContext, task?: Task): Promise<void> {
    const taskId = notableTaskId(event);
    if (!taskId) return;
    const configs = await this.configs(taskId, context);
    if (configs.length === 0) return;
    const previous = this.chains.get(taskId) ?? Promise.resolve();
    const next = previous.then(() => this.dispatch(taskId, event, configs, task));
    this.chains.set(taskId, next);
    await next;
    if (this.chains.get(taskId) === next) this.chains.delete(taskId);
  }

  private async configs(taskId: string, context: ServerCallContext): Promise<StoredPushNotificationConfig[]> {
    const { store } = this.options;
    if (store.loadWithMetadata) return store.loadWithMetadata(taskId, context);
    const configs = await store.load(taskId, context);
    return configs.map((config) => ({ config, wireVersion: context.requestedVersion }));
  }

  private async dispatch(
    taskId: string,
    event: StreamResponse,
    configs: StoredPushNotificationConfig[],
    task: Task | undefined,
  ): Promise<void> {
    await Promise.all(
      configs.map(async ({ config, wireVersion }) => {
        const { body, contentType } = (wireVersion === '0.3' ? v03 : v1).serialize(event, task);
        try {
          await this.options.deliver({
            taskId,
            url: config.url,
            body,
            contentType,
            headers: authHeaders(config),
          });
        } catch (error) {
          this.options.onError?.(error);
        }
      }),
    );
  }
}

/** The task an event is worth a notification for, or undefined (a reply delta, a stand-alone message). */
function notableTaskId(event: StreamResponse): string | undefined {
  const payload = event.payload;
  switch (payload?.$case) {
    case 'task':
      return payload.value.id;
    case 'statusUpdate':
      return payload.value.taskId;
    case 'artifactUpdate':
      return payload.value.lastChunk ? payload.value.taskId : undefined;
    default:
      return undefined;
  }
}

/** §4.3.3: `Authorization: <scheme> <credentials>`; the config's token in X-A2A-Notification-Token. */
export function authHeaders(config: TaskPushNotificationConfig): Record<string, string> {
  const headers: Record<string, string> = {};
  const auth = config.authentication;
  if (auth?.scheme && auth.credentials) headers.Authorization = `${auth.scheme} ${auth.credentials}`;
  if (config.token) headers['X-A2A-Notification-Token'] = config.token;
  return headers;
}
