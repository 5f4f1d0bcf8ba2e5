import { ProtocolError, type Envelope, type ErrorCode, type TaskRecord } from '../protocol/index.js';

export type Awaitable<T> = T | Promise<T>;

/** One async task as every task store keeps it (the data dir's task-store.ts, Redis's redis-task-store.ts). */
export interface StoredTask extends TaskRecord {
  createdAt: number;
  finishedAt?: number;
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
  };
}

export type TaskOutcome = { result: unknown } | { error: { code: ErrorCode; message: string } };

/**
 * Where async tasks live: one file each in the data dir, or on Redis, where every replica can answer a poll
 * and a task whose replica stopped is failed by another once its lease runs out. The data-dir version
 * answers at once; callers await either.
 */
export interface TaskState {
  readonly maxPerSender: number;
  readonly maxTotal: number;
  /** Throws when `sender` may not submit another task now (429 at its own cap, 503 at the store's). */
  admit(sender: string, retentionMs: number): Awaitable<void>;
  create(
    meta: Pick<StoredTask, 'sender' | 'skill' | 'traceId' | 'spanId' | 'callbackUrl' | 'held'>,
    taskId?: string,
  ): Awaitable<StoredTask>;
  get(taskId: string): Awaitable<StoredTask | undefined>;
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
   * Tasks cut short (by this process's restart, or on Redis by a replica whose lease ran out) become
   * `failed`; returns the finished tasks whose callback is owed and now this process's to deliver.
   */
  recover(): Awaitable<StoredTask[]>;
  /** Tasks waiting or running here. */
  readonly activeCount: number;
  sweep(retentionMs: number): Awaitable<void>;
  close(): Awaitable<void>;
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
