import type { KeyObject } from 'node:crypto';
import { signBytes } from './ed25519.js';

/** A signing closure: the private key stays inside it, only the kid is visible. */
export interface Signer {
  readonly kid: string;
  sign(data: Uint8Array | string): string;
}

export function createSigner(kid: string, privateKey: KeyObject): Signer {
  return { kid, sign: (data) => signBytes(privateKey, data) };
}
