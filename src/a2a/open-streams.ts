import { ProtocolError } from '../protocol/index.js';

export interface OpenStreamsOptions {
  /** Streams one caller may hold on one task: its streaming send and a resubscription, say (default 2). */
  perTask?: number;
  /** Streams one caller may hold in all, SendStreamingMessage and SubscribeToTask together (default 4). */
  perCaller?: number;
}

/** One stream's place in the counts. */
export interface StreamPlace {
  /** The task a streaming send created, once its first event names it: counted on that task from now. */
  onTask(taskId: string): void;
  /** Gives the place back (the stream ended, or its caller left); only the first call counts. */
  release(): void;
}

/** When a caller refused for holding too many streams may try again: streams end with their tasks. */
const RETRY_AFTER_S = 10;

/**
 * The event streams each caller holds open, per task and in all: a stream holds a socket, the SDK's
 * listener on its task's events, and for a task running at another replica a read of its record every
 * 300 ms, for as long as the task runs. Without a cap, one key held every stream of the port on one slow
 * task (security review, finding 5). Past a cap the stream is refused with 429 RATE_LIMITED before it
 * counts against the request limits: the A2A spec asks agents to rate-limit every operation and to answer
 * with an error when a limit is met; UnsupportedOperation would say the operation is never served here.
 *
 * A caller that leaves gives its place back at once (RequestScope.leave), though the SDK lets go of its
 * listener only at the task's next event: the request limits bound how many a caller can leave behind.
 *
 * Counted per replica, on purpose: what a stream holds is its replica's, so each replica caps what it
 * gives. With N replicas a caller may hold N times the cap in all; the request limits, shared in Redis,
 * bound how fast it opens them. A shared count would need a lease per stream, renewed while it stays open
 * (a replica that dies cannot give its places back): Redis writes for every stream opened, kept and
 * closed, to guard what is each replica's own anyway.
 *
 * A task's count is keyed on its caller too: another caller's attempt on a task never reads, nor takes
 * from, the owner's count (it is refused as "not found" as always).
 */
export class OpenStreams {
  private readonly perTask: number;
  private readonly perCaller: number;
  private readonly byCaller = new Map<string, number>();
  private readonly byTask = new Map<string, number>();

  constructor(options: OpenStreamsOptions = {}) {
    this.perTask = options.perTask ?? 2;
    this.perCaller = options.perCaller ?? 4;
  }

  /**
   * Takes a place for a stream of `caller` (on `taskId`, when it subscribes to one), or throws the
   * refusal that says which cap it met and what to do.
   */
  take(caller: string, taskId?: string): StreamPlace {
    const mine = this.byCaller.get(caller) ?? 0;
    if (mine >= this.perCaller) throw this.callerFull(caller, mine);
    const onTask = taskId === undefined ? 0 : (this.byTask.get(taskKey(caller, taskId)) ?? 0);
    if (taskId !== undefined && onTask >= this.perTask) throw this.taskFull(caller, taskId, onTask);
    this.byCaller.set(caller, mine + 1);
    let task = taskId === undefined ? undefined : count(this.byTask, taskKey(caller, taskId), 1);
    let held = true;
    return {
      onTask: (id) => {
        if (!held || task !== undefined) return;
        task = count(this.byTask, taskKey(caller, id), 1);
      },
      release: () => {
        if (!held) return;
        held = false;
        count(this.byCaller, caller, -1);
        if (task !== undefined) count(this.byTask, task, -1);
      },
    };
  }

  /** Streams held now, all callers together. */
  get size(): number {
    let all = 0;
    for (const held of this.byCaller.values()) all += held;
    return all;
  }

  private callerFull(caller: string, held: number): ProtocolError {
    return new ProtocolError(
      'RATE_LIMITED',
      429,
      `${caller} holds ${held} open streams here (SendStreamingMessage and SubscribeToTask together), the most one caller may hold. Close one, or read your tasks with GetTask, then retry.`,
      { step: 'rate-limit', retryAfterSeconds: RETRY_AFTER_S },
    );
  }

  private taskFull(caller: string, taskId: string, held: number): ProtocolError {
    return new ProtocolError(
      'RATE_LIMITED',
      429,
      `${caller} holds ${held} open streams on task ${taskId.slice(0, 80)}, the most one caller may hold on a task. Read it on a stream you hold, or with GetTask; or close one of them, then retry.`,
      { step: 'rate-limit', retryAfterSeconds: RETRY_AFTER_S },
    );
  }
}

function taskKey(caller: string, taskId: string): string {
  return `${caller}\n${taskId}`;
}

/** Adds `by` to a count, forgetting it at zero (the maps hold only streams open now); returns the key. */
function count(counts: Map<string, number>, key: string, by: number): string {
  const next = (counts.get(key) ?? 0) + by;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
  return key;
}
