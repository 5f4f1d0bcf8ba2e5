import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { CorruptFileError, readJsonFile, writeFileAtomic } from '../lib/atomic-file.js';
import { isSkillId, normalizeAgentId } from '../protocol/index.js';

/** A sender the operator approved in the console. */
export interface ApprovedRecord {
  sender: string;
  approvedAt: number;
  name?: string;
  /**
   * The public keys bound to the approval: those the sender's request announced when the operator approved
   * it, then each key its card lists as active when a bound key signs a call (a rotation announced by the old
   * key). A call signed with any other key asks again: someone else may hold the id now (issue 15). Records
   * of earlier releases hold the keys the card listed then: they count as bound. None: the first key binds.
   */
  keys?: string[];
  /**
   * The skills the approval opens, exactly (a `named` skill included: calls/skill-access.ts); absent: every
   * public and approved skill.
   */
  skills?: string[];
}

/** A verified sender waiting for the operator's decision (policy `pairing`). */
export interface PendingRecord {
  sender: string;
  code: string;
  name?: string;
  description?: string;
  firstAt: number;
  lastAt: number;
  count: number;
  /** The start of its first message; dropped with the record. */
  preview?: string;
  /** Why it asks again, when it was approved before (its keys changed). */
  note?: string;
  /** The keys its first call announced (signing key, and the card's active keys): approving binds them. */
  keys?: string[];
  /** Async tasks held for this sender, run on approval and failed on denial or expiry. */
  heldTasks: string[];
  expiresAt: number;
}

/** A sender the operator turned down: refused at once, without re-entering the list, until `until`. */
interface DeniedRecord {
  sender: string;
  until: number;
}

export interface AccessFile {
  approved: ApprovedRecord[];
  pending: PendingRecord[];
  denied: DeniedRecord[];
}

export interface AccessStoreOptions {
  now?: () => number;
  /** Senders waiting at once; past it a new sender is refused (the list is never flushed by strangers). */
  maxPending?: number;
  /** Async tasks held per waiting sender. */
  maxHeldPerSender?: number;
  /**
   * Where the lists are kept when several replicas share them (Redis): each change is handed over here
   * instead of `access.json`, and `replace` loads what the other replicas wrote.
   */
  shared?: { save(file: AccessFile): void };
}

export type AskOutcome =
  | { outcome: 'pending'; record: PendingRecord; isNew: boolean }
  | { outcome: 'denied'; until: number }
  | { outcome: 'full' };

export const ACCESS_FILE = 'access.json';
/** Keys remembered per approved sender (a card lists at most 32). */
const MAX_KEYS = 32;

/**
 * Who the operator approved, who waits, and who was turned down, in `<dataDir>/access.json` (0600, written
 * atomically at every change, so approvals survive a restart and a `kill -9`). Lookups are in memory.
 */
export class AccessStore {
  private readonly approvedBySender = new Map<string, ApprovedRecord>();
  private readonly pendingBySender = new Map<string, PendingRecord>();
  private readonly deniedBySender = new Map<string, DeniedRecord>();
  private readonly path: string;
  private readonly now: () => number;
  private readonly shared: AccessStoreOptions['shared'];
  /** Shared state: local changes so far, and each changed sender's last (see `replace`). */
  private changeCount = 0;
  private changedAt = new Map<string, number>();
  /** Waiting senders whose count changed since the last write (askedAgain). */
  private readonly unsaved = new Set<string>();
  readonly maxPending: number;
  readonly maxHeldPerSender: number;

  constructor(dataDir: string, options: AccessStoreOptions = {}) {
    this.path = join(dataDir, ACCESS_FILE);
    this.now = options.now ?? Date.now;
    this.maxPending = options.maxPending ?? 100;
    this.maxHeldPerSender = options.maxHeldPerSender ?? 3;
    this.shared = options.shared;
    if (!this.shared) this.replace(readAccessFile(this.path));
  }

  /** A mark to pass to `replace` with lists loaded after it (shared state). */
  get changes(): number {
    return this.changeCount;
  }

