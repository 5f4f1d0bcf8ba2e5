import { randomBytes } from 'node:crypto';
import { decodeBase64, privateKeyFromRaw, publicKeyFromRaw, publicKeyOf } from '../protocol/index.js';

/** The on-disk shape of `<dataDir>/keys.json`. Only the current signing key has private material. */
export interface KeyFileData {
  version: 1;
  signingKey: { kid: string; privateKey: string };
  /** Every key ever published, newest first. */
  keys: StoredKey[];
}

export interface StoredKey {
  kid: string;
  publicKey: string;
  createdAt: string;
  retiredAt?: string;
  inactiveFrom?: string;
}

export const KEY_FILE_NAME = 'keys.json';

const KID = /^k-\d{8}-[0-9a-f]{6,}$/;

/** `k-20261125-3fa9c1`: sorts and reads by date; the random part keeps same-day kids unique. */
export function newKid(nowMs: number, taken: (kid: string) => boolean): string {
  const day = new Date(nowMs).toISOString().slice(0, 10).replaceAll('-', '');
  for (;;) {
    const kid = `k-${day}-${randomBytes(3).toString('hex')}`;
    if (!taken(kid)) return kid;
  }
}

/**
 * Checks a parsed key file and returns it typed. Throws an Error whose message says what is wrong
 * and never quotes a value from the file (it holds a private key).
 */
export function parseKeyFile(raw: unknown): KeyFileData {
  if (!isRecord(raw)) throw new Error('not a JSON object');
  if (raw.version !== 1) throw new Error('unknown version (expected 1)');
  if (!Array.isArray(raw.keys) || raw.keys.length === 0) throw new Error('"keys" is missing or empty');
  const keys = raw.keys.map((entry, index) => parseStoredKey(entry, index));
  const kids = new Set(keys.map((key) => key.kid));
  if (kids.size !== keys.length) throw new Error('two keys share a kid');

  const signing = raw.signingKey;
  if (!isRecord(signing) || typeof signing.kid !== 'string' || typeof signing.privateKey !== 'string') {
    throw new Error('"signingKey" is missing or malformed');
  }
  const entry = keys.find((key) => key.kid === signing.kid);
  if (!entry) throw new Error('the signing key is not listed in "keys"');
  if (entry.inactiveFrom !== undefined || entry.retiredAt !== undefined) {
    throw new Error('the signing key is marked retired or inactive');
  }
  const privateRaw = decodeBase64(signing.privateKey);
  if (!privateRaw || privateRaw.length !== 32) throw new Error('the signing key is not a 32-byte base64 key');
  if (publicKeyOf(privateKeyFromRaw(signing.privateKey)) !== entry.publicKey) {
    throw new Error('the signing key does not match its listed public key');
  }
  return { version: 1, signingKey: { kid: signing.kid, privateKey: signing.privateKey }, keys };
}

function parseStoredKey(entry: unknown, index: number): StoredKey {
  const where = `key #${index + 1}`;
  if (!isRecord(entry)) throw new Error(`${where} is not an object`);
  const { kid, publicKey, createdAt, retiredAt, inactiveFrom } = entry;
  if (typeof kid !== 'string' || !KID.test(kid)) throw new Error(`${where} has no valid "kid"`);
  if (typeof publicKey !== 'string' || !publicKeyFromRaw(publicKey)) {
    throw new Error(`${where} (${kid}) has no valid "publicKey"`);
  }
  const key: StoredKey = { kid, publicKey, createdAt: requireTime(createdAt, `${where} (${kid}) createdAt`) };
  if (retiredAt !== undefined) key.retiredAt = requireTime(retiredAt, `${where} (${kid}) retiredAt`);
  if (inactiveFrom !== undefined)
    key.inactiveFrom = requireTime(inactiveFrom, `${where} (${kid}) inactiveFrom`);
  return key;
}

function requireTime(value: unknown, what: string): string {
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) throw new Error(`${what} is not a date`);
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
