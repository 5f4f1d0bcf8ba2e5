// Incoming delegation tokens (PROTOCOL.md §9): a JWT signed EdDSA by the agent the sender acts for. Checked
// in the reference SDK's order and with its codes, right after the sender's own signature.
import type { KeyObject } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import {
  AGENT_ID_PATTERN,
  ProtocolError,
  authFailed,
  normalizeAgentId,
  type Envelope,
} from '../protocol/index.js';
import { oneLine } from '../lib/text.js';
import type { ActiveKeys, CallerAddress, PeerKeyResolver } from './peer-keys.js';

/** The envelope schema caps the field at this; checked again here so no other path can skip it. */
export const MAX_DELEGATION_TOKEN_CHARS = 8192;
/**
 * The issuer's active keys tried against a token that names no kid (the SDK's tokens): each try is one
 * Ed25519 verification spent before the sender's rate limit is counted, so a card listing many keys
 * must not multiply it.
 */
export const MAX_ISSUER_KEYS_TRIED = 8;

/** What a verified token grants: the sender acts for `issuer`, for the skills in `scope`. */
export interface DelegationGrant {
  issuer: string;
  scope: string[];
  maxDepth: number;
  /** The previous actor in a chain (RFC 8693 `act.sub`), when the token names one. */
  actor?: string;
}

export interface DelegationDeps {
  keys: Pick<PeerKeyResolver, 'activeKeys'>;
  /** The longest lifetime accepted (the operator's `delegationMaxLifetimeSeconds`). */
  maxLifetimeSeconds: number;
  now?: () => number;
}

const agentId = new RegExp(AGENT_ID_PATTERN);
const refuse = (message: string) => authFailed(message, 'delegation');
const exceeded = (message: string) =>
  new ProtocolError('DELEGATION_EXCEEDED', 400, message, { step: 'delegation' });
/** A value from the token, for a refusal message: one quoted, printable, short line. */
const quote = (value: unknown) => JSON.stringify(oneLine(String(value), 100) ?? '');

/**
 * Verifies `envelope.delegationToken` for a sender whose own signature has verified: parse, issuer key,
 * JWT signature and `exp`, claim types, depth, subject, scope (PROTOCOL.md §9). Throws a ProtocolError with
 * step `delegation`: AUTH_FAILED 401, or DELEGATION_EXCEEDED 400 for depth and scope.
 */
export async function checkDelegation(
  deps: DelegationDeps,
  envelope: Pick<Envelope, 'from' | 'skill'>,
  token: string,
  caller?: CallerAddress,
): Promise<DelegationGrant> {
  const now = deps.now ?? Date.now;
  const { issuer, kid } = parse(token);
  const payload = await verifySignature(deps, token, issuer, kid, now, caller);
  checkLifetime(payload, deps.maxLifetimeSeconds, now(), issuer);

  const { scope, maxDepth } = payload;
  if (!Array.isArray(scope) || !scope.every((entry) => typeof entry === 'string')) {
    throw refuse(
      'The delegation token\'s "scope" claim must be an array of skill ids (strings); ask the issuer for a new token.',
    );
  }
  if (typeof maxDepth !== 'number') {
    throw refuse(
      'The delegation token\'s "maxDepth" claim must be a number; ask the issuer for a new token.',
    );
  }
  if (maxDepth <= 0) {
    throw exceeded(
      `The delegation token allows no further delegation (maxDepth ${maxDepth}); ask ${issuer} for a token with maxDepth of at least 1.`,
    );
  }
  if (typeof payload.sub !== 'string' || normalizeAgentId(payload.sub) !== normalizeAgentId(envelope.from)) {
    throw refuse(
      `The delegation token was issued to ${quote(payload.sub)} (its "sub"), but this envelope is from ${envelope.from}; only the agent it names may use it.`,
    );
  }
  if (!scope.includes(envelope.skill)) {
    throw exceeded(
      `The delegation token's scope (${scope.slice(0, 10).map(quote).join(', ') || 'empty'}) does not include skill "${envelope.skill}"; ask ${issuer} for a token whose scope lists it.`,
    );
  }
  const act = payload.act as { sub?: unknown } | undefined;
  const actor = typeof act?.sub === 'string' && agentId.test(act.sub) ? normalizeAgentId(act.sub) : undefined;
  return { issuer, scope: scope as string[], maxDepth, ...(actor ? { actor } : {}) };
}

