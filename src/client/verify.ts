import type { KeyObject } from 'node:crypto';
import {
  RESPONSE_COMPONENTS,
  digestMatches,
  parseSignatureHeaders,
  verifyObjectSignature,
  verifyParsedSignature,
} from '../protocol/index.js';
import { ResponseVerificationError } from './errors.js';

/** Finds the public key a kid names for the agent being verified; a string is the reason it failed. */
export type KeyLookup = (kid: string) => Promise<KeyObject | string>;

/**
 * `verified`: signed, and the signature checked against an active key of the agent's card. `unsigned`: it
 * carries no signature at all, as the protocol's own SDKs answer (PROTOCOL.md §5); returned only when the
 * caller accepts that, else refused. A signature that is present but does not check is always refused.
 */
export type SignatureCheck = 'verified' | 'unsigned';

/**
 * Checks the Form A response headers of PROTOCOL.md §3: the digest against the exact bytes received
 * (before any Ed25519 work), then the signature over ("@status" "content-digest") by an active key.
 */
export async function verifyResponse(
  response: { status: number; headers: Headers },
  bytes: Uint8Array,
  lookup: KeyLookup,
  body: unknown,
  acceptUnsigned = false,
): Promise<SignatureCheck> {
  const fail = (reason: string) =>
    new ResponseVerificationError(
      `Reply (HTTP ${response.status}) failed verification: ${reason}`,
      response.status,
      body,
    );
  const digest = response.headers.get('content-digest');
  const input = response.headers.get('signature-input');
  const signature = response.headers.get('signature');
  // A digest without a signature proves nothing, but one that does not match says the body was changed.
  if (digest && !digestMatches(digest, bytes)) throw fail('Content-Digest does not match the body');
  if (!input && !signature) {
    if (acceptUnsigned) return 'unsigned';
    throw fail('it has no Content-Digest/Signature-Input/Signature headers (an unsigned reply)');
  }
  if (!digest || !input || !signature) {
    throw fail('its Content-Digest, Signature-Input and Signature headers are not all there');
  }
  // The parser's reasons may quote the headers (an unknown alg): not the other agent's text in our words.
  const parsed = parseSignatureHeaders(input, signature);
  if (typeof parsed === 'string') throw fail('its Signature-Input and Signature headers do not parse');
  // The signature must cover the status and the digest, or it would vouch for nothing we read.
  const missing = RESPONSE_COMPONENTS.filter((c) => !parsed.components.includes(c));
  if (missing.length > 0) throw fail(`the signature does not cover ${missing.join(', ')}`);
  const key = await lookup(parsed.kid);
  if (typeof key === 'string') throw fail(key);
  const parts = { status: response.status, headers: { 'content-digest': digest } };
  if (!verifyParsedSignature(parsed, parts, key)) throw fail('bad signature by the key it names');
  return 'verified';
}

/** Checks the Form B `kid`/`signature` of a final stream event (PROTOCOL.md §3, "What we emit"). */
export async function verifyEvent(
  data: unknown,
  lookup: KeyLookup,
  what: string,
  acceptUnsigned = false,
): Promise<SignatureCheck> {
  const fail = (reason: string) =>
    new ResponseVerificationError(`Stream ${what} failed verification: ${reason}`);
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw fail('its data is not a JSON object');
  const record = data as Record<string, unknown>;
  if (record.kid === undefined && record.signature === undefined && acceptUnsigned) return 'unsigned';
  if (typeof record.kid !== 'string' || typeof record.signature !== 'string') {
    throw fail('it carries no kid/signature (an unsigned final event)');
  }
  const key = await lookup(record.kid);
  if (typeof key === 'string') throw fail(key);
  if (!verifyObjectSignature(record, key)) throw fail('bad signature by the key it names');
  return 'verified';
}
