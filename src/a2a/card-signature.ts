import { AgentCard, canonicalizeAgentCard, type AgentCardSignature } from '@a2a-js/sdk';
import { canonicalJson, type PublicKeyEntry, type Signer } from '../protocol/index.js';

/**
 * A2A card signatures (§8.4): a detached JWS (RFC 7515) over the card's canonical form, with the agent's
 * Ed25519 key and the SAMVAD card's kid, so the A2A and SAMVAD identities are one key. The key never
 * leaves the keystore: the signing input goes through its Signer closure.
 */

export interface JsonWebKey {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  use: 'sig';
  alg: 'EdDSA';
}

/** The protected header of every card signature: `jku` names the JWKS that holds the key. */
function protectedHeader(kid: string, jku: string): string {
  return Buffer.from(JSON.stringify({ alg: 'EdDSA', typ: 'JOSE', kid, jku })).toString('base64url');
}

/** One JWS over `payload` (the signing input is `protected.payload`, both base64url). */
export function signPayload(payload: string, signer: Signer, jku: string): AgentCardSignature {
  const head = protectedHeader(signer.kid, jku);
  const input = `${head}.${Buffer.from(payload).toString('base64url')}`;
  const signature = Buffer.from(signer.sign(input), 'base64').toString('base64url');
  return { protected: head, signature, header: undefined };
}

/**
 * The v1.0 card as served (ProtoJSON), signed. The first signature covers the spec's canonical form
 * (ProtoJSON, defaults left out, JCS). SDK 1.3.0's verifier canonicalizes the card object its client
 * holds, and that form loses `securitySchemes` (a oneof; a2aproject/a2a-js#663), so a second signature
 * covers that form: it lets the official client verify the card, and covers every field but that one.
 */
export function signedCardJson(card: AgentCard, signer: Signer, jku: string): Record<string, unknown> {
  const unsigned: AgentCard = { ...card, signatures: [] };
  const json = AgentCard.toJSON(unsigned) as Record<string, unknown>;
  const specPayload = canonicalizeAgentCard(json as unknown as AgentCard);
  const signatures = [signPayload(specPayload, signer, jku)];
  const sdkPayload = canonicalizeAgentCard(unsigned);
  if (sdkPayload !== specPayload) signatures.push(signPayload(sdkPayload, signer, jku));
  return AgentCard.toJSON({ ...unsigned, signatures }) as Record<string, unknown>;
}

/** The v0.3 view, signed over its own JCS form (minus `signatures`), as v0.3 verifiers compute it. */
export function signedLegacyCardJson(
  legacy: Record<string, unknown>,
  signer: Signer,
  jku: string,
): Record<string, unknown> {
  const { signatures: _replaced, ...unsigned } = legacy;
  const { protected: head, signature } = signPayload(canonicalJson(unsigned), signer, jku);
  return { ...unsigned, signatures: [{ protected: head, signature }] };
}

/**
 * The keys a card signature may be checked with: the active ones only (§8.4.3: revoked or expired keys
 * must not verify). A retired key stays active for one cardTTL, so cards cached before a rotation verify.
 */
export function cardJwks(keys: PublicKeyEntry[]): { keys: JsonWebKey[] } {
  return {
    keys: keys
      .filter((key) => key.active)
      .map((key) => ({
        kty: 'OKP',
        crv: 'Ed25519',
        x: Buffer.from(key.key, 'base64').toString('base64url'),
        kid: key.kid,
        use: 'sig',
        alg: 'EdDSA',
      })),
  };
}