  /**
   * Takes the lists as another replica left them (shared state), dropping what this one knew; but for the
   * senders this replica changed since `since` (the mark taken before the lists were loaded): a reload in
   * flight as a call or the operator changed one read the lists before that change, and would undo it here,
   * and then in Redis with the next save (an approval lost, a request gone).
   */
  replace(file: Partial<AccessFile>, since?: number): void {
    const valid = validAccessFile(file);
    const changed = since === undefined ? [] : [...this.changedAt].filter(([, at]) => at > since);
    const local = changed.map(([sender]) => ({
      sender,
      approved: this.approvedBySender.get(sender),
      pending: this.pendingBySender.get(sender),
      denied: this.deniedBySender.get(sender),
    }));
    const asked = [...this.unsaved].flatMap((sender) => this.pendingBySender.get(sender) ?? []);
    this.approvedBySender.clear();
    this.pendingBySender.clear();
    this.deniedBySender.clear();
    for (const record of valid.approved) this.approvedBySender.set(record.sender, record);
    for (const record of valid.pending) this.pendingBySender.set(record.sender, record);
    for (const record of valid.denied) this.deniedBySender.set(record.sender, record);
    for (const { sender, approved, pending, denied } of local) {
      keep(this.approvedBySender, sender, approved);
      keep(this.pendingBySender, sender, pending);
      keep(this.deniedBySender, sender, denied);
    }
    // Asks counted here and not written yet (askedAgain) are kept on the same request.
    for (const mine of asked) {
      const loaded = this.pendingBySender.get(mine.sender);
      if (loaded?.code !== mine.code) continue;
      loaded.count = Math.max(loaded.count, mine.count);
      loaded.lastAt = Math.max(loaded.lastAt, mine.lastAt);
    }
    // The changes made before the mark were written before the lists were read: they are in them.
    this.changedAt = new Map(changed);
    // Replicas racing (a request written at one as the operator approves at another) can leave a sender
    // both approved and waiting: the approval stands, and its held tasks run (AccessControl.reconcile).
    const settled = [...this.pendingBySender.keys()].filter((sender) => this.approvedBySender.has(sender));
    for (const sender of settled) this.pendingBySender.delete(sender);
    if (settled.length > 0 && this.shared) this.save(...settled);
  }

  isApproved(sender: string): boolean {
    return this.approvedBySender.has(sender);
  }

  approvedRecord(sender: string): ApprovedRecord | undefined {
    return this.approvedBySender.get(sender);
  }

  /** Binds the keys a bound key announced to the approval (bounded); written only when they change. */
  noteKeys(sender: string, keys: string[]): void {
    const record = this.approvedBySender.get(sender);
    if (!record || keys.length === 0) return;
    // Every call of an approved sender comes here: the usual answer (nothing new) allocates nothing.
    const known = record.keys ?? [];
    if (keys.every((key) => known.includes(key))) return;
    record.keys = [...new Set([...keys, ...(record.keys ?? [])])].slice(0, MAX_KEYS);
    this.save(sender);
  }

  /** An approval whose keys no longer match: the sender asks again (the operator sees why). */
  withdraw(sender: string): void {
    if (this.approvedBySender.delete(sender)) this.save(sender);
  }

  approved(): ApprovedRecord[] {
    return [...this.approvedBySender.values()];
  }

  pending(): PendingRecord[] {
    return [...this.pendingBySender.values()];
  }

  pendingOf(sender: string): PendingRecord | undefined {
    return this.pendingBySender.get(sender);
  }

  /** Until when the operator's denial of `sender` holds, if it does. */
  deniedUntil(sender: string): number | undefined {
    const until = this.deniedBySender.get(sender)?.until;
    return until !== undefined && until > this.now() ? until : undefined;
  }

  /**
   * A waiting sender asked again (refused before any limit): counted here, and written with the next change
   * or sweep, so a sender repeating itself cannot make a write per call.
   */
  askedAgain(sender: string): void {
    const record = this.pendingBySender.get(sender);
    if (!record) return;
    record.count += 1;
    record.lastAt = this.now();
    this.unsaved.add(sender);
  }

