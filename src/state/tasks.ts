import { ProtocolError, type Envelope, type ErrorCode, type TaskRecord } from '../protocol/index.js';

export type Awaitable<T> = T | Promise<T>;

/**
 * How a task ends. SAMVAD: a result or an error. A2A: its final document (`completed`: it ended in A2A's
 * completed state, `done`; any other terminal state is `failed`). An error ends an A2A task too (cut short
 * by a restart or a stopped replica): its A2A state becomes A2A_INTERRUPTED_STATE.
 */
export type TaskOutcome =
  | { result: unknown }
  | { error: { code: ErrorCode; message: string } }
  | { a2a: A2APart; completed: boolean };

/** Which protocol a task was accepted through: each is served by its own door only. */
export type TaskProtocol = 'samvad' | 'a2a';

/** What an A2A task adds to the shared task: what its lists filter and sort by, and its document. */
export interface A2APart {
  contextId: string;
  /** A2A's state name (`TASK_STATE_WORKING`...). */
  state: string;
  /** Its status timestamp (ISO 8601, UTC): lists sort on it, newest first. */
  updatedAt: string;
  /**
   * A2A's Task in ProtoJSON (status, history, artifacts, metadata), read by src/a2a only. The data dir's
   * memory holds none (it is read from the file when asked for).
   */
  doc?: unknown;
  /** Push notification configs (the data dir keeps them here; Redis beside the task, see its store). */
  push?: PushConfigEntry[];
  /**
   * This agent minted `contextId` (a keyless caller's conversation, src/a2a/conversations.ts): the mark a
   * keyless caller's contextId must find before it continues a conversation. Absent on tasks written before.
   */
  mintedContext?: true;
}

/** The A2A state a task cut short ends in (the first terminal state stands, as for any other). */
export const A2A_INTERRUPTED_STATE = 'TASK_STATE_FAILED';

/**
 * A2A states in which a task waits for someone rather than runs: the operator's approval (a keyless caller's
 * knock, `TASK_STATE_AUTH_REQUIRED`) or its caller's input. A restart does not cut such a task short: nothing
 * of it was running, and it goes on when its answer comes.
 */
export const A2A_WAITING_STATES: ReadonlySet<string> = new Set([
  'TASK_STATE_AUTH_REQUIRED',
  'TASK_STATE_INPUT_REQUIRED',
]);

/** One push notification config of an A2A task, as registered (secrets included), with its wire version. */
export interface PushConfigEntry {
  id: string;
  /** A2A's TaskPushNotificationConfig in ProtoJSON. */
  config: unknown;
  /** The A2A version it was registered in ('1.0', '0.3'): notifications take that version's shapes. */
  wireVersion: string;
}

export interface A2AListQuery {
  contextId?: string;
  state?: string;
  /**
   * Only tasks whose status changed at or after this instant (ISO 8601): A2A's statusTimestampAfter, "greater
   * than or equal to this value" (a2a.proto).
   */
  updatedAfter?: string;
  /** Continue after this task (the last of the previous page). */
  after?: { updatedAt: string; id: string };
  limit: number;
}

/** What an A2A list is built from, per task (and whether its conversation was minted here). */
export type A2AIndexEntry = Pick<A2APart, 'contextId' | 'state' | 'updatedAt' | 'mintedContext'> & {
  id: string;
};

/** One async task as every task store keeps it (the data dir's task-store.ts, Redis's redis-task-store.ts). */
export interface StoredTask extends TaskRecord {
  /** Absent: SAMVAD (tasks written before A2A existed have no tag). */
  protocol?: TaskProtocol;
  /** A2A tasks only: their document and what they are listed by. */
  a2a?: A2APart;
  createdAt: number;
  finishedAt?: number;
  /** Who submitted it: a SAMVAD sender's id, or the A2A caller that owns it (`a2a-key:<id>`). */
  sender: string;
  skill: string;
  traceId: string;
  spanId: string;
  callbackUrl?: string;
  callback?: { state: 'pending' | 'delivered' | 'failed'; attempts: number };
  /**
   * A task waiting for the operator to approve its sender: the verified envelope it runs with (without
   * signature or credentials), kept across restarts until the operator decides or the request expires.
   */
  held?: {
    /** On disk only (read back when the task runs): held tasks come from senders nobody approved yet. */
    envelope?: Envelope;
    code: string;
    callerName?: string;
    /** A delegation token verified when the task arrived: the caller acts for this agent. */
    onBehalfOf?: string;
    delegationScope?: string[];
    /**
     * The raw public keys that signed it, and whether the operator pinned the sender's key: approval runs it
     * only if it covers them (the id may have changed hands while it waited). Absent in tasks held by
     * earlier releases: then only an approval bound to no key yet covers it.
     */
    keys?: string[];
    pinned?: true;
  };
}

