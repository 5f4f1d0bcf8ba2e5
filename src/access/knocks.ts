import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { CorruptFileError, readJsonFile, writeFileAtomic } from '../lib/atomic-file.js';

/**
 * A2A callers without a key that asked the operator for one (issue 28, "knock to pair"): who waits, the keys
 * issued on approval until their callers read them, and the addresses the operator turned down, in
 * `<dataDir>/a2a-knocks.json` (0600, written atomically at every change, so a knock survives a restart and a
 * `kill -9`). Bounded like SAMVAD's pending senders: per address and in all, in memory and on disk; a knock
 * past a bound is refused and counted, nothing else (no write, no notice). Lookups are in memory.
 *
 * What a caller sent is not kept here (its task holds the message): only a bounded, escaped preview.
 */

/** A keyless caller's message waiting for the operator (its task is in TASK_STATE_AUTH_REQUIRED). */
export interface KnockRecord {
  /** Eight characters (XXXX-XXXX): the console names the knock by it, and the caller is told it. */
  code: string;
  /** The task the caller follows (its id is the caller's only credential to read it). */
  taskId: string;
  /** Whose task it is (`a2a-anon:<socket address>`). */
  owner: string;
  /** Where it called from, as the per-address caps count it (`fwd:<ip>` behind the tunnel, `local`). */
  address: string;
  /** The published skill whose door it knocked at; absent: the agent's own (chat). */
  skill?: string;
  contextId: string;
  /** What the caller says it is (message metadata): unverified, shown as claimed. */
  claimedName?: string;
  claimedCardUrl?: string;
  /** The start of its first message, escaped (lib/text.ts escapedLine) and bounded. */
  preview: string;
  /** The injection screen's rule that matched one of its messages (`flag`). */
  screened?: string;
  /** Messages parked (the first and its follow-ups) and their characters, each bounded. */
  messages: number;
  chars: number;
  firstAt: number;
  lastAt: number;
  expiresAt: number;
  /** The request it came in (for the traffic entry of the run an approval starts). */
  path: string;
  transport: 'jsonrpc' | 'rest';
}

/** A key issued on approval, until the caller reads its task once (then it is gone from memory and disk). */
export interface UnreadKey {
  taskId: string;
  owner: string;
  code: string;
  keyId: string;
  /** The key itself: kept only until read, in this 0600 file as in the keys' own (their hashes) beside it. */
  secret: string;
  skills?: string[];
  /** The key's own expiry, if it has one (ISO 8601). */
  expiresAt?: string;
  approvedAt: number;
  /** Unread by then (the caller never came back): dropped, and its key revoked (nobody holds it). */
  dropAt: number;
}

/** An address the operator turned down: refused at once, without a new knock, until `until`. */
interface BlockedAddress {
  address: string;
  until: number;
}

interface KnocksFile {
  waiting: KnockRecord[];
  unread: UnreadKey[];
  blocked: BlockedAddress[];
}

export interface KnocksOptions {
  now?: () => number;
  /** Knocks waiting at once (default 100, as SAMVAD's pending senders). */
  maxWaiting?: number;
  /** Knocks waiting at once from one address (default 3, as a SAMVAD sender's held tasks). */
  maxPerAddress?: number;
}

/** Why a knock was not taken. */
export type KnockRefusal =
  { reason: 'blocked'; until: number } | { reason: 'address'; max: number } | { reason: 'full'; max: number };

/** A request about a knock that cannot be done; the message and fix are for the operator. */
export class KnockError extends Error {
  constructor(
    readonly status: 400 | 404 | 409 | 503,
    message: string,
    readonly fix: string,
  ) {
    super(message);
    this.name = 'KnockError';
  }
}

export const KNOCKS_FILE = 'a2a-knocks.json';
/** Addresses kept as turned down (the operator's decisions; the oldest go first past this). */
const MAX_BLOCKED = 1000;

export class Knocks {
  private readonly waitingByCode = new Map<string, KnockRecord>();
  private readonly unreadByTask = new Map<string, UnreadKey>();
  private readonly blockedByAddress = new Map<string, number>();
  /** Knocks admitted and not yet added (their task is being written), per address and in all. */
  private readonly reserved = new Map<string, number>();
  private reservedAll = 0;
  private refusedCount = 0;
  private readonly path: string;
  private readonly now: () => number;
  readonly maxWaiting: number;
  readonly maxPerAddress: number;

