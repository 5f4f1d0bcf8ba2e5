import { a2aKeyCaller, type A2AKeys } from '../access/a2a-keys.js';
import type { A2AKeyLimits, AccessPolicy } from '../protocol/console-api.js';
import { KEYLESS_A2A_CALLER } from '../agent/skill.js';
import { addressBucketOf, forwardedHop } from '../agent/client-address.js';
import { authFailed } from '../protocol/index.js';
import { KnownCallerRefused, type A2ACaller, type A2AGate, type A2ARequestInfo } from './chat-core.js';

/** An A2A caller as the key gate establishes it. */
export interface A2AKeyCaller extends A2ACaller {
  /** The key it presented; absent for a keyless caller (policy `open`). */
  readonly keyId?: string;
  /** When the operator issued that key (ISO 8601): the framing says so. */
  readonly issuedAt?: string;
  /** The key's own limits; each one not set (all, for a keyless caller) is the per-sender default. */
  readonly limits: A2AKeyLimits;
  /** The skills its key opens, exactly; absent: every public and approved skill (none for a keyless caller). */
  readonly skills?: readonly string[];
}

export interface A2AKeyGateOptions {
  keys: Pick<A2AKeys, 'verify'>;
  /** Under `open`, callers without a key are let in (with the limits of one address). */
  policy(): AccessPolicy;
  /**
   * Whether a keyless caller may knock now (the `pairing` policy, with a knock door: src/a2a/knock.ts): it is
   * let in as a knocker, whose messages wait for the operator. Absent or false: refused (401) as before.
   */
  knocking?(): boolean;
}

const NO_KEY =
  'This agent takes A2A calls from holders of an A2A key only: ask the operator of this agent for one, and send it with every request as `Authorization: Bearer <key>`.';
const NOT_BEARER =
  "The Authorization header must be `Bearer <A2A key>`: send the key this agent's operator gave you as `Authorization: Bearer abk_...`.";

/**
 * Who an A2A request comes from (A2AGate.authenticate): the holder of an operator-issued key, or under the
 * `open` policy a keyless caller named by its address (as unsigned SAMVAD calls are). A key that is present
 * but wrong, revoked or expired is refused under every policy: a caller that meant to be someone is not
 * quietly made anonymous. `admit` is the shared admission core's.
 */
export class A2AKeyGate implements Pick<A2AGate<A2AKeyCaller>, 'authenticate'> {
  constructor(private readonly options: A2AKeyGateOptions) {}

  async authenticate(request: A2ARequestInfo): Promise<A2AKeyCaller> {
    const header = request.headers.authorization?.trim();
    if (!header) {
      const policy = this.options.policy();
      if (policy === 'open') return anonymous(request.remoteAddress);
      if (policy === 'pairing' && this.options.knocking?.()) return knocker(request);
      throw authFailed(NO_KEY, 'access');
    }
    const text = /^Bearer[ \t]+(\S+)$/i.exec(header)?.[1];
    if (!text) throw authFailed(NOT_BEARER, 'access');
    const verdict = await this.options.keys.verify(text);
    if (!verdict.ok) {
      const { key, refusal } = verdict;
      if (key && (refusal === 'revoked' || refusal === 'expired')) {
        throw new KnownCallerRefused(verdict.message, { id: a2aKeyCaller(key.id), name: key.name }, refusal);
      }
      throw authFailed(verdict.message, 'access');
    }
    const { key } = verdict;
    return {
      id: a2aKeyCaller(key.id),
      name: key.name,
      keyId: key.id,
      issuedAt: new Date(key.createdAt).toISOString(),
      limits: { ...key.limits },
      ...(key.skills ? { skills: [...key.skills] } : {}),
    };
  }
}

/**
 * Who a knocker is for the limits and the caps on open streams: its address, as the per-address caps count
 * it (behind the tunnel every keyless caller's socket is 127.0.0.1, but its forwarded address is its own);
 * any other caller, its id.
 */
export function countedAs(caller: A2ACaller): string {
  return caller.knock ? `a2a-knock:${caller.knock.address}` : caller.id;
}

/** Whether a caller id names a keyless caller (the `open` policy), not the holder of a key. */
export function isKeyless(callerId: string): boolean {
  return callerId.startsWith(KEYLESS_A2A_CALLER);
}

/**
 * A keyless caller: one identity per socket address, as pipeline.ts names unsigned SAMVAD callers
 * (`unsigned:<address>`); IPv4 in its plain form whatever the socket's family. Never from X-Forwarded-For:
 * a caller writes that header itself, and the id owns tasks and gateway sessions. Behind a tunnel every
 * keyless caller has one address: its conversations are minted here, never named by it (conversations.ts).
 */
function anonymous(remoteAddress: string | undefined): A2AKeyCaller {
  const address = (remoteAddress ?? 'unknown').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  return { id: `${KEYLESS_A2A_CALLER}${address}`, name: `keyless caller at ${address}`, limits: {} };
}

/**
 * A keyless caller under `pairing`: the keyless identity (its tasks are its address's, read by their ids),
 * marked as one that may only knock; its address for the knocks' bounds is the one the per-address caps
 * count (the tunnel's last X-Forwarded-For hop, never a value the caller chose).
 */
function knocker(request: A2ARequestInfo): A2AKeyCaller {
  const socket = request.remoteAddress ?? 'unknown';
  return { ...anonymous(socket), knock: { address: addressBucketOf(socket, forwardedHop(request.headers)) } };
}
