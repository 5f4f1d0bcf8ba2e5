import type { SkillUsageSink } from '../bridge/chat-skill.js';
import type { FramedSkill } from '../bridge/framing.js';
import type { GatewayTurnOptions } from '../bridge/gateway-turn.js';
import type { SkillAudience, SkillLimits } from '../protocol/skills.js';

/**
 * A published skill as the caller core runs it, whichever door the call came through (src/skills builds
 * them from the settings): who may call it, each caller's limits on it, and its turn at the gateway (its
 * agent's model, and the rules it serves under). `chat` is one of them, on the restricted agent.
 */
export interface SkillRuntime {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly examples: readonly string[];
  readonly audience: SkillAudience;
  /** Its own limits per caller; none set: the per-sender settings (the default skill has none). */
  readonly limits?: SkillLimits;
  /** The gateway turn on its agent: the model, the serving rule (`targetProblem`), the outcomes. */
  readonly gateway: GatewayTurnOptions;
  /** How its agent is told of it; none for the default skill, framed as it always was. */
  readonly framing?: FramedSkill;
}

/** The published skills (paused ones are not), by id; the default skill first. */
export interface SkillDirectory {
  get(id: string): SkillRuntime | undefined;
  published(): SkillRuntime[];
  /** Where each skill's turns and tokens are counted (the Skills page's "today"). */
  readonly usage?: SkillUsageSink;
}
