import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';

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

export function signBytes(privateKey: KeyObject, data: Uint8Array | string): string {
  return sign(null, typeof data === 'string' ? Buffer.from(data) : data, privateKey).toString('base64');
}

export function verifyBytes(
  publicKey: KeyObject,
  data: Uint8Array | string,
  signatureBase64: string,
): boolean {
  const signature = decodeBase64(signatureBase64);
  if (!signature || signature.length !== 64) return false;
  return verify(null, typeof data === 'string' ? Buffer.from(data) : data, publicKey, signature);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Strict standard base64 (Buffer.from silently skips bad characters, which would hide tampering). */
export function decodeBase64(text: string): Buffer | null {
  if (typeof text !== 'string' || !BASE64.test(text)) return null;
  return Buffer.from(text, 'base64');
}
