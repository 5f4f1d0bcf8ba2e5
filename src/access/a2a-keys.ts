import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { printable } from '../lib/text.js';
import type { A2AKeyLimits, A2AKeyView } from '../protocol/console-api.js';
import { ProtocolError } from '../protocol/index.js';
import { skillScope } from './skill-scope.js';
import type { A2AKeyEntry, A2AKeyRecords, StoredA2AKey, UsageBatch } from '../state/a2a-key-store.js';
import type { Awaitable } from '../state/tasks.js';

/**
 * Operator-issued A2A keys: A2A has no per-request signatures, so a caller proves who it is with a key the
 * operator gave it. A key is `abk_<id>_<secret>`: the prefix makes a leaked key easy to find (grep, secret
 * scanners), the id (12 hex digits, not secret) names it in lists and logs, the secret is 32 random bytes
 * (256 bits). It is shown once, when issued; only its SHA-256 is kept.
 *
 * Why SHA-256 and not a slow KDF (scrypt, argon2): those make guessing a low-entropy secret (a password)
 * from a stolen hash expensive. Nobody guesses 256 random bits, fast hash or not; and a slow hash on every
 * request would hand anyone who sends keys a way to burn the agent's CPU.
 */
export const A2A_KEY_PREFIX = 'abk_';
const KEY_TEXT = /^abk_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/;
const KEY_ID = /^[0-9a-f]{12}$/;

export const MAX_NAME_LENGTH = 100;
/** Keys in use at once (not revoked, not expired): past it the operator revokes some first. */
export const MAX_ACTIVE_KEYS = 1000;
/** Revoked and expired keys stay listed (and refused by name) this long, then are dropped. */
const KEEP_DEAD_MS = 30 * 86_400_000;
/** How long the keys read for a count are trusted when no change is heard of (an announcement missed). */
const COUNT_TRUST_MS = 10_000;
/** The farthest expiry a key can have (none at all is the operator's other choice). */
const MAX_EXPIRY_MS = 10 * 365 * 86_400_000;
export const LIMIT_RANGES = {
  requestsPerMinute: [1, 1_000_000],
  tokensPerDay: [1, 1_000_000_000],
} as const;

/** The caller a key makes, for access lists, limits, budget, sessions, tasks and traffic. */
export const a2aKeyCaller = (id: string): string => `a2a-key:${id}`;

/** The key id in `text`: the id itself, or a whole key (a leaked one, pasted to revoke it). */
export function keyIdOf(text: string): string | undefined {
  const trimmed = text.trim();
  if (KEY_ID.test(trimmed)) return trimmed;
  return KEY_TEXT.exec(trimmed)?.[1];
}

/**
 * Why a key was refused; the message is for the caller and says what to do. A revoked or expired key that
 * matched its record comes with that record, for the operator's log to name who still uses it: only the
 * key's holder can send it (an id alone, which anyone may copy from a log, names no one).
 */
export type KeyRefusal = 'malformed' | 'unknown' | 'revoked' | 'expired';
export type KeyVerdict =
  { ok: true; key: StoredA2AKey } | { ok: false; refusal: KeyRefusal; message: string; key?: StoredA2AKey };

/** A request about keys that cannot be done; the message, fix and fields are for the operator. */
export class A2AKeyError extends Error {
  constructor(
    readonly status: 400 | 404 | 409 | 503,
    message: string,
    readonly fix: string,
    readonly fields?: { field: string; message: string }[],
  ) {
    super(message);
    this.name = 'A2AKeyError';
  }
}

export interface A2AKeysOptions {
  records: A2AKeyRecords;
  /**
   * Why the keys cannot be read or changed now (shared state that does not answer), if so: a key issued or
   * revoked then would hold at this replica only, so the change is refused and made again later.
   */
  unavailable?(): string | undefined;
  /** The keys changed, here or (announced) at another replica: the console reloads them. */
  onChange?(): void;
  now?: () => number;
  /** How long a key read from the store is trusted (a revocation announcement missed): default 1 s. */
  cacheMs?: number;
  /** How often usage (calls, last use) is written: counted in memory meanwhile. Default 5 s. */
  usageFlushMs?: number;
  /** The skills there are (chat and the skills setting, paused ones too): a scope names only these. */
  skills?(): string[];
}

