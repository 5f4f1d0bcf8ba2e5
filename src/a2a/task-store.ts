import { Task, TaskState, taskStateToJSON, type ListTasksRequest, type ListTasksResponse } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { ProtocolError } from '../protocol/index.js';
import type { A2ATaskRecord, A2ATaskRecords } from '../state/a2a-records.js';
import type { PushConfigEntry } from '../state/tasks.js';
import { InvalidFieldError } from './a2a-errors.js';
import { callerOf, scopeOf } from './call-context.js';
import { mintsContexts } from './conversations.js';
import { agentMessage } from './message-text.js';

export const TERMINAL_STATES = new Set<TaskState>([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

/**
 * The interrupted states (A2A §4.1.3): the task waits for someone, its caller's input or (a knock) the
 * operator's approval, and takes a follow-up message. Nothing of it runs meanwhile.
 */
export const WAITING_STATES = new Set<TaskState>([
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);

export interface A2ATaskStoreOptions {
  /**
   * With replicas, another one may answer a poll or a resubscribe: a running task's latest form is written
   * at most this often (ms). Without (one process), its deltas stay in memory until its state changes.
   */
  flushEveryMs?: number;
  /** With replicas: asks the replica running a task to cancel it (see cancelElsewhere). */
  relayCancel?(taskId: string): Promise<void>;
  /** How long a relayed cancel waits for the running replica to record it (default 5 s). */
  cancelWaitMs?: number;
  /** A task this replica just finished owes its final push notification (this replica's to deliver). */
  onOwed?(record: A2ATaskRecord): void;
}

/**
 * The SDK's TaskStore over our task records. The SDK saves a task's whole object at every event, each
 * reply token included; a running task's latest form is kept here in memory and written to the records
 * only when its state changes (created, working, finished) and, with replicas, at most once a second, so
 * a streamed reply costs no disk or Redis write per token. A quiet task (a blocking send: RequestScope's
 * `quiet`) comes as one event, ended, and is written once: its caller learns its id with the reply, as a
 * SAMVAD sync caller gets its result, so there is nothing to read, list or recover before. Every read and
 * write is scoped to the calling A2A caller: another caller's task is "not found", as the spec asks (§13.1).
 */
export class A2ATaskStore implements TaskStore {
  /** Tasks running in this process: their latest form, and whether it changed since it was written. */
  private readonly live = new Map<string, { owner: string; task: Task; unwritten: boolean }>();
  private readonly flusher: NodeJS.Timeout | undefined;
  /** Tasks admitted here and not yet written, per owner and in all (see `admit`). */
  private readonly unwritten = new Map<string, number>();
  private unwrittenAll = 0;

  constructor(
    private readonly records: A2ATaskRecords,
    private readonly options: A2ATaskStoreOptions = {},
  ) {
    if (options.flushEveryMs) {
      this.flusher = setInterval(() => void this.flush(), options.flushEveryMs);
      this.flusher.unref();
    }
  }

  /**
   * Throws when `owner` holds as many tasks as it may (429) or the store is full (503). An admitted task
   * holds its place until it is first written (RequestScope.slot gives it back): a blocking send is written
   * only when it ends, and a caller's concurrent sends are all admitted before any is written.
   */
  async admit(owner: string): Promise<() => void> {
    const unwritten = { mine: this.unwritten.get(owner) ?? 0, all: this.unwrittenAll };
    // Taken before the records answer, so concurrent admissions see each other.
    this.unwritten.set(owner, unwritten.mine + 1);
    this.unwrittenAll++;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      this.unwrittenAll--;
      const left = (this.unwritten.get(owner) ?? 1) - 1;
      if (left > 0) this.unwritten.set(owner, left);
      else this.unwritten.delete(owner);
    };
    try {
      await this.records.admit(owner, unwritten);
    } catch (error) {
      release();
      throw error;
    }
    return release;
  }

  /**
   * With replicas, before the SDK's cancel (which stops a run of this process only, and would otherwise
   * write `canceled` over a run that goes on elsewhere): a task of this caller running at another replica
   * is canceled there, and this waits until the records say it ended (then the SDK answers from them).
   */
  async cancelElsewhere(taskId: string, context: ServerCallContext): Promise<void> {
    const relay = this.options.relayCancel;
    if (!relay || this.live.has(taskId)) return;
    const stored = await this.records.get(taskId);
    if (!stored || stored.owner !== ownerOf(context) || stored.terminal || isWaiting(stored.state)) return;
    await relay(taskId);
    const wait = this.options.cancelWaitMs ?? 5000;
    for (const deadline = Date.now() + wait; Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      if ((await this.records.get(taskId))?.terminal) return;
    }
    throw notConfirmed(wait);
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const owner = ownerOf(context);
    const state = task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
    const running = this.live.get(task.id);
    if (running && running.owner !== owner) throw new Error('An A2A task never changes owner.');
    // A record is a copy (Task.toJSON builds its own objects): made only when something is written.
    if (!running) return this.saveNotRunning(recordOf(owner, task), context);
    if (TERMINAL_STATES.has(state)) {
      this.live.delete(task.id);
      return this.finish(recordOf(owner, task));
    }
    if (WAITING_STATES.has(state)) {
      // It stops running here and waits (for its caller, or the operator): written, and no longer held.
      this.live.delete(task.id);
      await this.records.update(recordOf(owner, task));
      return;
    }
    const changed = running.task.status?.state !== state;
    running.task = structuredClone(task);
    running.unwritten = !changed;
    if (changed && !(await this.records.update(recordOf(owner, task)))) this.live.delete(task.id);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const owner = ownerOf(context);
    const running = this.live.get(taskId);
    if (running) return running.owner === owner ? structuredClone(running.task) : undefined;
    // The SDK reads back what this request just wrote (to answer with it): no need to ask the records.
    const ended = scopeOf(context).ended;
    if (ended?.id === taskId) return Task.fromJSON(ended.doc);
    const stored = await this.records.get(taskId);
    return stored?.owner === owner ? taskOf(stored) : undefined;
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
      const task = structuredClone(this.live.get(stored.id)?.task) ?? taskOf(stored);
      if (!params.includeArtifacts) task.artifacts = [];
      return task;
    });
    const last = page.at(-1);
    const nextPageToken = records.length > pageSize && last ? encodeCursor(last) : '';
    return { tasks, nextPageToken, pageSize, totalSize: total };
  }

  /**
   * Whether `owner` holds a task in conversation `contextId` that was minted here (conversations.ts). A
   * caller learns a minted contextId with its task, which is in the records by then (a blocking send's is
   * written as it ends, before its answer), so the records alone answer.
   */
  hasMintedContext(owner: string, contextId: string): Promise<boolean> {
    return this.records.hasMintedContext(owner, contextId);
  }

  /** Stops the periodic writes (the runs of this process end through `save` as always). */
  close(): void {
    clearInterval(this.flusher);
  }

  /**
   * A write for a task this process does not run: its first event (it starts here), a late write (the
   * first terminal state stands), or a write of a task that waited (WAITING_STATES) and runs here again (its
   * caller's follow-up, the operator's approval of a knock): from then on this process holds it. A task that
   * waits is never held in memory: each write of it goes to the records, so nothing of it is lost to a
   * restart, which does not end it (state/tasks.ts, A2A_WAITING_STATES).
   */
  private async saveNotRunning(record: A2ATaskRecord, context: ServerCallContext): Promise<void> {
    const scope = scopeOf(context);
    // This request wrote it ended already: the first terminal write stands.
    if (scope.ended?.id === record.id) return;
    // A quiet task's first write is its only one: nobody could have written it before.
    const stored = scope.quiet ? undefined : await this.records.get(record.id);
    if (!stored) {
      const push = scope.push?.taskId === record.id ? scope.push.entries : [];
      try {
        if (record.terminal) {
          await this.created(record, push);
          scope.ended = record;
          return;
        }
        await this.records.create(record, push);
      } finally {
        scope.slot?.();
      }
      if (!isWaiting(record.state)) this.hold(record);
      return;
    }
    if (stored.owner !== record.owner) throw new Error('An A2A task never changes owner.');
    if (stored.terminal) return;
    const resumed = isWaiting(stored.state) && !isWaiting(record.state) && !record.terminal;
    // Only the replica running a task ends it (cancelElsewhere asks it to); a task that waited runs nowhere.
    if (record.terminal && this.options.relayCancel && !isWaiting(stored.state))
      throw notConfirmed(this.options.cancelWaitMs ?? 5000);
    if (record.terminal) return this.finish(record);
    if ((await this.records.update(record)) && resumed) this.hold(record);
  }

  /** A task this process runs from now on: its latest form is kept here (see the class comment). */
  private hold(record: A2ATaskRecord): void {
    this.live.set(record.id, { owner: record.owner, task: Task.fromJSON(record.doc), unwritten: false });
  }

  /** A task first written when it has ended (a quiet one: see RequestScope), in one write. */
  private async created(record: A2ATaskRecord, push: PushConfigEntry[]): Promise<void> {
    const { owesPush } = await this.records.create(record, push);
    if (owesPush) this.options.onOwed?.({ ...record, finalPush: { state: 'pending', attempts: 0 } });
  }

  private async finish(record: A2ATaskRecord): Promise<void> {
    const { owesPush } = await this.records.finish(record);
    if (owesPush) this.options.onOwed?.({ ...record, finalPush: { state: 'pending', attempts: 0 } });
  }

  // With replicas: what changed since the last write of each running task, once a second at most.
  private async flush(): Promise<void> {
    for (const [id, running] of this.live) {
      if (!running.unwritten) continue;
      running.unwritten = false;
      const written = await this.records.update(recordOf(running.owner, running.task)).catch(() => true); // Redis down: the next change, or the next flush, writes it.
      if (!written && this.live.get(id) === running) this.live.delete(id);
    }
  }
}