/**
 * A token is a bearer credential for its subject until it expires, so one made to last a century is one
 * that can never be withdrawn: refused past the operator's limit, from `iat` to `exp` and, since `iat` is
 * the issuer's word and may be missing or moved forward, from now to `exp` as well.
 */
function checkLifetime(payload: JWTPayload, maxSeconds: number, now: number, issuer: string): void {
  const exp = payload.exp as number; // jwtVerify requires it
  const limit = `the ${describeSeconds(maxSeconds)} this agent accepts (its delegationMaxLifetimeSeconds)`;
  const iat = payload.iat;
  if (typeof iat === 'number' && exp - iat > maxSeconds) {
    throw refuse(
      `The delegation token is valid for ${describeSeconds(exp - iat)} (from its "iat" to its "exp"), longer than ${limit}; ask ${issuer} for a token that expires sooner.`,
    );
  }
  const left = Math.ceil(exp - now / 1000);
  if (left > maxSeconds) {
    throw refuse(
      `The delegation token expires in ${describeSeconds(left)}, later than ${limit} allows; ask ${issuer} for a token that expires sooner.`,
    );
  }
}

/** `90000 s (25 h)`: seconds, and the whole hours or days they make when they do. */
function describeSeconds(seconds: number): string {
  const whole = Math.round(seconds);
  if (whole >= 2 * 86_400 && whole % 86_400 === 0) return `${whole} s (${whole / 86_400} days)`;
  if (whole >= 3600 && whole % 3600 === 0) return `${whole} s (${whole / 3600} h)`;
  return `${whole} s`;
}

/** Step one: a compact JWS whose header asks for EdDSA and whose claims name an agent:// issuer. */
function parse(token: string): { issuer: string; kid?: string } {
  if (token.length > MAX_DELEGATION_TOKEN_CHARS) {
    throw refuse(`The delegation token is longer than ${MAX_DELEGATION_TOKEN_CHARS} characters.`);
  }
  let header: ReturnType<typeof decodeProtectedHeader>;
  let claims: JWTPayload;
  try {
    header = decodeProtectedHeader(token);
    claims = decodeJwt(token);
  } catch {
    throw refuse(
      'The delegation token is not a valid JWT (a compact JWS: base64url header, claims and signature joined by dots); send the token exactly as the issuer made it, or leave delegationToken out.',
    );
  }
  // Only the issuer's Ed25519 key may sign: `none` would need no key at all and HS256 would use the public
  // key as a shared secret (RFC 8725 §2.1, algorithm confusion). Refused before any key is looked up.
  if (header.alg !== 'EdDSA') {
    throw refuse(
      `The delegation token is signed with alg ${quote(header.alg ?? 'none')}; only "EdDSA" (Ed25519, the issuer's own key) is accepted.`,
    );
  }
  if (claims.iss === undefined) {
    throw refuse('The delegation token has no "iss" claim: it must name the agent that issued it.');
  }
  if (typeof claims.iss !== 'string' || claims.iss.length > 300 || !agentId.test(claims.iss)) {
    throw refuse(`The delegation token's "iss" must be an agent:// id (got ${quote(claims.iss)}).`);
  }
  // In its one spelling, as senders and pins are: agent://LocalHost must not skip the pinned key (review).
  const issuer = normalizeAgentId(claims.iss);
  return { issuer, ...(typeof header.kid === 'string' ? { kid: header.kid } : {}) };
}

/**
 * Steps two and three: the issuer's active keys, resolved as a sender's (pinned key, our own keystore, or
 * its card, with the same cache and fetch budgets), then `jwtVerify` with each until one verifies. A kid
 * in the header is a hint (tried first); the SDK sends none. When a cached card's keys all fail, the card
 * is fetched again once (the issuer may have rotated), as for a sender's unknown kid.
 */
