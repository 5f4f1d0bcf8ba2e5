import { randomUUID } from 'node:crypto';
import { TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import type {
  PushNotificationStore,
  ServerCallContext,
  StoredPushNotificationConfig,
} from '@a2a-js/sdk/server';
import type { A2ATaskRecords } from '../state/a2a-records.js';
import type { PushConfigEntry } from '../state/tasks.js';
import { callerOf, scopeOf } from './call-context.js';

/** Webhooks per task: each event is posted to every one, so more would make the agent an amplifier. */
export const MAX_PUSH_CONFIGS_PER_TASK = 4;

/**
 * Push notification configs kept with their task (data dir or Redis), so they survive a restart and every
 * replica sees them, each with the wire version it was registered in. Scoped to the task's owner: another
 * caller's task has no configs to read, set or delete. The cap holds across replicas (the store checks it).
 */
export class A2APushConfigs implements PushNotificationStore {
  constructor(private readonly records: A2ATaskRecords) {}

  async save(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    if (!config.id) config.id = randomUUID();
    const entry: PushConfigEntry = {
      id: config.id,
      config: TaskPushNotificationConfig.toJSON({ ...config, taskId }),
      wireVersion: context.requestedVersion || '0.3',
    };
    const task = await this.records.get(taskId);
    if (!task) {
      // A message sent with a config: the SDK keeps it before the task exists; it is written with the task.
      scopeOf(context).push = { taskId, entries: [entry] };
      return;
    }
    if (task.owner !== callerOf(context).id) throw notFound(taskId);
    const saved = await this.records.savePushConfig(taskId, entry, MAX_PUSH_CONFIGS_PER_TASK);
    if (saved === 'missing') throw notFound(taskId);
    if (saved === 'full') {
      throw new RequestMalformedError(
        `A task takes at most ${MAX_PUSH_CONFIGS_PER_TASK} push notification configs; delete one first.`,
      );
    }
  }

  async load(taskId: string, context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return (await this.loadWithMetadata(taskId, context)).map((stored) => stored.config);
  }

  async loadWithMetadata(
    taskId: string,
    context: ServerCallContext,
  ): Promise<StoredPushNotificationConfig[]> {
    if (!(await this.owns(taskId, context))) return [];
    return storedConfigs(await this.records.pushConfigs(taskId));
  }

  async delete(taskId: string, context: ServerCallContext, configId?: string): Promise<void> {
    if (configId && (await this.owns(taskId, context))) await this.records.deletePushConfig(taskId, configId);
  }

  private async owns(taskId: string, context: ServerCallContext): Promise<boolean> {
    return (await this.records.get(taskId))?.owner === callerOf(context).id;
  }
}

/** The configs as the SDK and the push sender take them. */
export function storedConfigs(entries: PushConfigEntry[]): StoredPushNotificationConfig[] {
  return entries.map((entry) => ({
    config: TaskPushNotificationConfig.fromJSON(entry.config),
    wireVersion: entry.wireVersion,
  }));
}

function notFound(taskId: string): TaskNotFoundError {
  return new TaskNotFoundError(`No task "${taskId.slice(0, 80)}" of yours is kept here.`);
}