  constructor(dataDir: string, options: KnocksOptions = {}) {
    this.path = join(dataDir, KNOCKS_FILE);
    this.now = options.now ?? Date.now;
    this.maxWaiting = options.maxWaiting ?? 100;
    this.maxPerAddress = options.maxPerAddress ?? 3;
    const file = readKnocksFile(this.path);
    for (const record of file.waiting) this.waitingByCode.set(record.code, record);
    for (const key of file.unread) this.unreadByTask.set(key.taskId, key);
    for (const { address, until } of file.blocked) this.blockedByAddress.set(address, until);
  }

  /** Knocks refused since start: past a bound or a rate, or from an address turned down. */
  get refused(): number {
    return this.refusedCount;
  }

  /** A knock refused elsewhere (its address's rate): counted with the others. */
  refusedOne(): void {
    this.refusedCount += 1;
  }

  waiting(): KnockRecord[] {
    return [...this.waitingByCode.values()];
  }

  get(code: string): KnockRecord | undefined {
    return this.waitingByCode.get(code);
  }

  /** The waiting knock whose task this is. */
  byTask(taskId: string): KnockRecord | undefined {
    for (const record of this.waitingByCode.values()) if (record.taskId === taskId) return record;
    return undefined;
  }

  /** Whether the caller of this task was approved and has not read its key yet. */
  hasUnreadKey(taskId: string): boolean {
    return this.unreadByTask.has(taskId);
  }

  /**
   * A place for a new knock from `address`, held until `add` (or the returned release, when its task could
   * not be written); or why not (counted, and nothing else done). Synchronous: concurrent knocks see each other.
   */
  admit(address: string): { release(): void } | KnockRefusal {
    const now = this.now();
    const until = this.blockedByAddress.get(address);
    const refusal: KnockRefusal | undefined =
      until !== undefined && until > now
        ? { reason: 'blocked', until }
        : this.countAt(address) >= this.maxPerAddress
          ? { reason: 'address', max: this.maxPerAddress }
          : this.waitingByCode.size + this.reservedAll >= this.maxWaiting
            ? { reason: 'full', max: this.maxWaiting }
            : undefined;
    if (refusal) {
      this.refusedCount += 1;
      return refusal;
    }
    this.reserved.set(address, (this.reserved.get(address) ?? 0) + 1);
    this.reservedAll += 1;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.reservedAll -= 1;
        const left = (this.reserved.get(address) ?? 1) - 1;
        if (left > 0) this.reserved.set(address, left);
        else this.reserved.delete(address);
      },
    };
  }

  /** A new knock (its place taken by `admit`, released here), with a fresh code. */
  add(record: Omit<KnockRecord, 'code'>, place: { release(): void }): KnockRecord {
    let code = knockCode();
    while (this.waitingByCode.has(code)) code = knockCode();
    const added: KnockRecord = { ...record, code };
    this.waitingByCode.set(code, added);
    place.release();
    try {
      this.save();
    } catch (error) {
      this.waitingByCode.delete(code);
      throw error;
    }
    return added;
  }

  /** A follow-up message parked with the knock (its task holds it). */
  followed(code: string, chars: number, screened?: string): void {
    const record = this.waitingByCode.get(code);
    if (!record) return;
    record.messages += 1;
    record.chars += chars;
    record.lastAt = this.now();
    record.screened ??= screened;
    this.save();
  }

  /**
   * The operator approved the knock: it leaves the list, and the key issued for it waits for its caller's
   * first read of the task. Throws (404) when it no longer waits (decided meanwhile, withdrawn, expired).
   */
  approve(code: string, key: Omit<UnreadKey, 'taskId' | 'owner' | 'code' | 'approvedAt'>): KnockRecord {
    const record = this.waitingByCode.get(code);
    if (!record) throw notWaiting(code);
    this.waitingByCode.delete(code);
    const unread: UnreadKey = {
      taskId: record.taskId,
      owner: record.owner,
      code,
      approvedAt: this.now(),
      ...key,
    };
    this.unreadByTask.set(record.taskId, unread);
    this.save();
    return record;
  }

  /** The operator turned the knock down: its address may not knock again for `blockMs`. */
  deny(code: string, blockMs: number): KnockRecord {
    const record = this.waitingByCode.get(code);
    if (!record) throw notWaiting(code);
    this.waitingByCode.delete(code);
    this.block(record.address, this.now() + blockMs);
    this.save();
    return record;
  }

  /** The caller canceled its knock's task: it leaves the list (no decision is needed any more). */
  withdraw(taskId: string): KnockRecord | undefined {
    const record = this.byTask(taskId);
    if (!record) return undefined;
    this.waitingByCode.delete(record.code);
    this.save();
    return record;
  }

  /**
   * The key issued for this task, taken: the one read it is shown in. Only its owner's read takes it. Gone
   * from memory before the file is written, so no second read here can show it, whatever the disk does; a
   * file that cannot be written then is reported (it still holds the key until the next write), and the
   * read still gets the key: losing it would leave its caller with nothing.
   */
  claim(taskId: string, owner: string): UnreadKey | undefined {
    const unread = this.unreadByTask.get(taskId);
    if (!unread || unread.owner !== owner) return undefined;
    this.unreadByTask.delete(taskId);
    try {
      this.save();
    } catch (error) {
      // A file system's message names the path, never what the file holds.
      console.error(`Access: ${KNOCKS_FILE} could not be written: ${(error as Error).message}`);
    }
    return unread;
  }

  /** Expired knocks leave the list, unread keys past their time are dropped; both returned. */
  sweep(): { expired: KnockRecord[]; dropped: UnreadKey[] } {
    const now = this.now();
    const expired = [...this.waitingByCode.values()].filter((record) => record.expiresAt <= now);
    for (const record of expired) this.waitingByCode.delete(record.code);
    const dropped = [...this.unreadByTask.values()].filter((key) => key.dropAt <= now);
    for (const key of dropped) this.unreadByTask.delete(key.taskId);
    let unblocked = false;
    for (const [address, until] of this.blockedByAddress) {
      if (until > now) continue;
      this.blockedByAddress.delete(address);
      unblocked = true;
    }
    if (expired.length > 0 || dropped.length > 0 || unblocked) this.save();
    return { expired, dropped };
  }

  private countAt(address: string): number {
    let count = this.reserved.get(address) ?? 0;
    for (const record of this.waitingByCode.values()) if (record.address === address) count += 1;
    return count;
  }

  private block(address: string, until: number): void {
    this.blockedByAddress.delete(address);
    this.blockedByAddress.set(address, until);
    // Insertion order is decision order: the oldest decision goes first.
    while (this.blockedByAddress.size > MAX_BLOCKED) {
      const oldest = this.blockedByAddress.keys().next().value;
      if (oldest === undefined) break;
      this.blockedByAddress.delete(oldest);
    }
  }

  private save(): void {
    const file: KnocksFile = {
      waiting: [...this.waitingByCode.values()],
      unread: [...this.unreadByTask.values()],
      blocked: [...this.blockedByAddress].map(([address, until]) => ({ address, until })),
    };
    writeFileAtomic(this.path, JSON.stringify(file));
  }
}