  get pendingCount(): number {
    return this.pendingBySender.size;
  }

  /**
   * A sender not yet approved asks: counted on its pending record, which is created on the first ask
   * (unless the list is full or the operator denied it lately). `expiresInMs` applies to new records.
   */
  ask(
    sender: string,
    details: { name?: string; description?: string; preview?: string; note?: string; keys?: string[] },
    expiresInMs: number,
  ): AskOutcome {
    const now = this.now();
    const denied = this.deniedBySender.get(sender);
    if (denied && denied.until > now) return { outcome: 'denied', until: denied.until };
    const existing = this.pendingBySender.get(sender);
    if (existing) {
      existing.count += 1;
      existing.lastAt = now;
      // The card may have been fetched only now (a pinned key, then a card): keep what is known.
      existing.name ??= details.name;
      existing.description ??= details.description;
      this.save(sender);
      return { outcome: 'pending', record: existing, isNew: false };
    }
    if (this.pendingBySender.size >= this.maxPending) return { outcome: 'full' };
    const record: PendingRecord = {
      sender,
      code: requestCode(),
      ...definedOnly({ ...details, keys: details.keys?.slice(0, MAX_KEYS) }),
      firstAt: now,
      lastAt: now,
      count: 1,
      heldTasks: [],
      expiresAt: now + expiresInMs,
    };
    this.pendingBySender.set(sender, record);
    this.save(sender);
    return { outcome: 'pending', record, isNew: true };
  }

  /** Reserves a held-task slot for `taskId`; false when the sender already has its maximum held. */
  hold(sender: string, taskId: string): boolean {
    const record = this.pendingBySender.get(sender);
    if (!record || record.heldTasks.length >= this.maxHeldPerSender) return false;
    record.heldTasks.push(taskId);
    this.save(sender);
    return true;
  }

  /** Gives a reserved slot back (the task could not be created after all). */
  release(sender: string, taskId: string): void {
    const record = this.pendingBySender.get(sender);
    if (!record) return;
    record.heldTasks = record.heldTasks.filter((id) => id !== taskId);
    this.save(sender);
  }

  /**
   * Approves a sender, bound to the keys its request announced (else, approved already, the keys its approval
   * is bound to; else `keys`: its card's active keys now, when known; none binds the first key that signs),
   * for `skills` (none: every public and approved skill). Approving an approved sender again changes its
   * scope and keeps its keys. Returns the tasks it had waiting.
   */
  approve(sender: string, keys: string[] = [], skills?: string[]): string[] {
    const pending = this.pendingBySender.get(sender);
    const approved = this.approvedBySender.get(sender);
    this.pendingBySender.delete(sender);
    this.deniedBySender.delete(sender);
    const record: ApprovedRecord = { sender, approvedAt: approved?.approvedAt ?? this.now() };
    const name = pending?.name ?? approved?.name;
    if (name) record.name = name;
    const bound = pending?.keys ?? approved?.keys ?? keys;
    if (bound.length > 0) record.keys = bound.slice(0, MAX_KEYS);
    if (skills) record.skills = [...skills];
    this.approvedBySender.set(sender, record);
    this.save(sender);
    return pending?.heldTasks ?? [];
  }

  /** Turns a waiting sender down for `blockMs`; returns its held tasks (to fail). Undefined if not waiting. */
  deny(sender: string, blockMs: number): string[] | undefined {
    const pending = this.pendingBySender.get(sender);
    if (!pending) return undefined;
    this.pendingBySender.delete(sender);
    this.deniedBySender.set(sender, { sender, until: this.now() + blockMs });
    this.save(sender);
    return pending.heldTasks;
  }

  /** Withdraws an approval; the sender's next call waits for the operator again. */
  revoke(sender: string): boolean {
    if (!this.approvedBySender.delete(sender)) return false;
    this.save(sender);
    return true;
  }

