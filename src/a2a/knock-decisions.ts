import { TaskState, type Task } from '@a2a-js/sdk';
import { A2AError } from '@a2a-js/sdk/errors';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import type { EnvelopeEvent } from '../agent/events.js';
import type { A2AKeys } from '../access/a2a-keys.js';
import { KnockError, type KnockRecord, type Knocks } from '../access/knocks.js';
import { escapedLine, oneLine, printable } from '../lib/text.js';
import type { A2AKeyView, KnocksSummary, KnockView } from '../protocol/console-api.js';
import { DEFAULT_SKILL, ProtocolError } from '../protocol/index.js';
import { callContext } from './call-context.js';
import { passStep, trafficEvent, type A2ACallRecord } from './call-record.js';
import type { A2AGate, ChatCore } from './chat-core.js';
import { REPLY_ARTIFACT_ID, replyArtifact } from './chat-executor.js';
import type { A2AKeyCaller } from './key-gate.js';
import { parkedText } from './knock.js';
import { agentMessage } from './message-text.js';
import { TERMINAL_STATES } from './task-store.js';

/**
 * The operator's side of knock to pair (knock.ts is the caller's): approve, which issues an A2A key for the
 * caller and runs its parked message through the shared core as that key's holder (the key's skills and
 * limits, the budget, the injection screen, the skill's audience), or deny, which ends the task rejected
 * with the operator's reason; knocks nobody decided in time end rejected too. The key waits for its caller's
 * first read of the task (knock.ts `reveal`), never shown here.
 */

export interface KnockDecisionsOptions {
  knocks: Knocks;
  tasks: TaskStore;
  /** The shared caller core: the new key's holder authenticated, admitted and its turn run as any other. */
  calls: Pick<A2AGate<A2AKeyCaller>, 'authenticate' | 'admit'> & ChatCore<A2AKeyCaller>;
  keys: Pick<A2AKeys, 'issue' | 'revoke'>;
  settings(): { pendingExpiryHours: number; taskRetentionHours: number };
  /** The list changed: the console and the tray are told. */
  onChange(): void;
  /** The approved run as a traffic entry (its caller: the new key's holder). */
  onCall?(event: EnvelopeEvent): void;
  /** Failures that are nobody's request (a task that could not be written), for the operator's log. */
  onError(error: unknown): void;
  now?: () => number;
  /** How often expired knocks are looked for (default 30 s; 0: only when the list is read). */
  sweepEveryMs?: number;
}

const DEFAULT_REASON = "This agent's operator declined your request.";
const MAX_REASON = 300;

