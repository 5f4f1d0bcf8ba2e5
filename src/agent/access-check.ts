import type { AdmissionRule } from '../protocol/console-api.js';
import type { Mode } from '../protocol/index.js';

/** A call that passed steps 1-7, as the access policy sees it. */
export interface AccessRequest {
  /** The verified sender (or `unsigned:<address>`). */
  sender: string;
  unsigned: boolean;
  mode: Mode;
  payload: Record<string, unknown>;
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