/** Whether an A2A state name (`TASK_STATE_AUTH_REQUIRED`) is one of WAITING_STATES. */
function isWaiting(state: string): boolean {
  return WAITING_NAMES.has(state);
}
const WAITING_NAMES = new Set([...WAITING_STATES].map((state) => taskStateToJSON(state)));

function notConfirmed(waitMs: number): ProtocolError {
  return new ProtocolError(
    'AGENT_UNAVAILABLE',
    503,
    `The replica running this task did not confirm the cancel within ${Math.round(waitMs / 1000)} s (it may have stopped: the task then ends failed shortly); get the task to see its state, or cancel again.`,
    { step: 'rate-limit', retryAfterSeconds: 5 },
  );
}

/** The task as A2A shows it: a task a restart or a stopped replica cut short reads `failed`, and why. */
export function taskOf(stored: A2ATaskRecord): Task {
  const task = Task.fromJSON(stored.doc);
  const state = task.status?.state;
  if (stored.failure !== undefined && (state === undefined || !TERMINAL_STATES.has(state))) {
    task.status = {
      state: TaskState.TASK_STATE_FAILED,
      message: agentMessage(task.id, task.contextId, stored.failure),
      timestamp: stored.updatedAt,
    };
  }
  return task;
}

function ownerOf(context: ServerCallContext): string {
  return callerOf(context).id;
}

function recordOf(owner: string, task: Task): A2ATaskRecord {
  const state = task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
  const record: A2ATaskRecord = {
    id: task.id,
    owner,
    contextId: task.contextId,
    state: taskStateToJSON(state),
    terminal: TERMINAL_STATES.has(state),
    updatedAt: task.status?.timestamp || new Date().toISOString(),
    doc: Task.toJSON(task),
  };
  // Every write carries the mark: the conversation stays bound while any of its tasks is kept.
  if (mintsContexts(owner)) record.mintedContext = true;
  return record;
}

/** An opaque page token: where the previous page ended. */
function encodeCursor(last: Pick<A2ATaskRecord, 'updatedAt' | 'id'>): string {
  return Buffer.from(JSON.stringify([last.updatedAt, last.id])).toString('base64url');
}

/** Where a page token says the previous page ended; InvalidParams naming `pageToken` if it says nothing. */
export function decodeCursor(token: string): { updatedAt: string; id: string } {
  try {
    const [updatedAt, id] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown[];
    if (typeof updatedAt === 'string' && typeof id === 'string') return { updatedAt, id };
  } catch {
    // answered below
  }
  throw new InvalidFieldError('pageToken', 'is not one this agent gave: pass nextPageToken as received.');
}
