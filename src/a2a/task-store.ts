import { Task, TaskState, taskStateToJSON, type ListTasksRequest, type ListTasksResponse } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import type { A2ATaskRecord, A2ATaskRecords } from '../state/a2a-task-store.js';
import { callerOf } from './call-context.js';
import { agentMessage } from './message-text.js';

const TERMINAL = new Set<TaskState>([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

/**
 * The SDK's TaskStore over our task records. The SDK saves a task's whole object at every event, each
 * reply token included; a running task's latest form is kept here in memory and written to the records
 * only when its state changes (created, working, finished), so a streamed reply costs no disk or Redis
 * write per token. Every read and write is scoped to the calling A2A caller: another caller's task is
 * "not found", as the spec asks (§13.1).
 */
export class A2ATaskStore implements TaskStore {
  private readonly live = new Map<string, { owner: string; task: Task }>();

  constructor(
    private readonly records: A2ATaskRecords,
    private readonly options: { retentionMs(): number },
  ) {}

  /** Throws when `owner` holds as many tasks as it may (429) or the store is full (503). */
  async admit(owner: string): Promise<void> {
    await this.records.admit(owner, this.options.retentionMs());
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const owner = ownerOf(context);
    const copy = structuredClone(task);
    const state = copy.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
    const running = this.live.get(task.id);
    if (running && running.owner !== owner) throw new Error('An A2A task never changes owner.');
    const terminal = TERMINAL.has(state);
    if (!terminal) this.live.set(task.id, { owner, task: copy });
    if (running && running.task.status?.state === state && !terminal) return;
    const written = await this.records.put(record(owner, copy, terminal));
    if (terminal || !written) this.live.delete(task.id);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const owner = ownerOf(context);
    const running = this.live.get(taskId);
    if (running) return running.owner === owner ? structuredClone(running.task) : undefined;
    const stored = await this.records.get(taskId);
    return stored?.owner === owner ? Task.fromJSON(stored.doc) : undefined;
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? 50;
    const { records, total } = await this.records.list(ownerOf(context), {
      contextId: params.contextId || undefined,
      state: params.status ? taskStateToJSON(params.status) : undefined,
      updatedAfter: params.statusTimestampAfter
        ? new Date(params.statusTimestampAfter).toISOString()
        : undefined,
      after: params.pageToken ? decodeCursor(params.pageToken) : undefined,
      limit: pageSize + 1,
    });
    const page = records.slice(0, pageSize);
    const tasks = page.map((stored) => {
      const task = structuredClone(this.live.get(stored.id)?.task) ?? Task.fromJSON(stored.doc);
      if (!params.includeArtifacts) task.artifacts = [];
      return task;
    });
    const last = page.at(-1);
    const nextPageToken = records.length > pageSize && last ? encodeCursor(last) : '';
    return { tasks, nextPageToken, pageSize, totalSize: total };
  }

  /**
   * Tasks left unfinished by a stopped process end `failed` (as SAMVAD tasks do): their runs are gone.
   * Call once at start; returns how many.
   */
  async recover(now = () => new Date()): Promise<number> {
    const interrupted = await this.records.interrupted();
    for (const stored of interrupted) {
      const task = Task.fromJSON(stored.doc);
      task.status = {
        state: TaskState.TASK_STATE_FAILED,
        message: agentMessage(
          task.id,
          task.contextId,
          'The agent restarted before this task finished; send the message again.',
        ),
        timestamp: now().toISOString(),
      };
      await this.records.put(record(stored.owner, task, true));
    }
    return interrupted.length;
  }
}

function ownerOf(context: ServerCallContext): string {
  return callerOf(context).id;
}

function record(owner: string, task: Task, terminal: boolean): A2ATaskRecord {
  return {
    id: task.id,
    owner,
    contextId: task.contextId,
    state: taskStateToJSON(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED),
    terminal,
    updatedAt: task.status?.timestamp ?? new Date().toISOString(),
    doc: Task.toJSON(task),
  };
}

/** An opaque page token: where the previous page ended. */
function encodeCursor(last: Pick<A2ATaskRecord, 'updatedAt' | 'id'>): string {
  return Buffer.from(JSON.stringify([last.updatedAt, last.id])).toString('base64url');
}

function decodeCursor(token: string): { updatedAt: string; id: string } {
  try {
    const [updatedAt, id] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown[];
    if (typeof updatedAt === 'string' && typeof id === 'string') return { updatedAt, id };
  } catch {
    // answered below
  }
  throw new RequestMalformedError('pageToken is not one this agent gave: pass nextPageToken as received.');
}
