import { statSync } from 'node:fs';
import { join } from 'node:path';
import { CorruptFileError, errorCode, readJsonFile, writeFileAtomic } from '../lib/atomic-file.js';
import type { A2AKeyLimits } from '../protocol/console-api.js';
import { isSkillId } from '../protocol/skill-ids.js';
import type { Awaitable } from './tasks.js';

/** An A2A key as kept: never the key itself, only its SHA-256 (src/access/a2a-keys.ts says why that is enough). */
export interface StoredA2AKey {
  /** 12 hex digits, also in the key's text (`abk_<id>_...`): not secret. */
  id: string;
  name: string;
  /** SHA-256 of the key's whole text, base64url. */
  hash: string;
  createdAt: number;
  expiresAt?: number;
  revokedAt?: number;
  limits: A2AKeyLimits;
  /**
   * The skills the key opens, exactly (calls/skill-access.ts); absent: every public and approved skill. A
   * key that names a skill opens it even when the skill is `named`.
   */
  skills?: string[];
}

export interface A2AKeyUsage {
  calls: number;
  lastUsedAt?: number;
}

export type A2AKeyEntry = StoredA2AKey & A2AKeyUsage;

/** Usage one process counted since its last write, per key id: calls to add, and the latest use. */
export type UsageBatch = Map<string, { calls: number; lastUsedAt: number }>;

/**
 * Where the operator's A2A keys live: `a2a-keys.json` in the data dir, or Redis, where every replica reads
 * the same keys. Records are whole values: a key is written when issued, and after that only its revocation
 * (the first one stands) and its usage change. The data-dir version answers at once; callers await either.
 */
export interface A2AKeyRecords {
  /** Adds a new key; false when its id is taken (the caller draws another). */
  add(key: StoredA2AKey): Awaitable<boolean>;
  get(id: string): Awaitable<StoredA2AKey | undefined>;
  /** Every key, with its usage. */
  list(): Awaitable<A2AKeyEntry[]>;
  /** Marks the key revoked at `at` unless it is already (then its first revocation stands); undefined: unknown. */
  revoke(id: string, at: number): Awaitable<StoredA2AKey | undefined>;
  /** Adds the usage counted since the last write (keys no longer kept are skipped). */
  addUsage(batch: UsageBatch): Awaitable<void>;
  /** Forgets keys (long revoked or expired). */
  remove(ids: string[]): Awaitable<void>;
  /**
   * Calls `listener` when another process changed the keys, where that is announced (Redis: another replica,
   * or the CLI); returns how to stop. Each reader also bounds how long it trusts what it read.
   */
  onChange?(listener: () => void): () => void;
}

export const A2A_KEYS_FILE = 'a2a-keys.json';

interface KeysFile {
  keys: A2AKeyEntry[];
}

/**
 * The data-dir version: `<dataDir>/a2a-keys.json` (0600, written atomically). The file is the record, not
 * this object: every operation first reads it again if another process (the `agent-bridge keys` command when
 * no agent answered, another agent on the same data dir) replaced it since, which costs one stat when it did
 * not. Each change is a read, a change and an atomic write of the whole file.
 */
export class A2AKeyFile implements A2AKeyRecords {
  readonly path: string;
  private keys = new Map<string, A2AKeyEntry>();
  /** Which file the keys were read from: inode, change time and size (a rename gives a new inode). */
  private readFrom: string | undefined;

  constructor(dataDir: string) {
    this.path = join(dataDir, A2A_KEYS_FILE);
    this.refresh();
  }

  add(key: StoredA2AKey): boolean {
    this.refresh();
    if (this.keys.has(key.id)) return false;
    this.keys.set(key.id, { ...key, calls: 0 });
    this.save();
    return true;
  }

  get(id: string): StoredA2AKey | undefined {
    this.refresh();
    const entry = this.keys.get(id);
    return entry && withoutUsage(entry);
  }

  list(): A2AKeyEntry[] {
    this.refresh();
    return [...this.keys.values()].map((entry) => ({
      ...entry,
      limits: { ...entry.limits },
      ...(entry.skills ? { skills: [...entry.skills] } : {}),
    }));
  }

  revoke(id: string, at: number): StoredA2AKey | undefined {
    this.refresh();
    const entry = this.keys.get(id);
    if (!entry) return undefined;
    if (entry.revokedAt === undefined) {
      entry.revokedAt = at;
      this.save();
    }
    return withoutUsage(entry);
  }