/**
 * Issues, lists, revokes and verifies A2A keys over a store (data dir or Redis). Verifying reads the store
 * of record, trusting what it read for at most `cacheMs`, so a revocation anywhere is effective everywhere
 * within that bound even when its announcement is missed; at the replica that revoked, at once.
 */
export class A2AKeys {
  private readonly records: A2AKeyRecords;
  private readonly now: () => number;
  private readonly cacheMs: number;
  private readonly usageFlushMs: number;
  /** Lookups by key id (in flight or done), each trusted until `until`. Only found keys stay. */
  private readonly cache = new Map<string, { until: number; key: Promise<StoredA2AKey | undefined> }>();
  /** The keys as last read for activeCount, trusted until `until` or the next change. */
  private counted: { until: number; keys: StoredA2AKey[] } | undefined;
  /** Bumped at each change: a read begun before one is not kept for counting. */
  private changes = 0;
  private unwritten: UsageBatch = new Map();
  private writing: UsageBatch = new Map();
  private flushTimer: NodeJS.Timeout | undefined;
  private warnedUsage = false;
  private closed = false;
  private readonly unsubscribe: () => void;

  constructor(private readonly options: A2AKeysOptions) {
    this.records = options.records;
    this.now = options.now ?? Date.now;
    this.cacheMs = options.cacheMs ?? 1000;
    this.usageFlushMs = options.usageFlushMs ?? 5000;
    this.unsubscribe =
      this.records.onChange?.(() => {
        this.cache.clear();
        this.forgetCount();
        options.onChange?.();
      }) ?? (() => undefined);
  }

  /**
   * A new key for `input.name`, with an optional expiry and limits (validated here: the console's body and
   * the CLI's flags alike). Returns its view and the key itself, which nothing ever shows again.
   */
  async issue(input: unknown): Promise<{ key: A2AKeyView; secret: string }> {
    const request = validIssue(input, this.now(), this.options.skills?.());
    this.checkAvailable('Not issued');
    const now = this.now();
    const entries = await this.store('read', () => this.records.list());
    if (entries.filter((entry) => keyStatus(entry, now) === 'active').length >= MAX_ACTIVE_KEYS) {
      throw new A2AKeyError(
        409,
        `There are ${MAX_ACTIVE_KEYS} A2A keys in use, the most this agent keeps.`,
        'Revoke the keys no longer needed (console Access page, or `agent-bridge keys revoke ID`), then issue again.',
      );
    }
    const dead = entries.filter((entry) => (deadSince(entry, now) ?? now) < now - KEEP_DEAD_MS);
    if (dead.length > 0) {
      this.forgetCount();
      await this.store('save', () => this.records.remove(dead.map((entry) => entry.id)));
    }
    // 48-bit ids: a collision is rare enough that a few in a row mean something else is wrong.
    for (let attempt = 0; attempt < 3; attempt++) {
      const id = randomBytes(6).toString('hex');
      const secret = `${A2A_KEY_PREFIX}${id}_${randomBytes(32).toString('base64url')}`;
      const key: StoredA2AKey = { id, hash: digest(secret), createdAt: now, ...request };
      if (await this.store('save', () => this.records.add(key))) {
        this.forgetCount();
        this.options.onChange?.();
        return { key: keyView({ ...key, calls: 0 }, now), secret };
      }
    }
    throw new Error('No free A2A key id after three draws');
  }

  /** Every key, newest first, with the usage counted here and not yet written. */
  async list(): Promise<A2AKeyView[]> {
    this.checkAvailable('Cannot list the A2A keys');
    const now = this.now();
    const entries = await this.store('read', () => this.records.list());
    return entries
      .map((entry) => withUsage(entry, this.writing, this.unwritten))
      .sort((a, b) => b.createdAt - a.createdAt)
      .map((entry) => keyView(entry, now));
  }

