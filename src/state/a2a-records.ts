import type { StoredTask } from './tasks.js';
import {
  A2A_INTERRUPTED_STATE,
  isFinished,
  type A2AListQuery,
  type A2APart,
  type PushConfigEntry,
  type TaskOutcome,
  type TaskState,
  type Unwritten,
} from './tasks.js';

/**
 * One A2A task as src/a2a sees it: the fields A2A lists by, and the task itself as an opaque document
 * (A2A's Task in ProtoJSON: status, history, artifacts) that only src/a2a reads.
 */
export interface A2ATaskRecord {
  id: string;
  /** The caller that created it (A2ACaller.id): nobody else reads, lists, cancels or continues it. */
  owner: string;
  contextId: string;
  /** This agent minted `contextId` (A2APart.mintedContext: a keyless caller's conversation). */
  mintedContext?: true;
  /** A2A's state name, e.g. `TASK_STATE_WORKING`. */
  state: string;
  /** Completed, failed, canceled or rejected: the first terminal write stands. */
  terminal: boolean;
  /** The status timestamp (ISO 8601, UTC): lists sort on it, newest first. */
  updatedAt: string;
  doc: unknown;
  /**
   * Why the agent ended it when its document cannot say: a restart or a stopped replica cut it short
   * (its document is still the running one).
   */
  failure?: string;
  /** Its final push notification, once it is owed: still to deliver (`pending`), or how it went. */
  finalPush?: { state: 'pending' | 'delivered' | 'failed'; attempts: number };
}

/** Where A2A tasks live: the project's task state (data dir, or Redis), in A2A's terms. */
export interface A2ATaskRecords {
  /**
   * Throws when `owner` may not start another task now: 429 at its own cap, 503 at the store's.
   * `unwritten`: tasks this process admitted and has not written yet (they count too).
   */
  admit(owner: string, unwritten?: Unwritten): Promise<void>;
  /**
   * A task starting here (this replica runs it), with the push configs it was sent with; or, when `record`
   * is terminal, a task that ended before it was first written (then `owesPush` as for `finish`).
   */
  create(record: A2ATaskRecord, push: PushConfigEntry[]): Promise<{ owesPush: boolean }>;
  /** A running task's new form; false once it has finished (a late write changes nothing). */
  update(record: A2ATaskRecord): Promise<boolean>;
  /**
   * Ends a task: `finished` when this write ended it (the first terminal write stands), `owesPush` when
   * its final push notification is now this replica's to deliver.
   */
  finish(record: A2ATaskRecord): Promise<{ finished: boolean; owesPush: boolean }>;
  get(id: string): Promise<A2ATaskRecord | undefined>;
  /** `owner`'s tasks matching `query`, newest first, and how many match in all. */
  list(owner: string, query: A2AListQuery): Promise<{ records: A2ATaskRecord[]; total: number }>;
  /** Whether `owner` holds a task in conversation `contextId` minted here (TaskState.hasMintedContext). */
  hasMintedContext(owner: string, contextId: string): Promise<boolean>;
  /**
   * Tasks cut short (a restart, or a stopped replica's lapsed lease) end failed, once; returns the finished
   * tasks whose final push notification is now this replica's to deliver.
   */
  recover(): Promise<A2ATaskRecord[]>;
  /** Records how the final push notification went (`pending`: interrupted, still owed). */
  delivered(id: string, state: 'pending' | 'delivered' | 'failed', attempts: number): Promise<void>;
  pushConfigs(id: string): Promise<PushConfigEntry[]>;
  savePushConfig(id: string, entry: PushConfigEntry, max: number): Promise<'saved' | 'full' | 'missing'>;
  deletePushConfig(id: string, configId: string): Promise<void>;
}

/**
 * A2A records over the task state both protocols share: caps, leases, recovery, retention and the
 * first-outcome-wins rule are the task state's, for A2A as for SAMVAD. Tasks running (or owing their final
 * notification) here are held as the task state handed them, so their writes keep the lease's bookkeeping.
 */
export class A2ARecords implements A2ATaskRecords {
  private readonly held = new Map<string, StoredTask>();

  constructor(
    private readonly tasks: TaskState,
    private readonly options: { retentionMs(): number },
  ) {}

  /**
   * At the owner's cap, its oldest finished tasks make room (every A2A message is a task: a cap counted
   * over a day's results would refuse a busy caller for the rest of the day); unfinished tasks still count.
   */
  async admit(owner: string, unwritten?: Unwritten): Promise<void> {
    await this.tasks.admitA2A(owner, this.options.retentionMs(), unwritten);
  }

