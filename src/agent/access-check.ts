import type { AdmissionRule } from '../protocol/console-api.js';
import type { Mode } from '../protocol/index.js';

/** The keys that verified a call: what an approval is bound to (issue 15, finding 2). */
export interface SigningKeys {
  /** Raw public keys (base64), one per signature form present (both forms: both keys); none for our own. */
  keys: string[];
  /** The operator pinned the sender's key (`trustedPeerKeys`): their own word for who holds the id. */
  pinned: boolean;
}

/** A call that passed steps 1-7, as the access policy sees it. */
export interface AccessRequest {
  /** The verified sender (or `unsigned:<address>`). */
  sender: string;
  unsigned: boolean;
  mode: Mode;
  payload: Record<string, unknown>;
  /** The keys its signatures verified with; absent when unsigned. */
  signedWith?: SigningKeys;
}

/**
 * Admitted with the rule that let it through, or (async only) held: the task waits with this id until the
 * operator decides. Refusals are thrown as ProtocolErrors with step `access`.
 */
export type AccessVerdict =
  { admitted: true; rule: AdmissionRule } | { admitted: false; held: { code: string; taskId: string } };

/** Who may reach the skills (src/access implements it; the pipeline only asks). */
export interface AccessCheck {
  admit(request: AccessRequest): AccessVerdict;
  /** Gives back a held-task slot reserved by `admit` when the task could not be created. */
  release(sender: string, taskId: string): void;
}