  addUsage(batch: UsageBatch): void {
    this.refresh();
    let changed = false;
    for (const [id, use] of batch) {
      const entry = this.keys.get(id);
      if (!entry) continue;
      entry.calls += use.calls;
      entry.lastUsedAt = Math.max(entry.lastUsedAt ?? 0, use.lastUsedAt);
      changed = true;
    }
    if (changed) this.save();
  }

  remove(ids: string[]): void {
    this.refresh();
    if (ids.filter((id) => this.keys.delete(id)).length > 0) this.save();
  }

  private refresh(): void {
    const signature = fileSignature(this.path);
    if (signature === this.readFrom) return;
    this.keys = new Map(readA2AKeysFile(this.path).map((entry) => [entry.id, entry]));
    this.readFrom = signature;
  }

  private save(): void {
    const file: KeysFile = { keys: [...this.keys.values()] };
    writeFileAtomic(this.path, `${JSON.stringify(file, null, 2)}\n`, 0o600);
    this.readFrom = fileSignature(this.path);
  }
}

/** The keys in a data dir's file (none when it does not exist); throws, saying what to do, when it is corrupt. */
export function readA2AKeysFile(path: string): A2AKeyEntry[] {
  let saved: Partial<KeysFile> | undefined;
  try {
    saved = readJsonFile<Partial<KeysFile>>(path);
  } catch (error) {
    // A torn or hand-edited file must not silently forget a revocation: it stops the agent, and says why.
    if (error instanceof CorruptFileError) {
      throw new Error(
        `${path} ${error.detail}: it lists the A2A keys you issued. Fix it, or delete it (every A2A key then stops working: issue new ones).`,
        { cause: error },
      );
    }
    throw error;
  }
  const keys = Array.isArray(saved?.keys) ? (saved.keys as unknown[]) : [];
  return keys.flatMap((value) => {
    const key = validStoredKey(value);
    if (!key) return [];
    const { calls, lastUsedAt } = value as Partial<A2AKeyUsage>;
    return [
      {
        ...key,
        calls: isCount(calls) ? calls : 0,
        ...(isTime(lastUsedAt) ? { lastUsedAt } : {}),
      },
    ];
  });
}

/**
 * A stored key, as far as it is valid, else undefined. A hand-edited record that is not whole is dropped,
 * which refuses its key: nothing here can make a key valid that was not issued.
 */
export function validStoredKey(value: unknown): StoredA2AKey | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const r = value as Record<string, unknown>;
  if (typeof r.id !== 'string' || !/^[0-9a-f]{12}$/.test(r.id)) return undefined;
  if (typeof r.name !== 'string' || typeof r.hash !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(r.hash))
    return undefined;
  if (!isTime(r.createdAt)) return undefined;
  if (r.expiresAt !== undefined && !isTime(r.expiresAt)) return undefined;
  if (r.revokedAt !== undefined && !isTime(r.revokedAt)) return undefined;
  const limits = validLimits(r.limits);
  if (!limits) return undefined;
  // A scope that is not a list of skill ids would open what the operator did not name: the key is refused.
  if (r.skills !== undefined && !(Array.isArray(r.skills) && r.skills.every(isSkillId))) return undefined;
  return {
    id: r.id,
    name: r.name,
    hash: r.hash,
    createdAt: r.createdAt,
    ...(r.expiresAt === undefined ? {} : { expiresAt: r.expiresAt as number }),
    ...(r.revokedAt === undefined ? {} : { revokedAt: r.revokedAt as number }),
    limits,
    ...(r.skills === undefined ? {} : { skills: [...(r.skills as string[])] }),
  };
}

function validLimits(value: unknown): A2AKeyLimits | undefined {
  if (value === undefined) return {};
  if (!value || typeof value !== 'object') return undefined;
  const { requestsPerMinute, tokensPerDay } = value as Record<string, unknown>;
  const limit = (n: unknown) => n === undefined || (Number.isSafeInteger(n) && (n as number) > 0);
  if (!limit(requestsPerMinute) || !limit(tokensPerDay)) return undefined;
  return {
    ...(requestsPerMinute === undefined ? {} : { requestsPerMinute: requestsPerMinute as number }),
    ...(tokensPerDay === undefined ? {} : { tokensPerDay: tokensPerDay as number }),
  };
}

function withoutUsage(entry: A2AKeyEntry): StoredA2AKey {
  const { calls: _calls, lastUsedAt: _lastUsedAt, ...key } = entry;
  return { ...key, limits: { ...key.limits }, ...(key.skills ? { skills: [...key.skills] } : {}) };
}

const isTime = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

function fileSignature(path: string): string {
  try {
    const stat = statSync(path, { bigint: true });
    return `${stat.ino}:${stat.ctimeNs}:${stat.size}`;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return 'missing';
    throw error;
  }
}
