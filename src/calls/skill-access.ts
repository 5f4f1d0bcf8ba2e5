import { DEFAULT_SKILL, ProtocolError, type RefusalStep } from '../protocol/index.js';
import type { SkillAudience, SkillLimits } from '../protocol/skills.js';

/**
 * Who may call which skill (issue 27, item 3), for both front doors: what the operator granted a caller,
 * the rule each skill's audience sets on it, and where a caller's calls to one skill are counted. Pure: the
 * access lists (src/access) and the A2A keys say what was granted; this says what it opens.
 */

/** What the operator granted a caller, and what the access policy lets in without a grant. */
export interface SkillGrant {
  /** The operator's consent: an approved SAMVAD sender (an allowed peer, our own id), an A2A key holder. */
  approved: boolean;
  /**
   * The skills that consent opens, exactly: a `named` skill included, any skill not listed excluded (a
   * public one too, unless the policy lets everyone in). Absent: every public and approved skill.
   */
  skills?: readonly string[];
  /** The access policy is `open`: public skills are everyone's, whatever a scope says. */
  open: boolean;
}

/** A caller nobody approved, under a policy that is not `open`. */
export const NO_GRANT: SkillGrant = { approved: false, open: false };

/**
 * The refusal of a caller outside the skill's audience (AUTH_FAILED 403, naming what to ask for), or
 * undefined when the skill is theirs to call. A public skill is everyone's the access policy admits (the
 * policy then decides, e.g. `pairing` holds a new sender); an approved one needs the operator's consent,
 * scoped to it or not; a named one a consent that names it.
 */
export function audienceRefusal(
  skill: { id: string; audience: SkillAudience },
  grant: SkillGrant,
  step: RefusalStep,
): ProtocolError | undefined {
  const { id, audience } = skill;
  if (audience === 'public' && grant.open) return undefined;
  const ask = `ask this agent's operator for access to skill "${id}"`;
  if (grant.skills) {
    if (grant.skills.includes(id)) return undefined;
    return forbidden(
      `Your access to this agent opens ${grant.skills.map((skill) => `"${skill}"`).join(', ')} only, not skill "${id}": ${ask}.`,
      step,
    );
  }
  if (audience === 'public') return undefined;
  if (audience === 'approved') {
    if (grant.approved) return undefined;
    return forbidden(`Skill "${id}" is open only to callers this agent's operator approved: ${ask}.`, step);
  }
  return forbidden(
    `Skill "${id}" is open only to callers this agent's operator named for it one by one: ${ask}.`,
    step,
  );
}

function forbidden(message: string, step: RefusalStep): ProtocolError {
  return new ProtocolError('AUTH_FAILED', 403, message, { step });
}

/**
 * Where a caller's calls to a skill are counted (its requests per minute and tokens a day): the caller's
 * own account for the default skill, as before skills existed; one account per skill for the others.
 * Caller ids never start with `skill:` (agent://, unsigned:, a2a-key:, a2a-anon:).
 */
export function skillAccount(caller: string, skill: string): string {
  return skill === DEFAULT_SKILL ? caller : `skill:${skill}:${caller}`;
}

/**
 * The limits of one caller's calls to one skill: the stricter of the skill's own and the caller's own (an
 * A2A key issued with limits), each limit neither sets being the per-sender setting's (left undefined).
 */
export function callerLimits(skill: SkillLimits | undefined, caller: SkillLimits | undefined): SkillLimits {
  const requestsPerMinute = lower(skill?.requestsPerMinute, caller?.requestsPerMinute);
  const tokensPerDay = lower(skill?.tokensPerDay, caller?.tokensPerDay);
  const limits: SkillLimits = {};
  if (requestsPerMinute !== undefined) limits.requestsPerMinute = requestsPerMinute;
  if (tokensPerDay !== undefined) limits.tokensPerDay = tokensPerDay;
  return limits;
}

function lower(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.min(a, b);
}