async function verifySignature(
  deps: DelegationDeps,
  token: string,
  issuer: string,
  kid: string | undefined,
  now: () => number,
  caller: CallerAddress | undefined,
): Promise<JWTPayload> {
  let found = await issuerKeys(deps, issuer, caller, false);
  const tried: KeyObject[] = [];
  for (;;) {
    const candidates = ordered(found, kid).filter(({ key }) => !tried.some((done) => done.equals(key)));
    for (const { key } of candidates.slice(0, MAX_ISSUER_KEYS_TRIED - tried.length)) {
      tried.push(key);
      const payload = await verifyWith(token, key, issuer, now);
      if (payload) return payload;
    }
    if (!found.cached || tried.length >= MAX_ISSUER_KEYS_TRIED) break;
    found = await issuerKeys(deps, issuer, caller, true);
    if (found.cached) break; // not re-fetched (too soon, or the fetch failed): nothing new to try
  }
  if (tried.length === 0) {
    throw refuse(
      `The delegation token's issuer ${issuer} has no active key to check it with; it must be signed with an active key listed in the issuer's card.`,
    );
  }
  throw refuse(
    `The delegation token's signature does not verify with ${found.source === 'pinned' ? 'the pinned key' : 'any active key'} of its issuer ${issuer}; it must be signed by the issuer itself (EdDSA, Ed25519).`,
  );
}

/** The issuer's keys; a failed lookup is the resolver's refusal, re-worded for a token's issuer. */
async function issuerKeys(
  deps: DelegationDeps,
  issuer: string,
  caller: CallerAddress | undefined,
  refresh: boolean,
): Promise<ActiveKeys> {
  try {
    return await deps.keys.activeKeys(issuer, caller, refresh);
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    // The low-level reason (refused, TLS, HTTP status) stays in the cause, for the operator's log only.
    const message =
      error.code === 'AUTH_FAILED'
        ? `The delegation token's issuer ${issuer} is unknown here: its key is not pinned and its card could not be fetched. The issuer must serve its card at https://<host>/.well-known/agent.json, or the operator can pin its key.`
        : error.message;
    throw new ProtocolError(error.code, error.httpStatus, message, {
      step: 'delegation',
      retryAfterSeconds: error.retryAfterSeconds,
      cause: error.cause ?? error,
    });
  }
}

function ordered(found: ActiveKeys, kid: string | undefined): ActiveKeys['keys'] {
  if (kid === undefined) return found.keys;
  return [...found.keys].sort((a, b) => Number(b.kid === kid) - Number(a.kid === kid));
}

/** The verified claims, undefined when `key` did not make the signature, or a refusal for a bad `exp`. */
async function verifyWith(
  token: string,
  key: KeyObject,
  issuer: string,
  now: () => number,
): Promise<JWTPayload | undefined> {
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['EdDSA'],
      requiredClaims: ['exp'],
      currentDate: new Date(now()),
    });
    return payload;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') return undefined;
    if (code === 'ERR_JWT_EXPIRED') {
      const exp = decodeJwt(token).exp;
      const when = typeof exp === 'number' ? ` at ${new Date(exp * 1000).toISOString()}` : '';
      throw refuse(`The delegation token expired${when}; ask ${issuer} for a new one.`);
    }
    const claim = (error as { claim?: unknown }).claim;
    if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' && claim === 'exp') {
      throw refuse(
        'The delegation token has no valid "exp" claim (seconds since 1970); tokens must say when they expire.',
      );
    }
    if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' && claim === 'nbf') {
      throw refuse(`The delegation token is not valid yet (its "nbf" is in the future); check the clocks.`);
    }
    throw refuse(
      `The delegation token was refused: ${oneLine((error as Error).message, 200) ?? 'invalid'}. Send the token exactly as ${issuer} made it.`,
    );
  }
}
