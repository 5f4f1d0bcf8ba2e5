import { randomUUID } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Envelope, TaskRecord, TaskStatus } from '../protocol/index.js';
import { ensureDir, readJsonFile, writeFileAtomic } from '../lib/atomic-file.js';
import { TASK_ID, senderAtCap, storeFull, taskView, type TaskOutcome, type TaskState } from './tasks.js';

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
    /**
     * The raw public keys that signed it, and whether the operator pinned the sender's key: approval runs it
     * only if it covers them (the id may have changed hands while it waited). Absent in tasks held by
     * earlier releases: then only an approval bound to no key yet covers it.
     */
    keys?: string[];
    pinned?: true;
  };
}

export interface TaskStoreOptions {
  now?: () => number;
  /** Tasks kept per sender (waiting, running and finished within the retention). */
  maxPerSender?: number;
  /** Tasks kept in all. */
  maxTotal?: number;
}

/**
 * Async tasks, one file each in `<dataDir>/tasks`, written atomically at every change of status, so a
 * result survives a restart and a task cut short by one is reported `failed`, never lost. Results live on
 * disk only (read back when polled), and the number of tasks kept is capped per sender and in all, so a
 * caller cannot grow memory or disk by submitting tasks (whatever the gateway reports as usage).
 */
export class TaskStore implements TaskState {
  private readonly tasks = new Map<string, StoredTask>();
  private readonly perSender = new Map<string, number>();
  private readonly dir: string;
  private readonly now: () => number;
  readonly maxPerSender: number;
  readonly maxTotal: number;

  constructor(dataDir: string, options: TaskStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.maxPerSender = options.maxPerSender ?? 200;
    this.maxTotal = options.maxTotal ?? 5000;
    this.dir = join(dataDir, 'tasks');
    ensureDir(this.dir);
    for (const name of readdirSync(this.dir)) {
      if (!name.endsWith('.json')) continue;
      try {
        const task = readJsonFile<StoredTask>(join(this.dir, name));
        if (task && TASK_ID.test(task.taskId)) this.remember(lean(task));
      } catch {
        // A torn file cannot be a task anyone was told about as done: skip it.
        continue;
      }
    }
  }

  /**
   * Throws when `sender` may not submit another task now: 429 at its own cap (until its oldest results
   * expire), 503 at the store's.
   */
  admit(sender: string, retentionMs: number): void {
    if ((this.perSender.get(sender) ?? 0) >= this.maxPerSender) {
      throw senderAtCap(sender, this.maxPerSender, retentionMs, this.secondsUntilSlot(sender, retentionMs));
    }
    if (this.tasks.size >= this.maxTotal) {
      throw storeFull();
    }
  }

  /** A UUIDv4 has 122 random bits: the id is the caller's only credential for polling. */
  create(
    meta: Pick<StoredTask, 'sender' | 'skill' | 'traceId' | 'spanId' | 'callbackUrl' | 'held'>,
    taskId: string = randomUUID(),
  ): StoredTask {
    if (!TASK_ID.test(taskId)) throw new Error('A task id must be a random UUIDv4.');
    const task: StoredTask = { taskId, status: 'pending', createdAt: this.now(), ...meta };
    if (meta.callbackUrl) task.callback = { state: 'pending', attempts: 0 };
    this.save(task);
    this.remember(lean(task));
    return task;
  }

  get(taskId: string): StoredTask | undefined {
    return TASK_ID.test(taskId) ? this.tasks.get(taskId) : undefined;
  }

  /** The exact public shape of PROTOCOL.md §6: no other fields. A result is read back from its file. */
  view(task: StoredTask): TaskRecord {
    return taskView(task, () => this.result(task));
  }

  setStatus(task: StoredTask, status: TaskStatus): void {
    task.status = status;
    if (status !== 'pending') delete task.held;
    this.save(task);
  }

  start(task: StoredTask): boolean {
    if (task.status !== 'pending') return false;
    this.setStatus(task, 'running');
    return true;
  }

  /** A held task's verified envelope, from its file (memory keeps none: see `held`). */
  heldEnvelope(task: StoredTask): Envelope | undefined {
    if (!task.held) return undefined;
    try {
      return readJsonFile<StoredTask>(this.file(task.taskId))?.held?.envelope;
    } catch {
      return undefined;
    }
  }

  /** Tasks waiting for the operator's approval of their sender. */
  heldTasks(): StoredTask[] {
    return [...this.tasks.values()].filter((task) => task.status === 'pending' && task.held);
  }