function notWaiting(code: string): KnockError {
  return new KnockError(
    404,
    `No knock ${code.slice(0, 20)} waits for a decision: it was decided, withdrawn by its caller, or it expired.`,
    'Pick a knock from the list (GET /api/a2a/knocks).',
  );
}

function readKnocksFile(path: string): KnocksFile {
  let saved: Partial<KnocksFile> | undefined;
  try {
    saved = readJsonFile<Partial<KnocksFile>>(path);
  } catch (error) {
    // A damaged file must not silently drop knocks (or keys approved and not yet read): say what to do.
    if (error instanceof CorruptFileError) {
      throw new Error(
        `${path} ${error.detail}: it lists the A2A callers waiting for your approval. Fix it, or delete it (they then knock again).`,
        { cause: error },
      );
    }
    throw error;
  }
  const list = <T>(value: unknown, valid: (item: Record<string, unknown>) => boolean): T[] =>
    Array.isArray(value)
      ? (value.filter((item) => item && typeof item === 'object' && valid(item as never)) as T[])
      : [];
  const text = (value: unknown) => typeof value === 'string' && value.length > 0;
  const count = (value: unknown) => typeof value === 'number' && Number.isFinite(value);
  return {
    waiting: list<KnockRecord>(
      saved?.waiting,
      (r) => text(r.code) && text(r.taskId) && text(r.owner) && text(r.address) && count(r.expiresAt),
    ),
    unread: list<UnreadKey>(
      saved?.unread,
      (r) => text(r.taskId) && text(r.owner) && text(r.keyId) && text(r.secret) && count(r.dropAt),
    ),
    blocked: list<BlockedAddress>(saved?.blocked, (r) => text(r.address) && count(r.until)),
  };
}

// Eight characters from an alphabet without look-alikes (no 0/O, 1/I/L), shown as XXXX-XXXX (as SAMVAD's
// request codes).
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
function knockCode(): string {
  const chars = [...randomBytes(8)].map((byte) => CODE_ALPHABET[byte % CODE_ALPHABET.length]);
  return `${chars.slice(0, 4).join('')}-${chars.slice(4).join('')}`;
}