  /**
   * How many keys callers may use now, for the console's status poll: the store is read once per change
   * (here, or announced by another process) and at most every COUNT_TRUST_MS, not at every poll; expiries
   * are counted at each call. Throws an A2AKeyError (503) when the keys cannot be read.
   */
  async activeCount(): Promise<number> {
    this.checkAvailable('Cannot count the A2A keys');
    let counted = this.counted;
    if (!counted || counted.until <= this.now()) {
      const changes = this.changes;
      const keys = await this.store('read', () => this.records.list());
      counted = { until: this.now() + COUNT_TRUST_MS, keys };
      if (changes === this.changes) this.counted = counted;
    }
    const now = this.now();
    return counted.keys.filter((key) => keyStatus(key, now) === 'active').length;
  }

  /** Revokes a key now: refused from the next request on, here at once and at every replica within 1 s. */
  async revoke(id: string): Promise<A2AKeyView> {
    if (typeof id !== 'string' || !KEY_ID.test(id)) {
      throw new A2AKeyError(
        400,
        'A key is named by its id: 12 hex digits, as the list shows it.',
        'Pick a key from the list (GET /api/a2a/keys, or `agent-bridge keys list`).',
      );
    }
    this.checkAvailable('Not revoked');
    const key = await this.store('save', () => this.records.revoke(id, this.now()));
    this.cache.delete(id);
    this.forgetCount();
    if (!key) {
      throw new A2AKeyError(
        404,
        `No A2A key has the id ${id}.`,
        'Pick a key from the list (GET /api/a2a/keys, or `agent-bridge keys list`).',
      );
    }
    this.options.onChange?.();
    const entry = (await this.store('read', () => this.records.list())).find((each) => each.id === id);
    return keyView(withUsage(entry ?? { ...key, calls: 0 }, this.writing, this.unwritten), this.now());
  }

  /**
   * The key `text` is, or why it is refused. Constant time: the key's id (not secret) finds its record, and
   * the SHA-256 of what was sent is compared with the stored one in constant time. Even a plain comparison
   * (or a lookup by hash) would be safe: timing could at most tell how much of the *hash* of an attacker's
   * own guess matches, and SHA-256's preimage resistance leaves no way from that to a key.
   * Throws a ProtocolError (503) when the store does not answer: a key is never taken unchecked.
   */
  async verify(text: string): Promise<KeyVerdict> {
    const id = KEY_TEXT.exec(text)?.[1];
    if (!id) {
      return refused(
        'malformed',
        "The bearer token is not an A2A key (they look like abk_...): send the key this agent's operator gave you, as `Authorization: Bearer abk_...`.",
      );
    }
    let key: StoredA2AKey | undefined;
    try {
      key = await this.lookup(id);
    } catch (error) {
      throw new ProtocolError(
        'AGENT_UNAVAILABLE',
        503,
        'This agent cannot check A2A keys right now; retry shortly.',
        { step: 'access', retryAfterSeconds: 2, cause: error },
      );
    }
    if (!key || !sameHash(digest(text), key.hash)) {
      return refused(
        'unknown',
        "This A2A key is not one this agent's operator issued (or it was mistyped): check it, or ask the operator for a new key.",
      );
    }
    const now = this.now();
    if (key.revokedAt !== undefined) {
      return refused(
        'revoked',
        "This A2A key was revoked by this agent's operator: ask the operator for a new one.",
        key,
      );
    }
    if (key.expiresAt !== undefined && key.expiresAt <= now) {
      return refused(
        'expired',
        `This A2A key expired on ${new Date(key.expiresAt).toISOString()}: ask this agent's operator for a new one.`,
        key,
      );
    }
    this.noteUse(id, now);
    return { ok: true, key };
  }

