import type { KeyObject } from 'node:crypto';
import { join } from 'node:path';
import { inspect } from 'node:util';
import {
  CorruptFileError,
  ensureDir,
  errorCode,
  readJsonFile,
  restrictFileMode,
  writeFileAtomic,
} from '../lib/atomic-file.js';
import {
  createSigner,
  generateRawKeyPair,
  privateKeyFromRaw,
  publicKeyFromRaw,
  type KeyView,
  type PublicKeyEntry,
  type Signer,
} from '../protocol/index.js';
import { KEY_FILE_NAME, newKid, parseKeyFile, type KeyFileData, type StoredKey } from './key-file.js';

/** What the operator API may show about a key (the console's KeyView): never private material. */
export type KeyInfo = KeyView;

export type KeyStoreErrorCode = 'unknown-kid' | 'corrupt' | 'unreadable' | 'unwritable' | 'invalid';

/** A keystore failure whose message says what to do. It never contains key material. */
export class KeyStoreError extends Error {
  constructor(
    readonly code: KeyStoreErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'KeyStoreError';
  }
}

export interface KeyStoreOptions {
  cardTTLSeconds: number;
  now?: () => number;
  /** The key file; default `<dataDir>/keys.json`. Replicas share one (on shared storage). */
  path?: string;
}

/**
 * The agent's Ed25519 identity in `<dataDir>/keys.json` (mode 0600, written atomically).
 * Private keys live only in `#` fields: no getter, JSON form or inspect output reaches them.
 */
export class KeyStore {
  readonly #path: string;
  readonly #now: () => number;
  readonly #listeners = new Set<() => void>();
  #cardTTL: number;
  // A lowered cardTTL: cards served before the change may stay cached for the old, longer TTL.
  #previousTTL: { seconds: number; until: number } | undefined;
  #data: KeyFileData;
  readonly #publicKeys = new Map<string, KeyObject>();
  #signer: Signer;

  private constructor(path: string, data: KeyFileData, options: KeyStoreOptions) {
    this.#path = path;
    this.#now = options.now ?? Date.now;
    this.#cardTTL = checkTTL(options.cardTTLSeconds);
    this.#data = data;
    this.#indexPublicKeys(data);
    this.#signer = signerOf(data);
  }

  /** Loads the keystore, creating the directory (0700) and a first key on first start. */
  static open(dataDir: string, options: KeyStoreOptions): KeyStore {
    const now = options.now ?? Date.now;
    checkTTL(options.cardTTLSeconds);
    ensureDir(dataDir);
    const path = options.path ?? join(dataDir, KEY_FILE_NAME);
    const existing = loadKeyFile(path);
    if (existing) return new KeyStore(path, existing, options);
    const first = initialKeyFile(now());
    saveKeyFile(path, first);
    return new KeyStore(path, first, options);
  }

  /** The current signing key, as a closure that hides the private key. */
  get signer(): Signer {
    return this.#signer;
  }

  /** For the card: every key ever published, `active` as of now. */
  publicKeys(): PublicKeyEntry[] {
    const now = this.#now();
    return this.#data.keys.map((key) => ({ kid: key.kid, key: key.publicKey, active: isActive(key, now) }));
  }

  /** For the operator API. */
  list(): KeyInfo[] {
    const now = this.#now();
    return this.#data.keys.map((key) => this.#info(key, now));
  }

