import { normalizeAgentId } from '../protocol/index.js';
import type {
  AccessPolicy,
  AccessResponse,
  KnockView,
  PendingSenderView,
  StatusResponse,
} from '../protocol/console-api.js';
import { skillScope } from './skill-scope.js';
import { AccessGate } from './access-gate.js';
import { AccessStore, type AccessFile, type AccessStoreOptions, type PendingRecord } from './access-store.js';

/**
 * What happened to the access lists (the console streams it, the tray notifies on `new-sender`); an A2A
 * caller's knock (a2a/knock.ts) is `new-knock` (`serve` prints it).
 */
export type AccessChange =
  | { kind: 'new-sender'; pending: PendingSenderView }
  | { kind: 'new-knock'; knock: KnockView }
  | { kind: 'changed' };

/** A request about a sender that cannot be done; the message and fix are for the operator. */
export class AccessError extends Error {
  constructor(
    readonly status: 400 | 404 | 409 | 503,
    message: string,
    readonly fix: string,
  ) {
    super(message);
    this.name = 'AccessError';
  }
}

export interface AccessControlOptions {
  dataDir: string;
  policy(): AccessPolicy;
  allowedPeers(): string[];
  isOwnId(id: string): boolean;
  describe(sender: string): { name?: string; description?: string; activeKeys: string[] } | undefined;
  expiryHours(): number;
  /** Held tasks: run them (approved) or fail them with AUTH_FAILED (denied, expired); list them (task to sender). */
  heldTasks: {
    run(taskIds: string[]): void | Promise<void>;
    fail(taskIds: string[], message: string): void | Promise<void>;
    list?(): Promise<Map<string, string>>;
  };
  onChange?(change: AccessChange): void;
  now?: () => number;
  maxPending?: number;
  maxHeldPerSender?: number;
  /** The lists shared with other replicas (Redis), instead of `access.json`. */
  shared?: AccessStoreOptions['shared'];
  /**
   * Why the operator's decisions cannot be saved now (shared state that does not answer), if so: a
   * decision made then would hold at this replica only, so it is refused and made again later.
   */
  unwritable?(): string | undefined;
  /** The skills there are (chat and the skills setting): an approval's scope names only these. */
  skills?(): string[];
}

