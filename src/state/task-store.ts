import { randomUUID } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Envelope, TaskRecord, TaskStatus } from '../protocol/index.js';
import { ensureDir, readJsonFile, writeFileAtomic } from '../lib/atomic-file.js';
import { TaskJournal } from './task-journal.js';
import {
  A2A_WAITING_STATES,
  TASK_ID,
  applyOutcome,
  isFinished,
  NONE_UNWRITTEN,
  pageA2A,
  protocolOf,
  senderAtCap,
  storeFull,
  taskView,
  type A2AListQuery,
  type A2APart,
  type PushConfigEntry,
  type StoredTask,
  type TaskMeta,
  type TaskOutcome,
  type TaskProtocol,
  type TaskState,
  type Unwritten,
} from './tasks.js';

export interface TaskStoreOptions {
  now?: () => number;
  /** Tasks kept per sender (waiting, running and finished within the retention). */
  maxPerSender?: number;
  /** Tasks kept in all. */
  maxTotal?: number;
}

/**
 * Async tasks (SAMVAD's and A2A's), one file each in `<dataDir>/tasks`, written atomically at every change
 * of status, so a result survives a restart and a task cut short by one is reported `failed`, never lost.
 * Results and A2A documents live on disk only (read back when asked for), and the number of tasks kept is
 * capped per sender and in all, so a caller cannot grow memory or disk by submitting tasks (whatever the
 * gateway reports as usage).
 */