  /** Verifies signatures that claim our own id; an inactive key must make them fail. */
  verificationKey(kid: string): { key: KeyObject; active: boolean } | undefined {
    const entry = this.#data.keys.find((key) => key.kid === kid);
    const key = this.#publicKeys.get(kid);
    if (!entry || !key) return undefined;
    return { key, active: isActive(entry, this.#now()) };
  }

  /** A new signing key; the old one stays listed and active for one cardTTL, so cached cards still verify. */
  rotate(): KeyInfo {
    const now = this.#now();
    const next = this.#rotated(this.#data, now);
    this.#commit(next);
    this.#emit();
    return this.#info(next.keys[0] as StoredKey, now);
  }

  /** Marks a key inactive now. Revoking the signing key first rotates, so the agent can still sign. */
  revoke(kid: string): KeyInfo {
    const now = this.#now();
    const target = this.#data.keys.find((key) => key.kid === kid);
    if (!target) {
      throw new KeyStoreError('unknown-kid', `No key with kid "${kid}"; list keys with GET /api/status`);
    }
    if (!isActive(target, now)) return this.#info(target, now);
    const base = kid === this.#data.signingKey.kid ? this.#rotated(this.#data, now) : this.#data;
    const stamp = new Date(now).toISOString();
    const keys = base.keys.map((key) => (key.kid === kid ? { ...key, inactiveFrom: stamp } : key));
    this.#commit({ ...base, keys });
    this.#emit();
    return this.#info(keys.find((key) => key.kid === kid) as StoredKey, now);
  }

  /**
   * Reads the key file again: another replica sharing it rotated or revoked a key. Returns true (and tells
   * the listeners) when the keys changed.
   */
  reload(): boolean {
    const fresh = loadKeyFile(this.#path);
    if (!fresh || JSON.stringify(fresh) === JSON.stringify(this.#data)) return false;
    this.#indexPublicKeys(fresh);
    if (fresh.signingKey.kid !== this.#signer.kid) this.#signer = signerOf(fresh);
    this.#data = fresh;
    this.#emit();
    return true;
  }

  /** Applies to later rotations; keys already retired keep the grace period they were given. */
  setCardTTL(seconds: number): void {
    const ttl = checkTTL(seconds);
    if (ttl < this.#cardTTL) {
      this.#previousTTL = { seconds: this.#cardTTL, until: this.#now() + this.#cardTTL * 1000 };
    }
    this.#cardTTL = ttl;
  }

  /** Called after rotate/revoke: the card must be rebuilt. Returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  toJSON(): { keys: KeyInfo[] } {
    return { keys: this.list() };
  }

  toString(): string {
    return `KeyStore(${this.#path}, signing ${this.#data.signingKey.kid}, ${this.#data.keys.length} keys)`;
  }

  [inspect.custom](): string {
    return this.toString();
  }

  // Pure: the state after a rotation at `now`; the retired key loses its private half at once.
  #rotated(data: KeyFileData, now: number): KeyFileData {
    const pair = generateRawKeyPair();
    const kid = newKid(now, (candidate) => data.keys.some((key) => key.kid === candidate));
    const retiredAt = new Date(now).toISOString();
    const inactiveFrom = new Date(now + this.#graceSeconds(now) * 1000).toISOString();
    const keys = data.keys.map((key) =>
      key.kid === data.signingKey.kid ? { ...key, retiredAt, inactiveFrom } : key,
    );
    const fresh: StoredKey = { kid, publicKey: pair.publicKey, createdAt: retiredAt };
    return { version: 1, signingKey: { kid, privateKey: pair.privateKey }, keys: [fresh, ...keys] };
  }

  #graceSeconds(now: number): number {
    const previous = this.#previousTTL && this.#previousTTL.until > now ? this.#previousTTL.seconds : 0;
    return Math.max(this.#cardTTL, previous);
  }

  // Disk first: if the write fails, memory still matches the file and the caller sees the error.
  #commit(next: KeyFileData): void {
    saveKeyFile(this.#path, next);
    this.#indexPublicKeys(next);
    if (next.signingKey.kid !== this.#signer.kid) this.#signer = signerOf(next);
    this.#data = next;
  }

  #indexPublicKeys(data: KeyFileData): void {
    for (const key of data.keys) {
      const object = this.#publicKeys.has(key.kid) ? undefined : publicKeyFromRaw(key.publicKey);
      if (object) this.#publicKeys.set(key.kid, object);
    }
  }

  #info(key: StoredKey, now: number): KeyInfo {
    const info: KeyInfo = {
      kid: key.kid,
      publicKey: key.publicKey,
      createdAt: key.createdAt,
      active: isActive(key, now),
      signing: key.kid === this.#data.signingKey.kid,
    };
    if (key.retiredAt !== undefined) info.retiredAt = key.retiredAt;
    if (key.inactiveFrom !== undefined) info.inactiveFrom = key.inactiveFrom;
    return info;
  }

  #emit(): void {
    // Every listener runs even if one throws; the first error then reaches the caller (the keys are saved).
    let failure: unknown;
    for (const listener of [...this.#listeners]) {
      try {
        listener();
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure !== undefined) throw failure;
  }
}

function signerOf(data: KeyFileData): Signer {
  return createSigner(data.signingKey.kid, privateKeyFromRaw(data.signingKey.privateKey));
}

function isActive(key: StoredKey, now: number): boolean {
  return key.inactiveFrom === undefined || now < Date.parse(key.inactiveFrom);
}

function checkTTL(seconds: number): number {
  if (!Number.isInteger(seconds) || seconds < 0) {
    throw new KeyStoreError(
      'invalid',
      `cardTTL must be a whole number of seconds, 0 or more (got ${seconds})`,
    );
  }
  return seconds;
}

function initialKeyFile(now: number): KeyFileData {
  const pair = generateRawKeyPair();
  const kid = newKid(now, () => false);
  return {
    version: 1,
    signingKey: { kid, privateKey: pair.privateKey },
    keys: [{ kid, publicKey: pair.publicKey, createdAt: new Date(now).toISOString() }],
  };
}

function loadKeyFile(path: string): KeyFileData | undefined {
  // A key file readable by group or others (copied, restored from a backup) is narrowed to its owner.
  restrictFileMode(path, 0o600);
  let raw: unknown;
  try {
    raw = readJsonFile<unknown>(path);
  } catch (error) {
    if (error instanceof CorruptFileError) throw corrupt(path, 'not valid JSON');
    throw new KeyStoreError(
      'unreadable',
      `Cannot read key file ${path} (${errorCode(error) ?? 'unknown error'}); check that this user owns it and may read it`,
    );
  }
  if (raw === undefined) return undefined;
  try {
    return parseKeyFile(raw);
  } catch (error) {
    throw corrupt(path, error instanceof Error ? error.message : 'unreadable content');
  }
}

// Never silently replace an identity: peers know this agent by these keys.
function corrupt(path: string, reason: string): KeyStoreError {
  return new KeyStoreError(
    'corrupt',
    `Key file ${path} is corrupt (${reason}). It holds this agent's identity, so it is not replaced ` +
      'automatically: restore it from a backup, or move it aside to start with a new identity ' +
      '(peers that pinned the old key will then need the new one).',
  );
}

function saveKeyFile(path: string, data: KeyFileData): void {
  try {
    writeFileAtomic(path, `${JSON.stringify(data, null, 2)}\n`, 0o600);
  } catch (error) {
    throw new KeyStoreError(
      'unwritable',
      `Cannot write key file ${path} (${errorCode(error) ?? 'unknown error'}); the keys are unchanged. ` +
        'Check the free disk space and the permissions of the data directory.',
    );
  }
}