export class KnockDecisions {
  private readonly now: () => number;
  /** Runs of approved messages in flight here, by task id. */
  private readonly runs = new Map<string, AbortController>();
  /** Knocks being decided (a key being issued): a second decision meanwhile is refused. */
  private readonly deciding = new Set<string>();
  private readonly sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly options: KnockDecisionsOptions) {
    this.now = options.now ?? Date.now;
    const every = options.sweepEveryMs ?? 30_000;
    if (every > 0) {
      this.sweeper = setInterval(() => void this.sweep().catch(options.onError), every);
      this.sweeper.unref();
    }
  }

  /** Runs of approved messages in flight (shutdown waits for them as for any run). */
  get activeRuns(): number {
    return this.runs.size;
  }

  /** The list's bounds. */
  get limits(): { maxWaiting: number; maxPerAddress: number } {
    const { maxWaiting, maxPerAddress } = this.options.knocks;
    return { maxWaiting, maxPerAddress };
  }

  /** Knocks refused since start (past a bound, or from an address turned down). */
  get refused(): number {
    return this.options.knocks.refused;
  }

  /** The waiting knocks, newest first, as the console shows them. */
  view(): KnockView[] {
    return this.options.knocks
      .waiting()
      .sort((a, b) => b.firstAt - a.firstAt)
      .map(knockView);
  }

  summary(): KnocksSummary {
    const waiting = this.options.knocks.waiting();
    const newest = waiting.reduce<KnockRecord | undefined>(
      (latest, record) => (!latest || record.firstAt > latest.firstAt ? record : latest),
      undefined,
    );
    if (!newest) return { waiting: 0 };
    const { address } = where(newest.address);
    return {
      waiting: waiting.length,
      newest: {
        code: newest.code,
        address,
        firstAt: new Date(newest.firstAt).toISOString(),
        ...(newest.claimedName ? { name: newest.claimedName } : {}),
      },
    };
  }

  /**
   * Issues an A2A key for the knock's caller (`body` as POST /api/a2a/keys takes it; its name by default the
   * knock's suggested one), then runs its parked message as that key's holder. The key reaches the caller
   * in its task only; the answer here is the key's view.
   */
  async approve(code: string, body: unknown): Promise<A2AKeyView> {
    const record = this.waitingKnock(code);
    this.deciding.add(code);
    try {
      const request = { name: suggestedName(record), ...(isObject(body) ? body : {}) };
      const { key, secret } = await this.options.keys.issue(request);
      const retentionMs = this.options.settings().taskRetentionHours * 3600_000;
      try {
        this.options.knocks.approve(code, {
          keyId: key.id,
          secret,
          ...(key.skills ? { skills: [...key.skills] } : {}),
          ...(key.expiresAt ? { expiresAt: key.expiresAt } : {}),
          dropAt: this.now() + retentionMs,
        });
      } catch (error) {
        // Withdrawn or expired while the key was issued (or the list not written): nobody will read it.
        await this.options.keys.revoke(key.id).catch(() => undefined);
        throw error;
      }
      this.options.onChange();
      void this.run(record, secret).catch(this.options.onError);
      return key;
    } finally {
      this.deciding.delete(code);
    }
  }

  /**
   * Turns the knock down: its task ends rejected with `reason` (one line; the caller reads it), and its
   * address may not knock again until the knock would have expired.
   */
  async deny(code: string, reason: unknown): Promise<void> {
    const text = denialReason(reason);
    const record = this.waitingKnock(code);
    this.options.knocks.deny(code, Math.max(0, record.expiresAt - record.firstAt));
    this.options.onChange();
    await this.end(
      record,
      TaskState.TASK_STATE_REJECTED,
      `This agent's operator declined your request: ${text}`,
    );
  }

  /**
   * Knocks nobody decided in time end rejected; keys approved and never read are dropped and revoked
   * (nobody holds them).
   */
  async sweep(): Promise<void> {
    const { expired, dropped } = this.options.knocks.sweep();
    if (expired.length > 0) this.options.onChange();
    for (const record of expired) {
      await this.end(
        record,
        TaskState.TASK_STATE_REJECTED,
        `This agent's operator did not decide on your knock in time (${this.options.settings().pendingExpiryHours} h); knock again later.`,
      );
    }
    for (const key of dropped) {
      await this.options.keys.revoke(key.keyId).catch(() => undefined);
    }
  }

  /** Stops the sweeps, and aborts the runs in flight (their tasks end failed). */
  close(): void {
    clearInterval(this.sweeper);
    for (const controller of this.runs.values()) controller.abort(new Error('agent shutting down'));
  }

  /** The caller canceled the task: a run of its message stops (the SDK wrote it canceled). */
  canceled(taskId: string): void {
    this.runs.get(taskId)?.abort(new Error('canceled by its caller'));
  }

  private waitingKnock(code: string): KnockRecord {
    const record = typeof code === 'string' ? this.options.knocks.get(code) : undefined;
    if (!record) {
      throw new KnockError(
        404,
        `No knock ${String(code).slice(0, 20)} waits for a decision: it was decided, withdrawn by its caller, or it expired.`,
        'Pick a knock from the list (GET /api/a2a/knocks).',
      );
    }
    if (this.deciding.has(code)) {
      throw new KnockError(409, `Knock ${code} is being approved already.`, 'Wait for that decision.');
    }
    return record;
  }

  /**
   * The parked message, run as the new key's holder: the key's own check and its skill's audience, the
   * limits and budget, the screen, then the turn, as a message with that key would be; the task's caller
   * (its owner) sees it work and end. A refusal ends it failed with the refusal's words.
   */
  private async run(record: KnockRecord, secret: string): Promise<void> {
    const controller = new AbortController();
    this.runs.set(record.taskId, controller);
    const context = ownerContext(record);
    const call = traffic(record);
    try {
      const task = await this.options.tasks.load(record.taskId, context);
      if (!task || isEnded(task)) return;
      const text = parkedText(task);
      await this.write(
        task,
        context,
        TaskState.TASK_STATE_WORKING,
        'Approved by the operator: your message runs now.',
      );
      const caller = await this.options.calls.authenticate({
        headers: { authorization: `Bearer ${secret}` },
        remoteAddress: undefined,
        method: `POST ${record.path}`,
        ...(record.skill === undefined ? {} : { skill: record.skill }),
      });
      call.caller = caller;
      passStep(call, 'key');
      passStep(call, 'request');
      await this.options.calls.admit(
        caller,
        { message: text, contextId: task.contextId },
        {
          passed: (step) => passStep(call, step),
          matched: (match) => (call.screened = match),
        },
      );
      passStep(call, 'limits');
      const reply = await this.options.calls.run(
        caller,
        { message: text, contextId: task.contextId, taskId: task.id },
        { signal: controller.signal },
      );
      if (controller.signal.aborted) throw controller.signal.reason;
      task.artifacts = [
        ...task.artifacts.filter((a) => a.artifactId !== REPLY_ARTIFACT_ID),
        replyArtifact(reply.reply),
      ];
      await this.write(task, context, TaskState.TASK_STATE_COMPLETED);
      call.taskState = 'completed';
    } catch (error) {
      call.error = error;
      call.taskState = 'failed';
      if (!(error instanceof ProtocolError || error instanceof A2AError) && !controller.signal.aborted)
        this.options.onError(error);
      const task = await this.options.tasks.load(record.taskId, context);
      if (task && !isEnded(task))
        await this.write(task, context, TaskState.TASK_STATE_FAILED, failureText(error, controller.signal));
    } finally {
      this.runs.delete(record.taskId);
      const status = call.error instanceof ProtocolError ? call.error.httpStatus : 200;
      if (call.caller) this.options.onCall?.(trafficEvent(call, status, 0));
    }
  }

  /** Ends a waiting knock's task (denied, expired), unless its caller ended it first (canceled). */
  private async end(record: KnockRecord, state: TaskState, text: string): Promise<void> {
    const context = ownerContext(record);
    try {
      const task = await this.options.tasks.load(record.taskId, context);
      if (task && !isEnded(task)) await this.write(task, context, state, text);
    } catch (error) {
      this.options.onError(error);
    }
  }

  private async write(
    task: Task,
    context: ServerCallContext,
    state: TaskState,
    text?: string,
  ): Promise<void> {
    task.status = {
      state,
      message: text === undefined ? undefined : agentMessage(task.id, task.contextId, text),
      timestamp: new Date(this.now()).toISOString(),
    };
    await this.options.tasks.save(task, context);
  }
}

