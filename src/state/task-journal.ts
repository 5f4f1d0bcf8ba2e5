import { closeSync, fstatSync, ftruncateSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { errorCode, writeFileAtomicAndOpen } from '../lib/atomic-file.js';
import { TASK_ID, type StoredTask } from './tasks.js';

/** Where one task's line is in the journal (bytes). */
interface Spot {
  offset: number;
  length: number;
}

/**
 * Rewritten without its dead lines once it holds at least this many, and more dead lines than live ones:
 * a busy caller at its cap adds a dead line a call, so a rewrite (a few MB at most: live tasks are capped)
 * comes every few thousand calls.
 */
const COMPACT_AT = 8192;
/** The rewrite writes the live lines in pieces of this size, not as one copy of the whole file. */
const CHUNK = 64 * 1024;

/**
 * Ended tasks whose callers already hold them (an A2A blocking send's task, sent with the reply), one JSON
 * line each in one file, instead of a file each: a task then costs one write to an open file, where a file
 * of its own costs creating, renaming and later deleting one (most of an A2A call's CPU). A task dropped or
 * swept is a `{"drop": id}` line; the file is rewritten without the dead lines once they outnumber the live
 * ones. Lines are not fsynced (their callers hold the tasks): they survive the process crashing, not the
 * machine. A line cut short by a crash is dropped when the file is next opened.
 */
export class TaskJournal {
  private fd: number;
  private size = 0;
  private dead = 0;
  private readonly spots = new Map<string, Spot>();
  private unwrittenDrops = '';
  private closed = false;
  /** Dead lines at which a rewrite is due (pushed further after one fails). */
  private compactAt = COMPACT_AT;
  private compaction: NodeJS.Immediate | undefined;

  /** What the open left out: a last line cut short by a crash (bytes), and lines it could not read. */
  readonly dropped = { tornBytes: 0, unreadableLines: 0 };

  /** Opens (or creates, 0600) the journal and reads it: `found` gets each task it holds, once. */
  constructor(
    private readonly path: string,
    found: (task: StoredTask) => void,
  ) {
    const { fd, text } = openJournal(path);
    this.fd = fd;
    const tasks = new Map<string, StoredTask>();
    let offset = 0;
    for (;;) {
      const end = text.indexOf(0x0a, offset);
      if (end < 0) break;
      const line = parseLine(text.subarray(offset, end));
      if (line?.drop !== undefined) {
        if (tasks.delete(line.drop)) this.spots.delete(line.drop);
        this.dead += 2;
      } else if (line?.task) {
        if (tasks.has(line.task.taskId)) this.dead++;
        tasks.set(line.task.taskId, line.task);
        this.spots.set(line.task.taskId, { offset, length: end - offset });
      } else {
        this.dead++;
        if (end > offset) this.dropped.unreadableLines++;
      }
      offset = end + 1;
    }
    // A line cut short by a crash: its task never reached its caller (the reply follows the write).
    if (offset < text.length) ftruncateSync(this.fd, offset);
    this.dropped.tornBytes = text.length - offset;
    this.size = offset;
    // Rewritten without them, so they are reported once, not at every start.
    if (this.dropped.unreadableLines > 0) this.tryCompact();
    for (const task of tasks.values()) found(task);
  }

  has(taskId: string): boolean {
    return this.spots.has(taskId);
  }

  /**
   * Appends a task (with its document and result: everything a reader may ask for later), after the drops
   * not written yet, in one write.
   */
  append(task: StoredTask): void {
    if (this.spots.has(task.taskId)) this.drop(task.taskId);
    const drops = this.unwrittenDrops;
    const written = this.write(`${drops}${JSON.stringify({ task })}\n`);
    this.unwrittenDrops = '';
    // Drop lines are ASCII (a JSON task id): their bytes are their characters.
    const length = written - drops.length - 1;
    this.spots.set(task.taskId, { offset: this.size - length - 1, length });
  }

  read(taskId: string): StoredTask | undefined {
    const spot = this.spots.get(taskId);
    if (!spot) return undefined;
    const bytes = Buffer.alloc(spot.length);
    readSync(this.fd, bytes, 0, spot.length, spot.offset);
    return parseLine(bytes)?.task;
  }

  /**
   * Forgets a task (dropped at its caller's cap). Its drop line goes out with the next append, or at close:
   * a crash before brings the task back (its caller's cap or the sweep drops it again).
   */
  drop(taskId: string): void {
    if (this.forget(taskId)) this.compactWhenDue();
  }

  /**
   * Forgets tasks with their drop lines written at once, in one write: a task moving to a file of its own
   * (its file may be deleted before a restart), or the sweep's (a crash must not bring them back).
   */
  dropNow(taskIds: Iterable<string>): void {
    let dropped = false;
    for (const taskId of taskIds) dropped = this.forget(taskId) || dropped;
    // Nothing of its own to write (a file task saved): the cap's drops keep waiting for the next append.
    if (!dropped) return;
    this.writeDrops();
    this.compactWhenDue();
  }

  /** A second call does nothing (a store may be closed by its owner and again at shutdown). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearImmediate(this.compaction);
    try {
      this.writeDrops();
    } finally {
      closeSync(this.fd);
    }
  }

  private forget(taskId: string): boolean {
    if (!this.spots.delete(taskId)) return false;
    this.unwrittenDrops += `${JSON.stringify({ drop: taskId })}\n`;
    this.dead += 2;
    return true;
  }

  private writeDrops(): void {
    if (!this.unwrittenDrops) return;
    this.write(this.unwrittenDrops);
    this.unwrittenDrops = '';
  }

  /**
   * Appends `text` in one write. A short one (a full disk, a file size limit) is cut back off and thrown:
   * a partial line would glue itself to the next one, and the caller must not be told it was written.
   */
  private write(text: string): number {
    const bytes = Buffer.byteLength(text);
    const written = writeSync(this.fd, text);
    if (written !== bytes) {
      ftruncateSync(this.fd, this.size);
      throw new Error(
        `${this.path}: only ${written} of ${bytes} bytes could be written (the disk is full, or a file size limit was reached); free some space: nothing was kept of this write.`,
      );
    }
    this.size += bytes;
    return bytes;
  }

  /**
   * Rewrites the file with the live lines only (atomically, and fsynced: it replaces lines it holds). Run
   * at open or after the request that dropped a line, in one go: nothing is appended while it runs.
   */
  private compact(): void {
    const spots = new Map<string, Spot>();
    let offset = 0;
    for (const [taskId, spot] of this.spots) {
      spots.set(taskId, { offset, length: spot.length });
      offset += spot.length + 1;
    }
    // Opened before it replaces the old file: if the open fails, nothing changed, and the old file (its
    // descriptor and offsets) still serves reads and appends.
    const fd = writeFileAtomicAndOpen(this.path, this.liveLines(), 'a+');
    // The rewrite holds no dropped line: the drops not written yet are written by leaving them out.
    this.unwrittenDrops = '';
    closeSync(this.fd);
    this.fd = fd;
    this.size = fstatSync(this.fd).size;
    this.dead = 0;
    this.compactAt = COMPACT_AT;
    this.spots.clear();
    for (const [taskId, spot] of spots) this.spots.set(taskId, spot);
  }

  /** The live lines in chunks of at most CHUNK bytes (or one longer line): no copy of the whole file. */
  private *liveLines(): Generator<Uint8Array> {
    const chunk = Buffer.allocUnsafe(CHUNK);
    let used = 0;
    for (const { offset, length } of this.spots.values()) {
      if (used > 0 && used + length + 1 > CHUNK) {
        yield chunk.subarray(0, used);
        used = 0;
      }
      const into = length + 1 > CHUNK ? Buffer.allocUnsafe(length + 1) : chunk;
      const at = into === chunk ? used : 0;
      readSync(this.fd, into, at, length, offset);
      into[at + length] = 0x0a;
      if (into === chunk) used += length + 1;
      else yield into;
    }
    if (used > 0) yield chunk.subarray(0, used);
  }

  private compactWhenDue(): void {
    if (this.compaction || this.dead < this.compactAt || this.dead <= this.spots.size) return;
    // Off the request that dropped the line: the rewrite reads and writes every live line (megabytes).
    this.compaction = setImmediate(() => {
      this.compaction = undefined;
      if (!this.closed) this.tryCompact();
    });
  }

  /** A failed rewrite leaves the journal as it was: it is reported, not thrown at whoever dropped a line. */
  private tryCompact(): void {
    try {
      this.compact();
    } catch (error) {
      // Tried again after as many more dead lines, not at every drop.
      this.compactAt = this.dead + COMPACT_AT;
      console.error(
        `Agent: ${this.path} could not be rewritten without its dropped lines (${(error as Error).message}); tried again later.`,
      );
    }
  }
}

function parseLine(bytes: Buffer): { task?: StoredTask; drop?: string } | undefined {
  try {
    const line = JSON.parse(bytes.toString('utf8')) as { task?: StoredTask; drop?: unknown };
    if (typeof line.drop === 'string') return { drop: line.drop };
    // An id that is no task's (a hand-edited line) is dropped with the line: nothing may look it up.
    if (line.task && typeof line.task.taskId === 'string' && TASK_ID.test(line.task.taskId)) {
      return { task: line.task };
    }
  } catch {
    // A torn or foreign line: skipped (a task is only ever reported once its line is whole).
  }
  return undefined;
}

function openJournal(path: string): { fd: number; text: Buffer } {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'a+', 0o600);
    return { fd, text: readFileSync(fd) };
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    // The agent must not start forgetting (or re-answering) tasks it cannot read: say what to do.
    throw new Error(
      `${path} could not be read (${errorCode(error) ?? (error as Error).message}): it holds the A2A tasks already answered. Fix it (its permissions, or what is at that path), or delete it: those tasks are then forgotten (their callers already hold them).`,
      { cause: error },
    );
  }
}