const AGENT_ID = /^agent:\/\/([A-Za-z0-9.-]+(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?)$/;
const SWEEP_MS = 30_000;

/**
 * The operator's consent for new senders: the gate the pipeline asks, the lists the console shows, and the
 * operator's decisions (approve, deny, revoke), with held tasks run or failed accordingly.
 */
export class AccessControl {
  readonly store: AccessStore;
  readonly gate: AccessGate;
  private refusedWhileFull = 0;
  private readonly sweeper: NodeJS.Timeout;
  private readonly now: () => number;

  constructor(private readonly options: AccessControlOptions) {
    this.now = options.now ?? Date.now;
    this.store = new AccessStore(options.dataDir, {
      now: this.now,
      maxPending: options.maxPending,
      maxHeldPerSender: options.maxHeldPerSender,
      shared: options.shared,
    });
    const changed = () => options.onChange?.({ kind: 'changed' });
    this.gate = new AccessGate({
      store: this.store,
      policy: options.policy,
      allowedPeers: options.allowedPeers,
      isOwnId: options.isOwnId,
      describe: options.describe,
      expiryMs: () => options.expiryHours() * 3600_000,
      onNewSender: (record) => options.onChange?.({ kind: 'new-sender', pending: pendingView(record) }),
      onFull: () => {
        this.refusedWhileFull += 1;
      },
      onChange: changed,
    });
    // A failed write (a full or read-only disk) must not escape a timer and end the process: say it and go on.
    this.sweeper = setInterval(() => {
      try {
        this.sweep();
      } catch (error) {
        console.error(`Access: expiring requests failed: ${(error as Error).message}`);
      }
    }, SWEEP_MS);
    this.sweeper.unref();
  }

  view(): AccessResponse {
    this.sweep();
    const allowed = [...new Set(this.options.allowedPeers().map(normalizeAgentId))];
    return {
      policy: this.options.policy(),
      pending: this.store
        .pending()
        .sort((a, b) => b.firstAt - a.firstAt)
        .map(pendingView),
      approved: [
        ...this.store
          .approved()
          .filter((record) => !allowed.includes(record.sender))
          .sort((a, b) => b.approvedAt - a.approvedAt)
          .map((record) => ({
            sender: record.sender,
            source: 'operator' as const,
            approvedAt: new Date(record.approvedAt).toISOString(),
            ...(record.name ? { name: record.name } : {}),
            ...(record.skills ? { skills: [...record.skills] } : {}),
          })),
        ...allowed.map((sender) => ({ sender, source: 'allowed-peers' as const })),
      ],
      limits: {
        maxPending: this.store.maxPending,
        maxHeldPerSender: this.store.maxHeldPerSender,
        expiryHours: this.options.expiryHours(),
      },
      refusedWhileFull: this.refusedWhileFull,
    };
  }

  /** The Overview's and the tray's summary (SAMVAD's senders; the A2A knocks are the A2A door's). */
  summary(): Omit<StatusResponse['access'], 'knocks'> {
    const pending = this.store.pending();
    const newest = pending.reduce<PendingRecord | undefined>(
      (latest, record) => (!latest || record.firstAt > latest.firstAt ? record : latest),
      undefined,
    );
    return {
      policy: this.options.policy(),
      pending: pending.length,
      ...(newest
        ? {
            newest: {
              sender: newest.sender,
              code: newest.code,
              firstAt: new Date(newest.firstAt).toISOString(),
              ...(newest.name ? { name: newest.name } : {}),
            },
          }
        : {}),
    };
  }

  /**
   * A sender the operator approved or allows (allowedPeers), whoever signs in its name: its card is fetched
   * from a reserve strangers cannot spend (peer-keys.ts).
   */
  trusts(sender: string): boolean {
    if (this.store.isApproved(sender)) return true;
    return this.options.allowedPeers().some((peer) => normalizeAgentId(peer) === sender);
  }

  /**
   * Approves a sender (waiting or not: the operator may approve an id ahead of its first call), for exactly
   * `skills` when given (else every public and approved skill); again, to change that scope.
   */
  approve(id: string, skills?: unknown): number {
    checkId(id);
    const scope = skillScope(skills, this.options.skills?.());
    if (typeof scope === 'string') {
      throw new AccessError(
        400,
        `Not approved: skills ${scope}.`,
        'Send {"sender": "agent://...", "skills": ["research"]}, or leave "skills" out.',
      );
    }
    this.checkWritable();
    const sender = normalizeAgentId(id);
    const tasks = this.store.approve(sender, this.options.describe(sender)?.activeKeys ?? [], scope);
    this.runHeld(tasks);
    this.options.onChange?.({ kind: 'changed' });
    return tasks.length;
  }

  /** Turns a waiting sender down: its held tasks fail, and it cannot ask again until its request would have expired. */
  deny(id: string): number {
    checkId(id);
    this.checkWritable();
    const sender = normalizeAgentId(id);
    const tasks = this.store.deny(sender, this.options.expiryHours() * 3600_000);
    if (!tasks) {
      throw new AccessError(
        404,
        `${sender} is not waiting for approval.`,
        'Pick a sender from the pending list (GET /api/access).',
      );
    }
    this.failHeld(tasks, "This agent's operator declined the sender of this task.");
    this.options.onChange?.({ kind: 'changed' });
    return tasks.length;
  }

  revoke(id: string): void {
    checkId(id);
    this.checkWritable();
    const sender = normalizeAgentId(id);
    if (this.store.revoke(sender)) {
      this.options.onChange?.({ kind: 'changed' });
      return;
    }
    if (this.options.allowedPeers().some((peer) => normalizeAgentId(peer) === sender)) {
      throw new AccessError(
        409,
        `${sender} is allowed by the allowedPeers setting, not by an approval.`,
        'Remove it from Allowed peers in Settings > Access.',
      );
    }
    throw new AccessError(404, `${sender} is not approved.`, 'Pick a sender from the approved list.');
  }

  /** Expired requests leave the list; their held tasks fail. */
  sweep(): void {
    const expired = this.store.sweep();
    if (expired.length === 0) return;
    for (const record of expired) {
      this.failHeld(
        record.heldTasks,
        "This task's sender was not approved by the agent's operator in time; the request expired.",
      );
    }
    this.options.onChange?.({ kind: 'changed' });
  }

  /**
   * The lists as the replicas share them now (another replica changed them): the console is told. `since`:
   * `store.changes` taken before they were loaded, so that changes made here meanwhile stand.
   */
  reload(file: Partial<AccessFile>, since?: number): void {
    this.store.replace(file, since);
    this.options.onChange?.({ kind: 'changed' });
  }

  /**
   * Held tasks whose sender was decided while they were not on its request (a restart, or on Redis another
   * replica's copy of the request): those of approved senders run, those of senders neither approved nor
   * waiting fail. A task of a sender still waiting keeps waiting, listed or not.
   */
  reconcile(heldTaskIds: Map<string, string>): void {
    const run: string[] = [];
    const fail: string[] = [];
    for (const [taskId, sender] of heldTaskIds) {
      if (this.store.pendingOf(sender)) continue;
      (this.store.isApproved(sender) ? run : fail).push(taskId);
    }
    if (run.length > 0) this.runHeld(run);
    if (fail.length > 0) this.failHeld(fail, "This task's sender was not approved by the agent's operator.");
  }

  /**
   * `reconcile` with the held tasks as the task store lists them now: once at start, and on Redis after
   * each reload of the lists (a replica's copy of a request may miss a task another one held meanwhile).
   */
  async reconcileHeld(): Promise<void> {
    try {
      const held = await this.options.heldTasks.list?.();
      if (held) this.reconcile(held);
    } catch (error) {
      reportHeldFailure(error);
    }
  }

  /** Stops the sweeps; asks counted since the last write are written (a failed write is only reported). */
  close(): void {
    clearInterval(this.sweeper);
    try {
      this.store.flush();
    } catch (error) {
      console.error(`Access: the request counts could not be saved: ${(error as Error).message}`);
    }
  }

  private runHeld(taskIds: string[]): void {
    Promise.resolve(this.options.heldTasks.run(taskIds)).catch(reportHeldFailure);
  }

  private failHeld(taskIds: string[], message: string): void {
    Promise.resolve(this.options.heldTasks.fail(taskIds, message)).catch(reportHeldFailure);
  }

  private checkWritable(): void {
    const problem = this.options.unwritable?.();
    if (problem) throw new AccessError(503, `Not saved: ${problem}`, 'Decide again once Redis answers.');
  }
}

function reportHeldFailure(error: unknown): void {
  console.error(`Agent: held tasks could not be updated: ${(error as Error).message}`);
}

function checkId(sender: unknown): asserts sender is string {
  if (typeof sender !== 'string' || !AGENT_ID.test(sender)) {
    throw new AccessError(
      400,
      'The sender must be an agent id like agent://example.com.',
      'Send {"sender": "agent://..."} with the id as the pending or approved list shows it.',
    );
  }
}

function pendingView(record: PendingRecord): PendingSenderView {
  return {
    sender: record.sender,
    code: record.code,
    ...(record.name ? { name: record.name } : {}),
    ...(record.description ? { description: record.description } : {}),
    firstAt: new Date(record.firstAt).toISOString(),
    lastAt: new Date(record.lastAt).toISOString(),
    count: record.count,
    ...(record.preview ? { preview: record.preview } : {}),
    ...(record.note ? { note: record.note } : {}),
    heldTasks: record.heldTasks.length,
    expiresAt: new Date(record.expiresAt).toISOString(),
  };
}