  /** Kept in memory only: progress changes often and a restart turns the task into `failed` anyway. */
  setProgress(task: StoredTask, fraction: number): void {
    task.progress = Math.min(1, Math.max(0, fraction));
  }

  finish(task: StoredTask, outcome: TaskOutcome): boolean {
    // The first outcome stands (the contract Redis keeps across replicas).
    if (task.status === 'done' || task.status === 'failed') return false;
    if ('result' in outcome) {
      task.status = 'done';
      task.result = outcome.result;
    } else {
      task.status = 'failed';
      task.error = outcome.error;
    }
    delete task.progress;
    delete task.held;
    task.finishedAt = this.now();
    this.save(task);
    // Written with the file; the copy in memory goes (a result may be megabytes, and thousands are kept).
    delete task.result;
    return true;
  }

  /** A finished task's result, from its file. */
  result(task: StoredTask): unknown {
    if (task.status !== 'done') return undefined;
    try {
      return readJsonFile<StoredTask>(this.file(task.taskId))?.result;
    } catch {
      return undefined;
    }
  }

  setCallback(task: StoredTask, state: 'pending' | 'delivered' | 'failed', attempts: number): void {
    task.callback = { state, attempts };
    this.save(task);
  }

  /**
   * Tasks that were pending or running when the agent stopped become `failed` (PROTOCOL.md §6); tasks held
   * for the operator's approval keep waiting.
   */
  failInterrupted(): StoredTask[] {
    const interrupted: StoredTask[] = [];
    for (const task of this.tasks.values()) {
      if (task.status !== 'pending' && task.status !== 'running') continue;
      if (task.status === 'pending' && task.held) continue;
      this.finish(task, {
        error: {
          code: 'AGENT_UNAVAILABLE',
          message: 'The agent restarted before this task finished; submit it again.',
        },
      });
      interrupted.push(task);
    }
    return interrupted;
  }

  /** Finished tasks whose callback still has to be delivered (e.g. after a restart). */
  undeliveredCallbacks(): StoredTask[] {
    return [...this.tasks.values()].filter(
      (t) => t.finishedAt !== undefined && t.callback?.state === 'pending',
    );
  }

  /** At start: interrupted tasks fail, and the callbacks still owed are handed back to be delivered. */
  recover(): StoredTask[] {
    this.failInterrupted();
    return this.undeliveredCallbacks();
  }

  close(): void {}

  get activeCount(): number {
    let count = 0;
    for (const task of this.tasks.values())
      if (task.status === 'pending' || task.status === 'running') count++;
    return count;
  }

  /** Forgets tasks finished longer than `retentionMs` ago. */
  sweep(retentionMs: number): void {
    const cutoff = this.now() - retentionMs;
    for (const task of this.tasks.values()) {
      if (task.finishedAt !== undefined && task.finishedAt < cutoff) {
        this.forget(task);
        rmSync(this.file(task.taskId), { force: true });
      }
    }
  }

  private remember(task: StoredTask): void {
    if (this.tasks.has(task.taskId)) return;
    this.tasks.set(task.taskId, task);
    this.perSender.set(task.sender, (this.perSender.get(task.sender) ?? 0) + 1);
  }

  private forget(task: StoredTask): void {
    if (!this.tasks.delete(task.taskId)) return;
    const left = (this.perSender.get(task.sender) ?? 1) - 1;
    if (left > 0) this.perSender.set(task.sender, left);
    else this.perSender.delete(task.sender);
  }

  // When the sender's oldest finished task leaves the store (or a minute, if none has finished yet).
  private secondsUntilSlot(sender: string, retentionMs: number): number {
    let oldest = Infinity;
    for (const task of this.tasks.values()) {
      if (task.sender === sender && task.finishedAt !== undefined) oldest = Math.min(oldest, task.finishedAt);
    }
    if (!Number.isFinite(oldest)) return 60;
    return Math.max(1, Math.ceil((oldest + retentionMs - this.now()) / 1000));
  }

  private save(task: StoredTask): void {
    writeFileAtomic(this.file(task.taskId), JSON.stringify(task));
  }

  private file(taskId: string): string {
    return join(this.dir, `${taskId}.json`);
  }
}

// What memory keeps of a task: no result and no held envelope (both on disk), so thousands stay small.
function lean(task: StoredTask): StoredTask {
  delete task.result;
  if (task.held) {
    const { envelope: _onDisk, ...facts } = task.held;
    task.held = facts;
  }
  return task;
}