/** Its task's owner, as the task store scopes writes (the knock's caller, never the key's holder). */
function ownerContext(record: KnockRecord): ServerCallContext {
  return callContext({ id: record.owner, name: `keyless caller (knock ${record.code})` }, '1.0');
}

/** The approved run's traffic entry: a message sent as the new key's holder. */
function traffic(record: KnockRecord): A2ACallRecord {
  const call: A2ACallRecord = {
    startedAt: Date.now(),
    started: performance.now(),
    path: record.path,
    transport: record.transport,
    bytesIn: 0,
    passed: [],
    method: 'SendMessage',
    mode: 'async',
    taskId: record.taskId,
    contextId: record.contextId,
    version: '1.0',
  };
  if (record.skill !== undefined) call.skill = record.skill;
  return call;
}

function isEnded(task: Task): boolean {
  const state = task.status?.state;
  return state !== undefined && TERMINAL_STATES.has(state);
}

function failureText(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'The agent stopped before your message finished; send it again with your key.';
  if (error instanceof ProtocolError || error instanceof A2AError)
    return `Approved by the operator, but your message was not answered: ${error.message}`;
  return 'Approved by the operator, but the agent failed to answer your message; send it again with your key.';
}

function denialReason(value: unknown): string {
  if (value === undefined || value === null || value === '') return DEFAULT_REASON;
  const text = typeof value === 'string' ? value.trim() : '';
  if (!text || text.length > MAX_REASON || printable(text) !== text || /[\u2028\u2029]/.test(text)) {
    throw new KnockError(
      400,
      `The reason must be one line of 1 to ${MAX_REASON} characters: the caller reads it in its task.`,
      'Send {"reason": "..."}, or leave it out for the default.',
    );
  }
  return text;
}

/** The key name the console proposes: the claimed name, quoted, and where the knock came from. */
function suggestedName(record: KnockRecord): string {
  const { address } = where(record.address);
  const from = `knock from ${address}`;
  const name = record.claimedName ? `"${record.claimedName}" (${from})` : `K${from.slice(1)}`;
  return oneLine(name, 100) ?? 'Knock';
}

/**
 * Where a knock came from, as the operator reads it. A forwarded address is the last X-Forwarded-For hop: a
 * tunnel's own, but a process on this machine may write any text there, so it is shown escaped.
 */
function where(bucket: string): Pick<KnockView, 'address' | 'via'> {
  if (bucket === 'local') return { address: 'this machine', via: 'local' };
  if (bucket.startsWith('fwd:')) return { address: escapedLine(bucket.slice(4), 64), via: 'proxy' };
  return { address: escapedLine(bucket, 64), via: 'direct' };
}

/** A knock as the console (and `serve`) shows it: where from, what it claims, its preview. */
export function knockView(record: KnockRecord): KnockView {
  const iso = (time: number) => new Date(time).toISOString();
  return {
    code: record.code,
    ...where(record.address),
    skill: record.skill ?? DEFAULT_SKILL,
    claimed: {
      ...(record.claimedName ? { name: record.claimedName } : {}),
      ...(record.claimedCardUrl ? { cardUrl: record.claimedCardUrl } : {}),
    },
    preview: record.preview,
    ...(record.screened ? { screened: { rule: record.screened } } : {}),
    messages: record.messages,
    firstAt: iso(record.firstAt),
    lastAt: iso(record.lastAt),
    expiresAt: iso(record.expiresAt),
    suggestedName: suggestedName(record),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
