// The rules a published skill is held to, whatever the operator clicks (issue 27, item 3): its agent is
// on the gateway and its config file is what the gateway runs; its tools are no wider than its audience
// may reach (WIDEST_CLASS: a public skill is none or web, sandboxed needs approved callers, host named
// ones); and a host skill serves only once the operator accepted it with exactly the tools it has now.
// Pure: the view of its agent is the caller's (skill-targets.ts).
import type { SkillServing, SkillView } from '../protocol/console-api.js';
import {
  TOOL_CLASSES,
  WIDEST_CLASS,
  type SkillAudience,
  type SkillSetting,
  type ToolClass,
  type ToolClassView,
} from '../protocol/skills.js';
import { sameTools } from './gateway-target.js';
import type { SkillTarget } from './skill-targets.js';

const AUDIENCES: readonly SkillAudience[] = ['public', 'approved', 'named'];

/** Whether tools of this class are wider than the audience may reach. */
export function beyondAudience(toolClass: ToolClass, audience: SkillAudience): boolean {
  return TOOL_CLASSES.indexOf(toolClass) > TOOL_CLASSES.indexOf(WIDEST_CLASS[audience]);
}

/** The widest audience tools of this class may be opened to. */
export function widestAudience(toolClass: ToolClass): SkillAudience {
  return AUDIENCES.find((audience) => !beyondAudience(toolClass, audience)) ?? 'named';
}

/** A host skill's acceptance: of exactly its tools now, of others (they changed since), or none yet. */
export function skillAcceptance(
  setting: Pick<SkillSetting, 'accepted'>,
  tools: ToolClassView,
): SkillView['acceptance'] {
  if (tools.class !== 'host') return undefined;
  const accepted = setting.accepted;
  if (!accepted) return { state: 'needed' };
  if (sameTools(accepted.tools, tools.tools)) return { state: 'accepted', at: accepted.at };
  return { state: 'changed', tools: [...accepted.tools], at: accepted.at };
}

/** Whether the skill serves now, and if not, why and what to do (for the operator: the caller hears less). */
export function skillServing(setting: SkillSetting, target: SkillTarget): SkillServing {
  const { id, agent, audience } = setting;
  const { tools } = target;
  const refused = (
    reason: Exclude<SkillServing, { serving: true }>['reason'],
    message: string,
    fix: string,
  ) => ({ serving: false, reason, message, fix }) as const;
  if (setting.paused) {
    return refused(
      'paused',
      `Skill "${id}" is paused: the cards do not list it, and callers are told there is no such skill.`,
      'Resume it on the Skills page when it should serve again.',
    );
  }
  if (target.agent.check === 'missing') {
    const has = target.agent.available?.length ? ` (it has ${target.agent.available.join(', ')})` : '';
    return refused(
      'agent-missing',
      `The gateway has no agent "${agent}"${has}, so skill "${id}" forwards nothing.`,
      `Add the agent "${agent}" to the OpenClaw config (OpenClaw applies it without a restart), or run the skill on an existing agent.`,
    );
  }
  if (target.agent.notLoaded) {
    return refused(
      'unverified',
      `The gateway does not run what its config file says (${target.agent.notLoaded}), so the tools skill "${id}" would reach cannot be told.`,
      'Run `openclaw config validate` where the gateway runs and fix what it reports (the gateway reloads a valid file by itself), then check again.',
    );
  }
  if (beyondAudience(tools.class, audience)) {
    return refused(
      'audience',
      `Skill "${id}" is ${audience}, and its agent "${agent}" is ${describe(tools)}: a ${audience} skill may reach ${WIDEST_CLASS[audience]} tools at most.`,
      `Give agent "${agent}" fewer tools, or open the skill to ${widestAudience(tools.class)} callers only.`,
    );
  }
  const acceptance = skillAcceptance(setting, tools);
  if (acceptance?.state === 'needed') {
    return refused(
      'acceptance-needed',
      `Skill "${id}" reaches this machine (agent "${agent}" is ${describe(tools)}) and you have not accepted that.`,
      'If its named callers are to reach these tools, accept the skill with exactly these tools on the Skills page.',
    );
  }
  if (acceptance?.state === 'changed') {
    return refused(
      'tools-changed',
      `The tools of skill "${id}" changed since you accepted it (then: ${list(acceptance.tools)}; now: ${list(tools.tools)}).`,
      'Look at its tools on the Skills page and accept them again if its named callers are to reach them.',
    );
  }
  return { serving: true };
}

function describe(tools: ToolClassView): string {
  return tools.tools.length > 0 ? `${tools.class} (${tools.tools.join(', ')})` : tools.class;
}

function list(tools: readonly string[]): string {
  return tools.length > 0 ? tools.join(', ') : 'none named';
}
