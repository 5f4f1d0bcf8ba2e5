import { randomBytes } from 'node:crypto';
import { signObject, signRequest, type Envelope, type Mode, type Signer } from '../protocol/index.js';

/** Where the request signature goes: Form A headers, Form B envelope fields, or both (PROTOCOL.md §3). */
export type SignatureForm = 'headers' | 'envelope' | 'both';

export interface EnvelopeInput {
  from: string;
  to: string;
  skill: string;
  mode: Mode;
  payload: object;
  /** Overrides or additions (auth, callbackUrl, parentSpanId, or a chosen nonce/timestamp in tests). */
  extra?: Partial<Envelope>;
}

/** A fresh envelope: random nonce (22 chars, inside 8..64), ISO timestamp, W3C-sized trace and span ids. */
export function buildEnvelope(input: EnvelopeInput): Envelope {
  return {
    from: input.from,
    to: input.to,
    skill: input.skill,
    mode: input.mode,
    nonce: randomBytes(16).toString('base64url'),
    timestamp: new Date().toISOString(),
    traceId: randomBytes(16).toString('hex'),
    spanId: randomBytes(8).toString('hex'),
    payload: input.payload as Record<string, unknown>,
    ...input.extra,
  };
}

export interface SignedRequest {
  body: string;
  headers: Record<string, string>;
}

/**
 * Serialises and signs an envelope for POST `path` (the path exactly as sent: it is signed as `@path`).
 * Any kid/signature already on the envelope is replaced by ours.
 */
export function signEnvelope(
  envelope: Envelope,
  path: string,
  signer: Signer,
  form: SignatureForm,
): SignedRequest {
  const { kid: _kid, signature: _signature, ...rest } = envelope;
  // A JSON round trip first, so Form B signs exactly what the receiver parses (toJSON, undefined, -0).
  const bare = JSON.parse(JSON.stringify(rest)) as Omit<Envelope, 'kid' | 'signature'>;
  const body = JSON.stringify(form === 'headers' ? bare : signObject(bare, signer));
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (form !== 'envelope') {
    const signed = signRequest(signer, { method: 'POST', path, body });
    headers['Content-Digest'] = signed['content-digest'];
    headers['Signature-Input'] = signed['signature-input'];
    headers['Signature'] = signed.signature;
  }
  return { body, headers };
}