export class TaskStore implements TaskState {
  private readonly tasks = new Map<string, StoredTask>();
  private readonly perSender = new Map<string, number>();
  /** Each A2A owner's finished tasks, oldest first: the cap drops from the front without a scan. */
  private readonly finishedA2A = new Map<string, Set<string>>();
  private readonly dir: string;
  /** Tasks created ended whose callers already hold them: one line each instead of a file each. */
  private readonly journal: TaskJournal;
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
        if (task && TASK_ID.test(task.taskId)) this.remember(lean(task), false);
      } catch {
        // A torn file cannot be a task anyone was told about as done: skip it.
        continue;
      }
    }
    // A task's own file supersedes its journal line (it moves there when it changes again; a crash between
    // writing the file and dropping the line leaves both, and the line must not answer reads).
    const superseded: string[] = [];
    const journalPath = join(this.dir, 'answered.jsonl');
    this.journal = new TaskJournal(journalPath, (task) => {
      if (this.tasks.has(task.taskId)) superseded.push(task.taskId);
      else this.remember(lean(task), false);
    });
    this.journal.dropNow(superseded);
    reportDropped(journalPath, this.journal.dropped);
    // Read in no particular order: each owner's finished tasks are noted once, in the order they finished.
    const byFinish = [...this.tasks.values()].filter((task) => task.finishedAt !== undefined);
    byFinish.sort((a, b) => a.finishedAt! - b.finishedAt!);
    for (const task of byFinish) this.finished(task);
  }

  /**
   * Throws when `sender` may not submit another task now: 429 at its own cap (until its oldest results
   * expire), 503 at the store's.
   */
  admit(sender: string, retentionMs: number, unwritten: Unwritten = NONE_UNWRITTEN): void {
    if ((this.perSender.get(sender) ?? 0) + unwritten.mine >= this.maxPerSender) {
      throw senderAtCap(sender, this.maxPerSender, retentionMs, this.secondsUntilSlot(sender, retentionMs));
    }
    if (this.tasks.size + unwritten.all >= this.maxTotal) {
      throw storeFull();
    }
  }

  /** A UUIDv4 has 122 random bits: the id is the caller's only credential for polling. */
  create(meta: TaskMeta, taskId: string = randomUUID(), outcome?: TaskOutcome): StoredTask {
    if (!TASK_ID.test(taskId)) throw new Error('A task id must be a random UUIDv4.');
    const status = protocolOf(meta) === 'a2a' ? 'running' : 'pending';
    const task: StoredTask = { taskId, status, createdAt: this.now(), ...meta };
    // A copy of the part (lean() takes the document out of it); the document itself is never changed.
    if (meta.a2a) task.a2a = { ...meta.a2a };
    if (meta.callbackUrl) task.callback = { state: 'pending', attempts: 0 };
    if (outcome) applyOutcome(task, outcome, this.now(), (task.a2a?.push?.length ?? 0) > 0);
    // Created ended: its caller was sent the task with the reply, so a line in the journal (not fsynced:
    // a machine crash, not a process crash, may lose it) loses nothing the caller does not hold. One that
    // owes a push notification gets a file of its own, durably: the notification must survive.
    if (outcome && task.callback === undefined) {
      this.journal.append(task);
      lean(task);
    } else this.save(task);
    this.remember(task);
    return task;
  }

  get(taskId: string): StoredTask | undefined {
    return this.known(taskId, 'samvad');
  }

  /** A copy, with its document read from the file. */
  getA2A(taskId: string): StoredTask | undefined {
    const task = this.known(taskId, 'a2a');
    return task && this.withDocument(task);
  }

  saveA2A(task: StoredTask, part: A2APart): boolean {
    const own = this.own(task);
    if (isFinished(own)) return false;
    own.a2a = { ...part, push: own.a2a?.push };
    this.save(own);
    return true;
  }

  listA2A(owner: string, query: A2AListQuery): { tasks: StoredTask[]; total: number } {
    const mine = [...this.tasks.values()].filter((task) => task.sender === owner && task.a2a);
    const { page, total } = pageA2A(
      mine.map((task) => ({ id: task.taskId, ...task.a2a! })),
      query,
    );
    return { tasks: page.map((entry) => this.withDocument(this.tasks.get(entry.id)!)), total };
  }

  hasMintedContext(owner: string, contextId: string): boolean {
    for (const task of this.tasks.values()) {
      const a2a = task.a2a;
      if (a2a?.mintedContext && a2a.contextId === contextId && task.sender === owner) return true;
    }
    return false;
  }

  pushConfigs(taskId: string): PushConfigEntry[] {
    return structuredClone(this.known(taskId, 'a2a')?.a2a?.push ?? []);
  }

  savePushConfig(taskId: string, entry: PushConfigEntry, max: number): 'saved' | 'full' | 'missing' {
    const task = this.known(taskId, 'a2a');
    if (!task?.a2a) return 'missing';
    const others = (task.a2a.push ?? []).filter((kept) => kept.id !== entry.id);
    if (others.length >= max) return 'full';
    task.a2a.push = [...others, structuredClone(entry)];
    this.save(task);
    return 'saved';
  }

  deletePushConfig(taskId: string, configId: string): void {
    const task = this.known(taskId, 'a2a');
    if (!task?.a2a?.push?.some((kept) => kept.id === configId)) return;
    task.a2a.push = task.a2a.push.filter((kept) => kept.id !== configId);
    this.save(task);
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
    return task.held ? this.read(task.taskId)?.held?.envelope : undefined;
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
    // The first outcome stands (the contract Redis keeps across replicas), whichever copy is finished.
    const own = this.own(task);
    if (isFinished(own)) return false;
    applyOutcome(own, outcome, this.now(), (own.a2a?.push?.length ?? 0) > 0);
    this.save(own);
    this.finished(own);
    if (own !== task) Object.assign(task, own);
    return true;
  }

  /** A finished task's result, from its file. */
  result(task: StoredTask): unknown {
    return task.status === 'done' ? this.read(task.taskId)?.result : undefined;
  }

  /**
   * `protocol`'s tasks that were pending or running when the agent stopped become `failed` (PROTOCOL.md
   * §6); tasks held for the operator's approval keep waiting, as do A2A tasks waiting for someone
   * (A2A_WAITING_STATES: a knock waiting for the operator, a task waiting for its caller's input).
   */
  failInterrupted(protocol: TaskProtocol = 'samvad'): StoredTask[] {
    const interrupted: StoredTask[] = [];
    for (const task of this.tasks.values()) {
      if (protocolOf(task) !== protocol) continue;
      if (task.status !== 'pending' && task.status !== 'running') continue;
      if (task.status === 'pending' && task.held) continue;
      if (task.a2a && A2A_WAITING_STATES.has(task.a2a.state)) continue;
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

  /** `protocol`'s finished tasks whose callback still has to be delivered (e.g. after a restart). */
  undeliveredCallbacks(protocol: TaskProtocol = 'samvad'): StoredTask[] {
    return [...this.tasks.values()].filter(
      (t) => protocolOf(t) === protocol && t.finishedAt !== undefined && t.callback?.state === 'pending',
    );
  }

  /** At start: interrupted tasks fail, and the callbacks still owed are handed back to be delivered. */
  recover(protocol: TaskProtocol = 'samvad'): StoredTask[] {
    this.failInterrupted(protocol);
    return this.undeliveredCallbacks(protocol);
  }

  close(): void {
    this.journal.close();
  }

  get activeCount(): number {
    let count = 0;
    for (const task of this.tasks.values())
      if (task.status === 'pending' || task.status === 'running') count++;
    return count;
  }

  admitA2A(owner: string, retentionMs: number, unwritten: Unwritten = NONE_UNWRITTEN): void {
    const need = (this.perSender.get(owner) ?? 0) + unwritten.mine + 1 - this.maxPerSender;
    // Room is made only when it can be: a refusal never costs the caller its results.
    const victims = need > 0 ? this.oldestDroppable(owner, need) : [];
    const storeRoom = this.tasks.size - victims.length + unwritten.all < this.maxTotal;
    if (victims.length === need && storeRoom) for (const task of victims) this.drop(task);
    this.admit(owner, retentionMs, unwritten);
  }

  setCallback(task: StoredTask, state: 'pending' | 'delivered' | 'failed', attempts: number): void {
    task.callback = { state, attempts };
    const own = this.tasks.get(task.taskId);
    // Gone (its retention ran out): writing it would bring it back.
    if (!own) return;
    own.callback = { state, attempts };
    this.save(own);
  }

  /** Forgets tasks finished longer than `retentionMs` ago. */
  sweep(retentionMs: number): void {
    const cutoff = this.now() - retentionMs;
    const lines: string[] = [];
    for (const task of this.tasks.values()) {
      if (task.finishedAt === undefined || task.finishedAt >= cutoff) continue;
      this.forget(task);
      if (this.journal.has(task.taskId)) lines.push(task.taskId);
      else rmSync(this.file(task.taskId), { force: true });
    }
    // All the sweep's drop lines in one write, now: a crash after it cannot bring swept tasks back.
    this.journal.dropNow(lines);
  }

  /**
   * Up to `count` of the owner's finished A2A tasks, oldest first, that may be dropped for room: not one
   * still owing its final push notification (its delivery would write it back).
   */
  private oldestDroppable(owner: string, count: number): StoredTask[] {
    const finished = this.finishedA2A.get(owner);
    const found: StoredTask[] = [];
    for (const taskId of finished ?? []) {
      const task = this.tasks.get(taskId);
      // An id no longer held must not stand in front of the live ones and hold the cap shut.
      if (!task) finished!.delete(taskId);
      else if (task.callback?.state !== 'pending' && found.push(task) === count) break;
    }
    if (finished?.size === 0) this.finishedA2A.delete(owner);
    return found;
  }

  private drop(task: StoredTask): void {
    this.forget(task);
    this.remove(task.taskId);
  }

  /** `noteFinished` false while loading: the finish order is built once, after every task is read. */
  private remember(task: StoredTask, noteFinished = true): void {
    if (this.tasks.has(task.taskId)) return;
    this.tasks.set(task.taskId, task);
    this.perSender.set(task.sender, (this.perSender.get(task.sender) ?? 0) + 1);
    if (noteFinished) this.finished(task);
  }

  private forget(task: StoredTask): void {
    if (!this.tasks.delete(task.taskId)) return;
    const left = (this.perSender.get(task.sender) ?? 1) - 1;
    if (left > 0) this.perSender.set(task.sender, left);
    else this.perSender.delete(task.sender);
    const finished = this.finishedA2A.get(task.sender);
    if (finished?.delete(task.taskId) && finished.size === 0) this.finishedA2A.delete(task.sender);
  }

  /** Notes a finished A2A task, in the order tasks finish (the oldest is dropped first at the cap). */
  private finished(task: StoredTask): void {
    if (protocolOf(task) !== 'a2a' || task.finishedAt === undefined || !this.tasks.has(task.taskId)) return;
    const owner = this.finishedA2A.get(task.sender) ?? new Set<string>();
    this.finishedA2A.set(task.sender, owner.add(task.taskId));
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

  /**
   * Writes the task's file; what memory does not keep (a result, an A2A document) is kept from the file
   * unless given, and leaves memory once written (a result may be megabytes, and thousands are kept).
   */
  private save(task: StoredTask): void {
    const keepResult = task.status === 'done' && protocolOf(task) === 'samvad' && !('result' in task);
    const keepDocument = task.a2a !== undefined && task.a2a.doc === undefined;
    const onDisk = keepResult || keepDocument ? this.read(task.taskId) : undefined;
    const written: StoredTask = { ...task };
    if (keepResult) written.result = onDisk?.result;
    if (keepDocument) written.a2a = { ...task.a2a!, doc: onDisk?.a2a?.doc };
    writeFileAtomic(this.file(task.taskId), JSON.stringify(written));
    // From now on its file holds it (a push config added to an answered task, say).
    this.journal.dropNow([task.taskId]);
    lean(task);
  }

  private read(taskId: string): StoredTask | undefined {
    if (this.journal.has(taskId)) return this.journal.read(taskId);
    try {
      return readJsonFile<StoredTask>(this.file(taskId));
    } catch {
      return undefined;
    }
  }

  /** The task as memory holds it (a caller may hold a copy, as getA2A hands out). */
  private own(task: StoredTask): StoredTask {
    return this.tasks.get(task.taskId) ?? task;
  }

  private known(taskId: string, protocol: TaskProtocol): StoredTask | undefined {
    const task = TASK_ID.test(taskId) ? this.tasks.get(taskId) : undefined;
    return task && protocolOf(task) === protocol ? task : undefined;
  }

  private withDocument(task: StoredTask): StoredTask {
    const copy = structuredClone(task);
    copy.a2a = { ...copy.a2a!, doc: this.read(task.taskId)?.a2a?.doc };
    return copy;
  }

  private remove(taskId: string): void {
    if (this.journal.has(taskId)) this.journal.drop(taskId);
    else rmSync(this.file(taskId), { force: true });
  }

  private file(taskId: string): string {
    return join(this.dir, `${taskId}.json`);
  }
}

// The operator learns what a start left out of the journal (a crash, a disk fault, a hand edit).
function reportDropped(path: string, { tornBytes, unreadableLines }: TaskJournal['dropped']): void {
  const parts = [];
  if (tornBytes > 0) parts.push(`a last line cut short (${tornBytes} bytes)`);
  if (unreadableLines > 0)
    parts.push(`${unreadableLines} unreadable line${unreadableLines === 1 ? '' : 's'}`);
  if (parts.length === 0) return;
  console.error(`Agent: ${path}: dropped ${parts.join(' and ')} at start; the tasks on them are forgotten.`);
}

// What memory keeps of a task: no result, no held envelope and no A2A document (all on disk), so
// thousands stay small.
function lean(task: StoredTask): StoredTask {
  delete task.result;
  if (task.held) {
    const { envelope: _onDisk, ...facts } = task.held;
    task.held = facts;
  }
  if (task.a2a) delete task.a2a.doc;
  return task;
}