  /** Writes the usage counted since the last write; kept for the next one when the store fails. */
  async flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.unwritten.size === 0) return;
    const batch = (this.writing = this.unwritten);
    this.unwritten = new Map();
    try {
      await this.records.addUsage(batch);
      this.warnedUsage = false;
    } catch (error) {
      for (const [id, use] of batch) addUse(this.unwritten, id, use.calls, use.lastUsedAt);
      if (!this.closed) this.flushTimer ??= setTimeout(() => void this.flush(), 1000).unref();
      if (!this.warnedUsage) {
        this.warnedUsage = true;
        console.error(
          `Agent: could not save the A2A keys' usage (${(error as Error).message}); kept, and written when it can be.`,
        );
      }
    } finally {
      this.writing = new Map();
    }
  }

  /** The last usage written (a failure is only reported); no timer or subscription is left behind. */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe();
    await this.flush();
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
  }

  private lookup(id: string): Promise<StoredA2AKey | undefined> {
    const now = this.now();
    const cached = this.cache.get(id);
    if (cached && cached.until > now) return cached.key;
    // One read per key at a time, however many requests present it meanwhile.
    const entry = { until: now + this.cacheMs, key: Promise.resolve().then(() => this.records.get(id)) };
    this.cache.set(id, entry);
    const drop = () => {
      if (this.cache.get(id) === entry) this.cache.delete(id);
    };
    entry.key.then((found) => (found ? undefined : drop()), drop);
    return entry.key;
  }

  private noteUse(id: string, at: number): void {
    addUse(this.unwritten, id, 1, at);
    if (!this.closed) this.flushTimer ??= setTimeout(() => void this.flush(), this.usageFlushMs).unref();
  }

  private forgetCount(): void {
    this.changes++;
    this.counted = undefined;
  }

  private checkAvailable(what: string): void {
    const problem = this.options.unavailable?.();
    if (problem) throw new A2AKeyError(503, `${what}: ${problem}`, 'Try again once Redis answers.');
  }

  private async store<T>(what: 'read' | 'save', action: () => Awaitable<T>): Promise<T> {
    try {
      return await action();
    } catch (error) {
      // Store messages (a file system's, Redis's) name a path or a connection, never a key or its hash.
      const verb = what === 'read' ? 'read' : 'saved';
      throw new A2AKeyError(
        503,
        `The A2A keys could not be ${verb}: ${(error as Error).message}`,
        'Check the data directory (or Redis) and try again.',
      );
    }
  }
}

export function keyStatus(key: StoredA2AKey, now: number): A2AKeyView['status'] {
  if (key.revokedAt !== undefined) return 'revoked';
  return key.expiresAt !== undefined && key.expiresAt <= now ? 'expired' : 'active';
}

function deadSince(key: StoredA2AKey, now: number): number | undefined {
  const status = keyStatus(key, now);
  return status === 'revoked' ? key.revokedAt : status === 'expired' ? key.expiresAt : undefined;
}

function keyView(entry: A2AKeyEntry, now: number): A2AKeyView {
  const iso = (time: number) => new Date(time).toISOString();
  return {
    id: entry.id,
    name: entry.name,
    caller: a2aKeyCaller(entry.id),
    createdAt: iso(entry.createdAt),
    ...(entry.expiresAt === undefined ? {} : { expiresAt: iso(entry.expiresAt) }),
    limits: { ...entry.limits },
    ...(entry.lastUsedAt === undefined ? {} : { lastUsedAt: iso(entry.lastUsedAt) }),
    calls: entry.calls,
    ...(entry.revokedAt === undefined ? {} : { revokedAt: iso(entry.revokedAt) }),
    status: keyStatus(entry, now),
    ...(entry.skills ? { skills: [...entry.skills] } : {}),
  };
}

function withUsage(entry: A2AKeyEntry, ...batches: UsageBatch[]): A2AKeyEntry {
  const merged = { ...entry };
  for (const use of batches.map((batch) => batch.get(entry.id))) {
    if (!use) continue;
    merged.calls += use.calls;
    merged.lastUsedAt = Math.max(merged.lastUsedAt ?? 0, use.lastUsedAt);
  }
  return merged;
}

