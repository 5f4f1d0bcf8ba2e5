/**
 * Whether a called agent's reply may be used, by its signature (PROTOCOL.md §5, "Replies from other
 * agents"): a signed reply must verify against the agent's card (the client refuses it otherwise); an
 * unsigned one, as the protocol's own SDKs send, is used and said to be unsigned, unless the operator
 * requires signed replies (outboundRequireSignedReplies).
 */
import type { ReplySignature } from '../protocol/index.js';
import { OutboundError } from './outbound-policy.js';

/** What the client found on one reply, 202, task record or final stream event. */
export interface ReplyCheck {
  verified: boolean;
  unsigned: boolean;
}

export type UsableSignature = Exclude<ReplySignature, 'failed'>;

/** A reply the call uses: the call's signature so far, and the tool's sentence about it. */
export interface UsedReply {
  signature: UsableSignature;
  note: string;
}

/**
 * The call's replies so far with one more: `unsigned` once any of them was. Throws when the operator
 * requires signed replies and this one carries none.
 */
export function withReply(
  agent: string,
  sofar: ReplySignature | undefined,
  reply: ReplyCheck,
  requireSigned: boolean,
): UsableSignature {
  // The client checks every reply it returns; one neither verified nor unsigned must never pass.
  if (!reply.verified && !reply.unsigned) {
    throw new OutboundError(
      'handler',
      502,
      `The reply from ${agent} was not verified, so it was discarded.`,
      {
        replySignature: 'failed',
        discarded: true,
      },
    );
  }
  if (reply.unsigned && requireSigned) throw unsignedRefused(agent);
  return reply.unsigned || sofar === 'unsigned' ? 'unsigned' : 'verified';
}

export function unsignedRefused(agent: string): OutboundError {
  return new OutboundError(
    'handler',
    502,
    `The reply from ${agent} carries no signature (its software does not sign replies), and the operator ` +
      'accepts only signed replies (setting outboundRequireSignedReplies), so it was discarded.',
    { replySignature: 'unsigned', discarded: true },
  );
}

/**
 * The tool's sentence about a reply it uses. `baseUrl` is the address the bridge derived from the agent id
 * and connected to: its scheme and host are the bridge's, never the reply's.
 */
export function signatureNote(signature: UsableSignature, agent: string, baseUrl: string): string {
  if (signature === 'verified') return `Reply signature: verified against the card of ${agent}.`;
  const { protocol, host } = new URL(baseUrl);
  const how =
    protocol === 'https:' ? `HTTPS from ${host}` : `plain HTTP from ${host} (a loopback test address)`;
  return `Reply signature: unsigned: this agent's software does not sign replies; it came over ${how}.`;
}
