import { randomUUID } from 'node:crypto';
import {
  Role,
  TaskState,
  type SendMessageConfiguration,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';

/** A SendMessageRequest (v1.0 shapes, as the SDK's client takes it) with one text part. */
export function send(
  text: string,
  options: { contextId?: string; taskId?: string; configuration?: Partial<SendMessageConfiguration> } = {},
): SendMessageRequest {
  return {
    tenant: '',
    message: {
      messageId: randomUUID(),
      contextId: options.contextId ?? '',
      taskId: options.taskId ?? '',
      role: Role.ROLE_USER,
      parts: [
        {
          content: { $case: 'text', value: text },
          mediaType: 'text/plain',
          filename: '',
          metadata: undefined,
        },
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: options.configuration
      ? {
          acceptedOutputModes: [],
          taskPushNotificationConfig: undefined,
          returnImmediately: false,
          ...options.configuration,
        }
      : undefined,
    metadata: undefined,
  };
}

/** The reply text a task holds (its `reply` artifact's text parts). */
export function replyText(task: Task): string {
  const artifact = task.artifacts.find((a) => a.artifactId === 'reply');
  return (artifact?.parts ?? [])
    .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
    .join('');
}

export function asTask(result: unknown): Task {
  if (!result || typeof result !== 'object' || !('status' in result)) throw new Error('expected a Task');
  return result as Task;
}

export async function collect(stream: AsyncIterable<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** `task:working`, `artifact:+Hello`, `artifact:=Hello, alice.` (a replacing last chunk), `status:completed`. */
export function describeEvent(event: StreamResponse): string {
  const payload = event.payload;
  switch (payload?.$case) {
    case 'task':
      return `task:${stateName(payload.value.status?.state)}`;
    case 'statusUpdate':
      return `status:${stateName(payload.value.status?.state)}`;
    case 'artifactUpdate': {
      const text = (payload.value.artifact?.parts ?? [])
        .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
        .join('');
      return `artifact:${payload.value.append ? '+' : '='}${text}${payload.value.lastChunk ? '|last' : ''}`;
    }
    default:
      return `${payload?.$case ?? 'nothing'}`;
  }
}

export function stateName(state: TaskState | undefined): string {
  return state === undefined ? 'none' : TaskState[state].replace('TASK_STATE_', '').toLowerCase();
}