  /** Drops expired requests and denials; returns the expired requests (their held tasks fail). */
  sweep(): PendingRecord[] {
    const now = this.now();
    const expired = [...this.pendingBySender.values()].filter((record) => record.expiresAt <= now);
    for (const record of expired) this.pendingBySender.delete(record.sender);
    const changed = expired.map((record) => record.sender);
    for (const [sender, record] of this.deniedBySender) {
      if (record.until > now) continue;
      this.deniedBySender.delete(sender);
      changed.push(sender);
    }
    if (changed.length > 0) this.save(...changed, ...this.unsaved);
    else this.flush();
    return expired;
  }

  /** Writes the asks counted since the last write, if any (askedAgain). */
  flush(): void {
    if (this.unsaved.size > 0) this.save(...this.unsaved);
  }

  /** Writes the lists, after a change to `senders`' records. */
  private save(...senders: string[]): void {
    if (this.shared) {
      this.changeCount += 1;
      for (const sender of senders) this.changedAt.set(sender, this.changeCount);
    }
    this.unsaved.clear();
    const file: AccessFile = {
      approved: this.approved(),
      pending: this.pending(),
      denied: [...this.deniedBySender.values()],
    };
    if (this.shared) this.shared.save(file);
    else writeFileAtomic(this.path, JSON.stringify(file));
  }
}

function keep<V>(map: Map<string, V>, sender: string, record: V | undefined): void {
  if (record) map.set(sender, record);
  else map.delete(sender);
}

export function readAccessFile(path: string): AccessFile {
  let saved: Partial<AccessFile> | undefined;
  try {
    saved = readJsonFile<Partial<AccessFile>>(path);
  } catch (error) {
    // A torn or hand-edited file must not silently forget who was approved: say what to do.
    if (error instanceof CorruptFileError) {
      throw new Error(
        `${path} ${error.detail}: it lists the senders you approved. Fix it, or delete it to approve them again.`,
        { cause: error },
      );
    }
    throw error;
  }
  return validAccessFile(saved);
}

function validAccessFile(saved: Partial<AccessFile> | undefined): AccessFile {
  // Each sender in its one spelling, as calls are looked up: a hand-edited file or record may spell it
  // otherwise (agent://Friend.example), and must not be silently ignored.
  const list = <T extends { sender: string }>(value: unknown, valid: (item: T) => boolean): T[] =>
    Array.isArray(value)
      ? (value as T[])
          .filter((item) => item && typeof item === 'object' && valid(item))
          .map((item) => ({ ...item, sender: normalizeAgentId(item.sender) }))
      : [];
  // Bound keys are compared one by one: anything but a list of texts would bind nothing (or, as a string,
  // any part of one).
  const keys = (r: { keys?: unknown }) =>
    r.keys === undefined || (Array.isArray(r.keys) && r.keys.every((key) => typeof key === 'string'));
  // A scope that is not a list of skill ids would open what the operator did not name: no approval then.
  const skills = (r: { skills?: unknown }) =>
    r.skills === undefined || (Array.isArray(r.skills) && r.skills.every(isSkillId));
  return {
    approved: list<ApprovedRecord>(
      saved?.approved,
      (r) => typeof r.sender === 'string' && keys(r) && skills(r),
    ),
    pending: list<PendingRecord>(
      saved?.pending,
      (r) =>
        typeof r.sender === 'string' && typeof r.code === 'string' && Array.isArray(r.heldTasks) && keys(r),
    ),
    denied: list<DeniedRecord>(
      saved?.denied,
      (r) => typeof r.sender === 'string' && typeof r.until === 'number',
    ),
  };
}

// Eight characters from an alphabet without look-alikes (no 0/O, 1/I/L), shown as XXXX-XXXX.
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
function requestCode(): string {
  const bytes = randomBytes(8);
  const chars = [...bytes].map((byte) => CODE_ALPHABET[byte % CODE_ALPHABET.length]);
  return `${chars.slice(0, 4).join('')}-${chars.slice(4).join('')}`;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
