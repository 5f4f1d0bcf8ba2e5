import type { SkillGrant } from '../calls/skill-access.js';
import type { AdmissionRule } from '../protocol/console-api.js';
import type { Mode } from '../protocol/index.js';

/** The keys that verified a call: what an approval is bound to (issue 15, finding 2). */
export interface SigningKeys {
  /** Raw public keys (base64), one per signature form present (both forms: both keys); none for our own. */
  keys: string[];
  /** The operator pinned the sender's key (`trustedPeerKeys`): their own word for who holds the id. */
  pinned: boolean;
}

/** A call whose signature verified (or an unsigned one), as the access policy sees it. */
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
 * An async call held for the operator: its request's code, the task's id, and the keys that signed it (the
 * task runs on approval only if that approval covers them: the id may have changed hands while it waited).
 */
export interface HeldCall {
  code: string;
  taskId: string;
  signedWith: SigningKeys;
}

/**
 * Admitted with the rule that let it through, or (async only) held: the task waits with this id until the
 * operator decides. Refusals are thrown as ProtocolErrors with step `access`.
 */
export type AccessVerdict = { admitted: true; rule: AdmissionRule } | { admitted: false; held: HeldCall };

/**
 * Who may reach the skills (src/access implements it; the pipeline only asks), in two steps around the
 * limits and the nonce, so that a sender who will be refused never spends the agent-wide rate limit.
 */
export interface AccessCheck {
  /**
   * Step 3b, in memory, before any limit or nonce: the rule that admits the sender, or undefined for a
   * sender the operator has not decided on (pairing: new, waiting with room for a held task, or signing
   * with a key its approval does not know), who asks at `admit` after its own small rate limit. Throws the
   * refusals memory knows (denied, not on the allowlist, waiting, the list full): they cost nothing.
   */
  precheck(request: AccessRequest): AdmissionRule | undefined;
  /**
   * Step 8, once the call is counted, its nonce recorded and its input valid: an approved sender's signing
   * key announces its card's active keys; an undecided one enters the pending list (async: held), or is
   * admitted if the operator decided meanwhile.
   */
  admit(request: AccessRequest, rule: AdmissionRule | undefined): AccessVerdict;
  /** Gives back a held-task slot reserved by `admit` when the task could not be created. */
  release(sender: string, taskId: string): void;
  /**
   * What the operator granted the caller, in memory (step 4, the skill's audience): its approval, bound to
   * the keys that signed (an allowed peer and our own id count as approved), and that approval's scope.
   */
  grant(request: AccessRequest): SkillGrant;
  /**
   * Whether a call of `sender` signed with these keys is admitted now without asking: a held task runs on
   * approval only then (an approval binds the keys its request announced, not those of whoever held a
   * task on that request since).
   */
  admitsNow(sender: string, signedWith: SigningKeys): boolean;
}
