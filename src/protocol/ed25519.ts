import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { createRequire } from 'node:module';

// DER prefixes that wrap a raw 32-byte Ed25519 key as SPKI / PKCS#8 (RFC 8410).
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface RawKeyPair {
  /** Raw 32-byte public key, standard base64: the card's `key`. */
  publicKey: string;
  /** Raw 32-byte private seed, standard base64. Only the keystore holds it. */
  privateKey: string;
}

export function generateRawKeyPair(): RawKeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' });
  return {
    publicKey: spki.subarray(SPKI_PREFIX.length).toString('base64'),
    privateKey: pkcs8.subarray(PKCS8_PREFIX.length).toString('base64'),
  };
}

export function privateKeyFromRaw(rawBase64: string): KeyObject {
  const raw = Buffer.from(rawBase64, 'base64');
  if (raw.length !== 32) throw new Error('An Ed25519 private key is 32 bytes');
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, raw]), format: 'der', type: 'pkcs8' });
}

/** Public key object from the card's base64 key; null when the text is not a 32-byte key. */
export function publicKeyFromRaw(rawBase64: string): KeyObject | null {
  const raw = decodeBase64(rawBase64);
  if (!raw || raw.length !== 32) return null;
  try {
    return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
  } catch {
    return null;
  }
}

export function publicKeyOf(privateKey: KeyObject): string {
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return spki.subarray(SPKI_PREFIX.length).toString('base64');
}

/**
 * The two Ed25519 operations every signed call makes (a request verified, a reply signed). libsodium's
 * (`sodium-native`, prebuilt for every desktop and server platform) take about half the time of OpenSSL's
 * through `node:crypto` on these machines (verify 80-110 µs against 190-200 µs, sign 39 against 67-70),
 * and they were 40% of a signed call's CPU. Both give the same signatures (Ed25519 is deterministic);
 * libsodium's verify is the stricter one (it also refuses small-order and non-canonical keys and points,
 * which no honest signer makes). Where the addon does not load, node:crypto does the work.
 */
export interface Ed25519Backend {
  readonly name: 'libsodium' | 'node:crypto';
  sign(privateKey: KeyObject, data: Uint8Array): Buffer;
  verify(publicKey: KeyObject, data: Uint8Array, signature: Uint8Array): boolean;
}

export const nodeEd25519: Ed25519Backend = {
  name: 'node:crypto',
  sign: (privateKey, data) => sign(null, data, privateKey),
  verify: (publicKey, data, signature) => verify(null, data, publicKey, signature),
};

interface Sodium {
  crypto_sign_detached(signature: Buffer, message: Uint8Array, secretKey: Buffer): void;
  crypto_sign_verify_detached(signature: Uint8Array, message: Uint8Array, publicKey: Buffer): boolean;
  crypto_sign_seed_keypair(publicKey: Buffer, secretKey: Buffer, seed: Buffer): void;
  sodium_malloc(size: number): Buffer;
  sodium_memzero(buffer: Buffer): void;
}

/** libsodium's Ed25519, or undefined where its addon cannot be loaded (then node:crypto is used). */
export function sodiumEd25519(): Ed25519Backend | undefined {
  let sodium: Sodium;
  try {
    sodium = createRequire(import.meta.url)('sodium-native') as Sodium;
  } catch {
    return undefined;
  }
  // The raw keys each KeyObject stands for, worked out once per key (a peer's key and the agent's own are
  // the same objects call after call). The secret key lives in libsodium's guarded memory, not the heap.
  const publicKeys = new WeakMap<KeyObject, Buffer>();
  const secretKeys = new WeakMap<KeyObject, Buffer>();
  const publicRaw = (key: KeyObject) => {
    let raw = publicKeys.get(key);
    if (!raw) {
      raw = key.export({ format: 'der', type: 'spki' }).subarray(SPKI_PREFIX.length);
      publicKeys.set(key, raw);
    }
    return raw;
  };
  const secretRaw = (key: KeyObject) => {
    let secret = secretKeys.get(key);
    if (!secret) {
      const pkcs8 = key.export({ format: 'der', type: 'pkcs8' });
      const seed = pkcs8.subarray(PKCS8_PREFIX.length);
      secret = sodium.sodium_malloc(64);
      sodium.crypto_sign_seed_keypair(Buffer.alloc(32), secret, seed);
      sodium.sodium_memzero(pkcs8);
      secretKeys.set(key, secret);
    }
    return secret;
  };
  return {
    name: 'libsodium',
    sign(privateKey, data) {
      const signature = Buffer.allocUnsafe(64);
      sodium.crypto_sign_detached(signature, data, secretRaw(privateKey));
      return signature;
    },
    verify(publicKey, data, signature) {
      const raw = publicRaw(publicKey);
      return raw.length === 32 && sodium.crypto_sign_verify_detached(signature, data, raw);
    },
  };
}

/** The backend in use: libsodium where it loads, else node:crypto. */
export const ed25519: Ed25519Backend = sodiumEd25519() ?? nodeEd25519;

export function signBytes(privateKey: KeyObject, data: Uint8Array | string): string {
  return ed25519.sign(privateKey, typeof data === 'string' ? Buffer.from(data) : data).toString('base64');
}

export function verifyBytes(
  publicKey: KeyObject,
  data: Uint8Array | string,
  signatureBase64: string,
): boolean {
  const signature = decodeBase64(signatureBase64);
  if (!signature || signature.length !== 64) return false;
  return ed25519.verify(publicKey, typeof data === 'string' ? Buffer.from(data) : data, signature);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Strict standard base64 (Buffer.from silently skips bad characters, which would hide tampering). */
export function decodeBase64(text: string): Buffer | null {
  if (typeof text !== 'string' || !BASE64.test(text)) return null;
  return Buffer.from(text, 'base64');
}
