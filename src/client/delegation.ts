// Outgoing delegation tokens (PROTOCOL.md §9): we are the issuer. The keystore never hands out its private
// key, so the compact JWS is assembled here and signed through the Signer closure; `jose.jwtVerify` (what
// the reference SDK and our agent use) verifies it like a token made by jose's own SignJWT.
import { base64url } from 'jose';
import { AGENT_ID_PATTERN, type Signer } from '../protocol/index.js';

export const DELEGATION_DEFAULT_LIFETIME_SECONDS = 600;
/** A token is a bearer credential for its subject until it expires: kept short. */
export const DELEGATION_MAX_LIFETIME_SECONDS = 3600;

export interface DelegationClaimsInput {
  /** Our own agent:// id: the token's `iss`; receivers check it against our card's keys. */
  iss: string;
  /** The agent allowed to act for us: it must be the `from` of the envelopes that carry the token. */
  sub: string;
  /** The skill ids the subject may call with it (at least one). */
  scope: string[];
  /** Further hops allowed; receivers refuse a token whose maxDepth is 0 or less, so at least 1. */
  maxDepth: number;
  /** The previous actor in a chain (RFC 8693 `act`), when we pass on a delegation we were given. */
  act?: { sub: string };
  /** Seconds until it expires: default 600, at most 3600. */
  lifetimeSeconds?: number;
  /** Milliseconds since 1970, for `iat` (tests); default now. */
  now?: number;
}

const agentId = new RegExp(AGENT_ID_PATTERN);

/**
 * A delegation token signed with `signer`: header `{"alg":"EdDSA","kid":...}` (the kid lets receivers pick
 * the key; the SDK ignores it and tries the issuer's key), claims iss, sub, scope, maxDepth, act?, iat, exp.
 * Throws an Error saying which claim is wrong.
 */
export function createDelegationToken(signer: Signer, claims: DelegationClaimsInput): string {
  const { iss, sub, scope, maxDepth, act } = claims;
  const lifetime = claims.lifetimeSeconds ?? DELEGATION_DEFAULT_LIFETIME_SECONDS;
  for (const [name, id] of [
    ['iss', iss],
    ['sub', sub],
    ['act.sub', act?.sub],
  ] as const) {
    if (id !== undefined && !agentId.test(id)) {
      throw new Error(`Delegation "${name}" must be an agent:// id (got ${JSON.stringify(id)}).`);
    }
  }
  if (!Array.isArray(scope) || scope.length === 0 || !scope.every((s) => typeof s === 'string' && s)) {
    throw new Error('Delegation "scope" must list at least one skill id.');
  }
  if (!Number.isInteger(maxDepth) || maxDepth < 1) {
    throw new Error(
      `Delegation "maxDepth" must be a whole number of at least 1 (got ${maxDepth}); receivers refuse 0.`,
    );
  }
  if (!Number.isInteger(lifetime) || lifetime < 1 || lifetime > DELEGATION_MAX_LIFETIME_SECONDS) {
    throw new Error(
      `Delegation lifetime must be 1 to ${DELEGATION_MAX_LIFETIME_SECONDS} seconds (got ${lifetime}).`,
    );
  }
  const iat = Math.floor((claims.now ?? Date.now()) / 1000);
  const payload = {
    iss,
    sub,
    scope: [...scope],
    maxDepth,
    ...(act ? { act: { sub: act.sub } } : {}),
    iat,
    exp: iat + lifetime,
  };
  return signCompactJws(signer, { alg: 'EdDSA', kid: signer.kid }, payload);
}

/** RFC 7515 compact serialisation: base64url(header).base64url(payload).base64url(Ed25519 signature). */
export function signCompactJws(signer: Signer, header: object, payload: object): string {
  const input = `${base64url.encode(JSON.stringify(header))}.${base64url.encode(JSON.stringify(payload))}`;
  const signature = Buffer.from(signer.sign(input), 'base64');
  return `${input}.${base64url.encode(signature)}`;
}
