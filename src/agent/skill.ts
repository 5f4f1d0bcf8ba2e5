import type { AdmissionRule, TrafficFile } from '../protocol/console-api.js';
import type { Envelope, Mode, SkillDef, Trust } from '../protocol/index.js';
import type { SkillAudience, SkillLimits } from '../protocol/skills.js';

/** How a keyless A2A caller's id begins (`a2a-anon:<address>`, the `open` policy), where made and read. */
export const KEYLESS_A2A_CALLER = 'a2a-anon:';
/** How an unsigned SAMVAD caller's id begins (`unsigned:<address>`, allow-unsigned), where made and read. */
export const UNSIGNED_CALLER = 'unsigned:';

/** Who is calling, as verified by the pipeline: what a skill may tell its backend about the caller. */
export interface CallerInfo {
  /** The verified agent:// id (or `unsigned:<address>`). */
  id: string;
  /** The name on the caller's card (self-declared, unverified, one short line). */
  name?: string;
  /** The skill's trust tier the call passed. */
  trust: Trust;
  /** The access rule that admitted the caller. */
  admittedBy: AdmissionRule;
  /** The injection screen's match, when it flagged the message and let it through. */
  screened?: { rule: string };
  /** The agent the caller acts for: the issuer of a delegation token that verified (PROTOCOL.md §9). */
  onBehalfOf?: string;
  /** That token's scope: the skill ids the issuer allowed (its own words, unchecked beyond this call's). */
  delegationScope?: string[];
  /** An A2A caller (`a2a-key:<id>` or `a2a-anon:<address>`); absent: SAMVAD. */
  a2a?: { keyIssuedAt?: string };
}

/** What a skill handler gets for one verified call. */
export interface SkillContext {
  envelope: Envelope;
  /** The verified sender's agent:// id (or `unsigned:<address>` when unsigned calls are allowed). */
  sender: string;
  payload: Record<string, unknown>;
  caller: CallerInfo;
  mode: Mode;
  /** Aborted when the caller goes away (sync, stream) or the agent shuts down. */
  signal: AbortSignal;
  /** Streams a piece of the result to the caller (stream mode); a no-op in other modes. */
  emit(chunk: string): void;
  /** Progress of an async task, 0..1. */
  progress(fraction: number): void;
  /**
   * Tokens this call cost, for the sender's daily budget; `prompt`, when the backend reported it, is the
   * size of the prompt it ran (the smallest one becomes the prompt floor).
   */
  reportUsage(tokens: number, prompt?: number): void;
  /** The smallest prompt the backend reported so far (what any turn costs at least), 0 until one is known. */
  promptFloor: number;
}

/**
 * A skill as registered in code: its public definition (what the card shows) plus a handler.
 * `streamStyle: 'named'` adds the named status/result/error/done events of PROTOCOL.md §7 (the chat skill);
 * 'generic' sends only the unnamed chunk/done blocks.
 */
export interface Skill<R = unknown> extends SkillDef {
  streamStyle?: 'generic' | 'named';
  /**
   * Who may call it (protocol/skills.ts), checked at step 4 beside the trust tier (calls/skill-access.ts);
   * none: every caller the trust tier and the access policy admit.
   */
  audience?: SkillAudience;
  /** Each caller's own limits on it, counted on its account with the skill (skillAccount); none: the sender's. */
  limits?: SkillLimits;
  /**
   * What a call may cost in tokens, held against its sender's daily budget while it runs (then replaced by
   * what it reported): concurrent calls cannot all pass a budget none of them is charged to yet. None: the
   * skill's calls reserve nothing.
   */
  budgetEstimate?(payload: Record<string, unknown>, promptFloor: number): number;
  /**
   * Reads what the payload carries beside its plain fields, at step 7 once the schema passed (the chat
   * skills' `attachments`, read as the turn will take them): tells `noteFiles` what Traffic shows of them,
   * throws the refusal of what the skill cannot take (a ProtocolError), and returns what the injection screen
   * reads instead of the payload (their text, not their base64). Undefined: the payload is screened as it is.
   */
  readInput?(payload: Record<string, unknown>, noteFiles: (files: TrafficFile[]) => void): unknown;
  handler(context: SkillContext): Promise<R>;
}