  async create(record: A2ATaskRecord, push: PushConfigEntry[]): Promise<{ owesPush: boolean }> {
    const meta = {
      sender: record.owner,
      skill: 'chat',
      // A2A has no trace ids: the task id is what a caller quotes.
      traceId: '',
      spanId: '',
      protocol: 'a2a' as const,
      a2a: { ...part(record), push },
    };
    const outcome = record.terminal ? ended(record) : undefined;
    const task = await this.tasks.create(meta, record.id, outcome);
    const owesPush = task.callback?.state === 'pending';
    if (!outcome || owesPush) this.held.set(record.id, task);
    return { owesPush };
  }

  async update(record: A2ATaskRecord): Promise<boolean> {
    const task = await this.task(record);
    if (!task) return false;
    const written = await this.tasks.saveA2A(task, part(record));
    if (!written) this.held.delete(record.id);
    return written;
  }

  async finish(record: A2ATaskRecord): Promise<{ finished: boolean; owesPush: boolean }> {
    const task = await this.task(record);
    if (!task) return { finished: false, owesPush: false };
    const finished = await this.tasks.finish(task, ended(record));
    const owesPush = finished && task.callback?.state === 'pending';
    if (owesPush) this.held.set(record.id, task);
    else this.held.delete(record.id);
    return { finished, owesPush };
  }

  async get(id: string): Promise<A2ATaskRecord | undefined> {
    const task = await this.tasks.getA2A(id);
    return task && recordOf(task);
  }

  async list(owner: string, query: A2AListQuery): Promise<{ records: A2ATaskRecord[]; total: number }> {
    const { tasks, total } = await this.tasks.listA2A(owner, query);
    return { records: tasks.map(recordOf), total };
  }

  async hasMintedContext(owner: string, contextId: string): Promise<boolean> {
    return this.tasks.hasMintedContext(owner, contextId);
  }

  async recover(): Promise<A2ATaskRecord[]> {
    const owed = await this.tasks.recover('a2a');
    const records: A2ATaskRecord[] = [];
    for (const task of owed) {
      this.held.set(task.taskId, task);
      // The data dir's memory holds no document: the final notification is built from it.
      const full = task.a2a?.doc === undefined ? await this.tasks.getA2A(task.taskId) : task;
      if (full) records.push(recordOf(full));
    }
    return records;
  }

  async delivered(id: string, state: 'pending' | 'delivered' | 'failed', attempts: number): Promise<void> {
    const task = this.held.get(id);
    if (!task) return;
    await this.tasks.setCallback(task, state, attempts);
    if (state !== 'pending') this.held.delete(id);
  }

  async pushConfigs(id: string): Promise<PushConfigEntry[]> {
    return this.tasks.pushConfigs(id);
  }

  async savePushConfig(
    id: string,
    entry: PushConfigEntry,
    max: number,
  ): Promise<'saved' | 'full' | 'missing'> {
    return this.tasks.savePushConfig(id, entry, max);
  }

  async deletePushConfig(id: string, configId: string): Promise<void> {
    await this.tasks.deletePushConfig(id, configId);
  }

  /** The task as this replica holds it, or as stored (a write for a task another process started). */
  private async task(record: A2ATaskRecord): Promise<StoredTask | undefined> {
    const task = this.held.get(record.id) ?? (await this.tasks.getA2A(record.id));
    if (task && task.sender !== record.owner) throw new Error('An A2A task never changes owner.');
    return task;
  }
}

function ended(record: A2ATaskRecord): TaskOutcome {
  return { a2a: part(record), completed: record.state === 'TASK_STATE_COMPLETED' };
}

function part(record: A2ATaskRecord): A2APart {
  const part: A2APart = {
    contextId: record.contextId,
    state: record.state,
    updatedAt: record.updatedAt,
    doc: record.doc,
  };
  if (record.mintedContext) part.mintedContext = true;
  return part;
}

function recordOf(task: StoredTask): A2ATaskRecord {
  const a2a = task.a2a!;
  const record: A2ATaskRecord = {
    id: task.taskId,
    owner: task.sender,
    contextId: a2a.contextId,
    state: a2a.state,
    terminal: isFinished(task),
    updatedAt: a2a.updatedAt,
    doc: a2a.doc,
  };
  if (a2a.mintedContext) record.mintedContext = true;
  if (task.error && a2a.state === A2A_INTERRUPTED_STATE) record.failure = task.error.message;
  if (task.callback) record.finalPush = { ...task.callback };
  return record;
}
