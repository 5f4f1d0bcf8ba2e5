import type { KeyObject } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import { verifyBytes } from './ed25519.js';
import type { Signer } from './signer.js';

/**
 * Form B of PROTOCOL.md §3, also used for the final events of a stream: `signature` is the Ed25519
 * signature over the canonical JSON of every other field, `kid` included.
 */
export function signObject<T extends object>(
  value: T,
  signer: Signer,
): T & { kid: string; signature: string } {
  const withKid = { ...value, kid: signer.kid } as T & { kid: string; signature?: string };
  delete withKid.signature;
  return { ...withKid, signature: signer.sign(canonicalJson(withKid)) };
}

export function verifyObjectSignature(value: Record<string, unknown>, publicKey: KeyObject): boolean {
  const { signature, ...rest } = value;
  if (typeof signature !== 'string') return false;
  let canonical: string;
  try {
    canonical = canonicalJson(rest);
  } catch {
    return false;
  }
  return verifyBytes(publicKey, canonical, signature);
}