function addUse(batch: UsageBatch, id: string, calls: number, at: number): void {
  const use = batch.get(id);
  if (use) {
    use.calls += calls;
    use.lastUsedAt = Math.max(use.lastUsedAt, at);
  } else batch.set(id, { calls, lastUsedAt: at });
}

function refused(refusal: KeyRefusal, message: string, key?: StoredA2AKey): KeyVerdict {
  return key ? { ok: false, refusal, message, key } : { ok: false, refusal, message };
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'base64url');
  const right = Buffer.from(b, 'base64url');
  return left.length === right.length && timingSafeEqual(left, right);
}

type IssueRequest = Pick<StoredA2AKey, 'name' | 'expiresAt' | 'limits' | 'skills'>;
type FieldProblem = { field: string; message: string };

/** The operator's request, checked whole: every field's problem at once, each saying what it takes. */
function validIssue(input: unknown, now: number, skills: string[] | undefined): IssueRequest {
  if (!input || typeof input !== 'object' || Array.isArray(input)) {
    throw new A2AKeyError(
      400,
      'The body must be a JSON object.',
      'Send {"name": "the agent it is for"}, with "expiresAt", "limits" and "skills" if you want them.',
    );
  }
  const body = input as Record<string, unknown>;
  const problems: FieldProblem[] = [];
  for (const field of Object.keys(body)) {
    if (!['name', 'expiresAt', 'limits', 'skills'].includes(field))
      problems.push({ field, message: 'is not a key setting: use name, expiresAt, limits and skills' });
  }
  const name = typeof body.name === 'string' ? body.name.trim() : '';
  if (!name || name.length > MAX_NAME_LENGTH || printable(name) !== name || /[\u2028\u2029]/.test(name)) {
    problems.push({
      field: 'name',
      message: `must be one line of 1 to ${MAX_NAME_LENGTH} characters: the agent the key is for`,
    });
  }
  let expiresAt: number | undefined;
  if (body.expiresAt !== undefined && body.expiresAt !== null) {
    const time =
      typeof body.expiresAt === 'string' && /^\d{4}-\d\d-\d\d/.test(body.expiresAt)
        ? Date.parse(body.expiresAt)
        : Number.NaN;
    if (!(time > now) || time > now + MAX_EXPIRY_MS) {
      problems.push({
        field: 'expiresAt',
        message:
          'must be a date and time in the future (ISO 8601), at most 10 years ahead; leave it out for none',
      });
    } else expiresAt = time;
  }
  const limits: A2AKeyLimits = {};
  if (body.limits !== undefined && body.limits !== null) {
    if (typeof body.limits !== 'object' || Array.isArray(body.limits)) {
      problems.push({ field: 'limits', message: 'must be {"requestsPerMinute": N, "tokensPerDay": N}' });
    } else {
      for (const [field, value] of Object.entries(body.limits as Record<string, unknown>)) {
        const range = LIMIT_RANGES[field as keyof typeof LIMIT_RANGES] as
          readonly [number, number] | undefined;
        if (!range) {
          problems.push({
            field: `limits.${field}`,
            message: 'is not a limit: use requestsPerMinute and tokensPerDay',
          });
        } else if (value === undefined || value === null) {
          continue;
        } else if (
          !Number.isSafeInteger(value) ||
          (value as number) < range[0] ||
          (value as number) > range[1]
        ) {
          problems.push({
            field: `limits.${field}`,
            message: `must be a whole number from ${range[0]} to ${range[1].toLocaleString('en-US')}; leave it out for the default`,
          });
        } else limits[field as keyof A2AKeyLimits] = value as number;
      }
    }
  }
  const scope = skillScope(body.skills, skills);
  if (typeof scope === 'string') problems.push({ field: 'skills', message: scope });
  if (problems.length > 0) {
    throw new A2AKeyError(
      400,
      `The key was not issued: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}.`,
      'Correct the fields named and issue again.',
      problems,
    );
  }
  return {
    name,
    ...(expiresAt === undefined ? {} : { expiresAt }),
    limits,
    ...(Array.isArray(scope) ? { skills: scope } : {}),
  };
}