/**
 * Tasks admitted by this process and not yet in the store: a blocking A2A send is written only when it
 * ends, yet holds its place under the caps while it runs. `mine`: the sender's; `all`: everyone's.
 */
export interface Unwritten {
  mine: number;
  all: number;
}

export const NONE_UNWRITTEN: Unwritten = { mine: 0, all: 0 };

/**
 * Where async tasks live: one file each in the data dir, or on Redis, where every replica can answer a poll
 * and a task whose replica stopped is failed by another once its lease runs out. The data-dir version
 * answers at once; callers await either.
 */
export interface TaskState {
  readonly maxPerSender: number;
  readonly maxTotal: number;
  /**
   * Throws when `sender` may not submit another task now (429 at its own cap, 503 at the store's).
   * `unwritten`: tasks admitted here and not yet written, which count against both caps.
   */
  admit(sender: string, retentionMs: number, unwritten?: Unwritten): Awaitable<void>;
  /**
   * `admit` for an A2A task: at the owner's cap, its oldest finished tasks make room first (an A2A caller
   * sends every message as a task: its newest results are kept rather than refusing it for a day), as many as
   * needed (a blocking send's task is written when it ends, so a caller's concurrent ones arrive together);
   * none is dropped when dropping all that may be would still not make room (a refusal costs nothing).
   * Never drops a SAMVAD task, an unfinished one, nor one still owing its final push notification.
   */
  admitA2A(owner: string, retentionMs: number, unwritten?: Unwritten): Awaitable<void>;
  /**
   * A SAMVAD task starts `pending` (`start` runs it). An A2A task (`protocol: 'a2a'`) comes with its part
   * (document, push configs), is never held and runs from the start; with `outcome` it is created finished,
   * in one write (a task nobody could read before it ended: a blocking send's).
   */
  create(meta: TaskMeta, taskId?: string, outcome?: TaskOutcome): Awaitable<StoredTask>;
  /** A SAMVAD task (never an A2A one: each protocol serves its own tasks only). */
  get(taskId: string): Awaitable<StoredTask | undefined>;
  /** An A2A task with its document (never a SAMVAD one). */
  getA2A(taskId: string): Awaitable<StoredTask | undefined>;
  /**
   * Writes a running A2A task's new part (its push configs stay as they are); false once it has finished
   * (a late write, or a replica that lost its lease, never overwrites the outcome).
   */
  saveA2A(task: StoredTask, part: A2APart): Awaitable<boolean>;
  /**
   * `owner`'s A2A tasks matching `query`, newest status first (the id breaks ties, descending), with their
   * documents, and how many match in all.
   */
  listA2A(owner: string, query: A2AListQuery): Awaitable<{ tasks: StoredTask[]; total: number }>;
  /**
   * Whether `owner` holds an A2A task (running or finished, until it is swept or dropped) in conversation
   * `contextId` marked as minted here (A2APart.mintedContext): the conversation's binding to its owner, read
   * from what lists are built from (memory, or the owner's index on Redis), never a task's document.
   */
  hasMintedContext(owner: string, contextId: string): Awaitable<boolean>;
  /** An A2A task's push notification configs. */
  pushConfigs(taskId: string): Awaitable<PushConfigEntry[]>;
  /**
   * Adds (or replaces, same id) a push config: `full` when the task holds `max` others, `missing` when
   * there is no such task. A finished task with push configs owes its final notification (`callback`).
   */
  savePushConfig(
    taskId: string,
    entry: PushConfigEntry,
    max: number,
  ): Awaitable<'saved' | 'full' | 'missing'>;
  deletePushConfig(taskId: string, configId: string): Awaitable<void>;
  /** The exact public shape of PROTOCOL.md §6. */
  view(task: StoredTask): Awaitable<TaskRecord>;
  /**
   * Marks a `pending` task `running` for this process; false when it is not pending any more (a held task
   * approved at two replicas at once starts at one of them).
   */
  start(task: StoredTask): Awaitable<boolean>;
  heldEnvelope(task: StoredTask): Awaitable<Envelope | undefined>;
  heldTasks(): Awaitable<StoredTask[]>;
  setProgress(task: StoredTask, fraction: number): void;
  /** True when this call finished the task; false when it had finished already (another replica did). */
  finish(task: StoredTask, outcome: TaskOutcome): Awaitable<boolean>;
  result(task: StoredTask): Awaitable<unknown>;
  setCallback(task: StoredTask, state: 'pending' | 'delivered' | 'failed', attempts: number): Awaitable<void>;
  /**
   * `protocol`'s tasks cut short (by this process's restart, or on Redis by a replica whose lease ran out)
   * become `failed`, once; returns its finished tasks whose callback (SAMVAD) or final push notification
   * (A2A) is owed and now this process's to deliver. Each protocol recovers its own: the delivery is its.
   */
  recover(protocol?: TaskProtocol): Awaitable<StoredTask[]>;
  /** Tasks waiting or running here. */
  readonly activeCount: number;
  sweep(retentionMs: number): Awaitable<void>;
  close(): Awaitable<void>;
}

/** What a task is created with. */
export type TaskMeta = Pick<
  StoredTask,
  'sender' | 'skill' | 'traceId' | 'spanId' | 'callbackUrl' | 'held' | 'protocol' | 'a2a'
>;

/** A task's protocol; a task written before A2A existed has no tag, and is SAMVAD's. */
export function protocolOf(task: Pick<StoredTask, 'protocol'>): TaskProtocol {
  return task.protocol ?? 'samvad';
}

/** Whether the task has its outcome (the first one stands). */
export function isFinished(task: Pick<StoredTask, 'status'>): boolean {
  return task.status === 'done' || task.status === 'failed';
}

/**
 * Records `outcome` on `task` (in memory; the store writes it). An A2A task with push configs owes its
 * final notification from now on, as a SAMVAD task with a callbackUrl owes its callback.
 */
export function applyOutcome(task: StoredTask, outcome: TaskOutcome, now: number, owesPush: boolean): void {
  if ('a2a' in outcome) {
    task.status = outcome.completed ? 'done' : 'failed';
    task.a2a = { ...outcome.a2a, push: task.a2a?.push };
  } else if ('result' in outcome) {
    task.status = 'done';
    task.result = outcome.result;
  } else {
    task.status = 'failed';
    task.error = outcome.error;
    if (task.a2a) task.a2a = { ...task.a2a, state: A2A_INTERRUPTED_STATE, updatedAt: iso(now) };
  }
  if (protocolOf(task) === 'a2a' && owesPush) task.callback = { state: 'pending', attempts: 0 };
  delete task.progress;
  delete task.held;
  task.finishedAt = now;
}

/**
 * One page of an owner's A2A tasks, the same in every store: filtered, newest status first (the id
 * breaks ties, so a page boundary is exact), after the cursor.
 */
export function pageA2A(
  entries: A2AIndexEntry[],
  query: A2AListQuery,
): { page: A2AIndexEntry[]; total: number } {
  const after = query.updatedAfter === undefined ? undefined : Date.parse(query.updatedAfter);
  const matching = entries
    .filter(
      (entry) =>
        (!query.contextId || entry.contextId === query.contextId) &&
        (!query.state || entry.state === query.state) &&
        (after === undefined || Date.parse(entry.updatedAt) >= after),
    )
    .sort(newestFirst);
  const cursor = query.after;
  const start = cursor ? matching.findIndex((entry) => newestFirst(entry, cursor) > 0) : 0;
  return { page: start < 0 ? [] : matching.slice(start, start + query.limit), total: matching.length };
}

function newestFirst(a: Pick<A2AIndexEntry, 'updatedAt' | 'id'>, b: Pick<A2AIndexEntry, 'updatedAt' | 'id'>) {
  const at = Date.parse(a.updatedAt) - Date.parse(b.updatedAt);
  if (at !== 0) return at < 0 ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** A UUIDv4 (122 random bits): the id is the caller's only credential for polling. */
export const TASK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The exact public shape of PROTOCOL.md §6, whichever store holds the task (and its result). */
export function taskView(task: StoredTask, result: () => unknown): TaskRecord {
  const record: TaskRecord = { taskId: task.taskId, status: task.status };
  if (task.status === 'running' && task.progress !== undefined) record.progress = task.progress;
  if (task.status === 'done') record.result = result();
  if (task.status === 'failed' && task.error) record.error = task.error;
  return record;
}

/** 429 at a sender's own cap; `retryAfterSeconds`: when its oldest result leaves the store. */
export function senderAtCap(sender: string, max: number, retentionMs: number, retryAfterSeconds: number) {
  return new ProtocolError(
    'RATE_LIMITED',
    429,
    `${sender} already has ${max} tasks held here (waiting, running or finished within ` +
      `${Math.round(retentionMs / 3600_000)} h); poll them, and submit more once older results expire.`,
    { step: 'rate-limit', retryAfterSeconds },
  );
}

/** 503 at the store's own cap. */
export function storeFull(): ProtocolError {
  return new ProtocolError(
    'AGENT_UNAVAILABLE',
    503,
    'This agent holds as many tasks as it can right now; retry later or call in sync mode.',
    { step: 'rate-limit', retryAfterSeconds: 300 },
  );
}
