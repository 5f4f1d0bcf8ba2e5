// The operator's changes to the published skills (the Skills page: add, edit, pause, remove, accept), each
// checked whole before anything is saved: the setting's rules (settings/skill-settings.ts), and the rules
// a skill is held to against its agent's tools as they are now (bridge/skill-rule.ts). A public skill
// whose agent reaches more than web tools cannot be made through here; the rule is enforced again at every
// call, whatever the settings file says.
import { beyondAudience, widestAudience } from '../bridge/skill-rule.js';
import { sameTools } from '../bridge/gateway-target.js';
import type { SkillTarget } from '../bridge/skill-targets.js';
import { DEFAULT_SKILL, MAX_SKILLS } from '../protocol/skill-ids.js';
import { WIDEST_CLASS, type SkillSetting } from '../protocol/skills.js';
import { normalSkill, skillProblems } from '../settings/skill-settings.js';

/** A change the skills refuse; the message, fix and fields are for the operator. */
export class SkillEditError extends Error {
  constructor(
    readonly status: 400 | 404 | 409,
    message: string,
    readonly fix: string,
    readonly fields?: { field: string; message: string }[],
  ) {
    super(message);
    this.name = 'SkillEditError';
  }
}

/** A skill's agent as it is now (read afresh: a change is judged on the file as it is, not as last seen). */
export type TargetNow = (skill: SkillSetting) => SkillTarget;

const EDITABLE = [
  'name',
  'description',
  'examples',
  'agent',
  'audience',
  'limits',
  'paused',
  'sandboxNetwork',
];

/** POST /api/skills: the skills with `body` added (published unless it says paused). */
export function addSkill(skills: SkillSetting[], body: unknown, targetNow: TargetNow): SkillSetting[] {
  const input = object(
    body,
    'Send {"id", "name", "description", "agent", "audience"}, and the rest if you want.',
  );
  if (input.id === DEFAULT_SKILL) throw builtIn('is added');
  if (typeof input.id === 'string' && skills.some((skill) => skill.id === input.id)) {
    throw new SkillEditError(
      409,
      `There is a skill "${input.id}" already; nothing was added.`,
      'Choose another id, or edit that skill (PUT /api/skills/<id>).',
      [{ field: 'id', message: 'is taken by another skill' }],
    );
  }
  if (skills.length >= MAX_SKILLS) {
    throw new SkillEditError(
      409,
      `There are ${MAX_SKILLS} skills beside chat, the most this agent publishes; nothing was added.`,
      'Remove a skill no longer offered, then add this one.',
    );
  }
  if (input.accepted !== undefined) throw acceptedNotHere();
  const skill = checked(
    { examples: [], limits: {}, paused: false, ...input } as unknown as SkillSetting,
    'added',
  );
  checkRule(skill, targetNow);
  return [...skills, skill];
}

/**
 * PUT /api/skills/:id: the fields sent changed. A new agent, or a change of its sandbox's network, asks for
 * the operator's acceptance again; the audience rule is checked when the agent, the audience or the sandbox
 * change, or when the skill is resumed (a paused skill may be renamed, or paused, whatever its tools).
 */
export function editSkill(
  skills: SkillSetting[],
  id: string,
  body: unknown,
  targetNow: TargetNow,
): SkillSetting[] {
  const current = find(skills, id, 'edited');
  const input = object(body, 'Send the fields to change, for example {"paused": true}.');
  if (input.accepted !== undefined) throw acceptedNotHere();
  const fixed = Object.keys(input).filter((field) => !EDITABLE.includes(field));
  if (fixed.length > 0) {
    throw new SkillEditError(
      400,
      `Skill "${id}" was not changed: ${fixed.join(', ')} cannot be edited here.`,
      `Change ${EDITABLE.join(', ')}; a skill's id stays (add a new skill and remove this one to rename it).`,
      fixed.map((field) => ({ field, message: 'cannot be edited' })),
    );
  }
  const next = { ...current, ...input } as SkillSetting;
  if (input.sandboxNetwork === null) delete next.sandboxNetwork;
  // Acceptance is of this agent with these tools: another agent, or another sandbox, asks again.
  if (next.agent !== current.agent || next.sandboxNetwork !== current.sandboxNetwork) delete next.accepted;
  const skill = checked(next, 'changed');
  const widens = ['agent', 'audience', 'sandboxNetwork'].some((field) => field in input) || current.paused;
  if (widens) checkRule(skill, targetNow);
  return skills.map((each) => (each.id === id ? skill : each));
}

/** DELETE /api/skills/:id. Keys and approvals that name it keep the name (a skill added again later reopens). */
export function removeSkill(skills: SkillSetting[], id: string): SkillSetting[] {
  find(skills, id, 'removed');
  return skills.filter((skill) => skill.id !== id);
}

/**
 * POST /api/skills/:id/accept with `{"tools": [...]}`: the operator lets the skill's named callers reach
 * exactly these host tools, as the Skills page showed them. Refused when they are not its tools now.
 */
export function acceptSkill(
  skills: SkillSetting[],
  id: string,
  body: unknown,
  targetNow: TargetNow,
  now: number,
): SkillSetting[] {
  const current = find(skills, id, 'accepted');
  const tools = (body as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(tools) || !tools.every((tool): tool is string => typeof tool === 'string')) {
    throw new SkillEditError(
      400,
      'The body must list the tools you accept.',
      'Send {"tools": ["exec", "read"]}, as the Skills page shows them.',
    );
  }
  const { tools: seen } = targetNow(current);
  if (seen.class !== 'host') {
    throw new SkillEditError(
      409,
      `Skill "${id}" does not reach this machine (its agent is ${seen.class}): there is nothing to accept.`,
      'Nothing to do: it serves its audience without an acceptance.',
    );
  }
  if (current.audience !== 'named') {
    throw new SkillEditError(
      409,
      `Skill "${id}" reaches this machine, which only callers named for it one by one may: it is ${current.audience}; nothing was accepted.`,
      'Make the skill named first (PUT /api/skills/<id> {"audience": "named"}), then accept its tools.',
    );
  }
  if (!sameTools(tools, seen.tools)) {
    throw new SkillEditError(
      409,
      `Skill "${id}" does not have exactly those tools now, so nothing was accepted.`,
      'Its tools changed since the page was loaded: look at the skill again and accept what it shows.',
    );
  }
  const accepted = { tools: [...seen.tools].sort(), at: new Date(now).toISOString() };
  return skills.map((skill) => (skill.id === id ? { ...skill, accepted } : skill));
}

/** Its tools no wider than its audience may reach, judged on its agent as it is now. */
function checkRule(skill: SkillSetting, targetNow: TargetNow): void {
  if (skill.paused) return;
  const { tools } = targetNow(skill);
  if (!beyondAudience(tools.class, skill.audience)) return;
  const named = tools.tools.length > 0 ? ` (${tools.tools.join(', ')})` : '';
  const message = `a ${skill.audience} skill may reach ${WIDEST_CLASS[skill.audience]} tools at most, and agent "${skill.agent}" is ${tools.class}${named}`;
  throw new SkillEditError(
    409,
    `Skill "${skill.id}" was not saved: ${message}. ${tools.detail}`,
    `Give agent "${skill.agent}" fewer tools, or open the skill to ${widestAudience(tools.class)} callers only.`,
    [{ field: 'audience', message }],
  );
}

function checked(skill: SkillSetting, what: 'added' | 'changed'): SkillSetting {
  const problems = skillProblems(skill);
  if (problems.length > 0) {
    const fields = problems.map((problem) => {
      const field = /^\.([A-Za-z.]+):/.exec(problem)?.[1] ?? 'skill';
      return { field, message: problem.replace(/^\.?[A-Za-z.]*: /, '') };
    });
    throw new SkillEditError(
      400,
      `The skill was not ${what}: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}.`,
      'Correct the fields named and save again.',
      fields,
    );
  }
  return normalSkill(skill);
}

function find(skills: SkillSetting[], id: string, what: string): SkillSetting {
  if (id === DEFAULT_SKILL) throw builtIn(`is ${what}`);
  const skill = skills.find((each) => each.id === id);
  if (!skill) {
    throw new SkillEditError(
      404,
      `There is no skill "${id.slice(0, 64)}".`,
      'Pick a skill from the list (GET /api/skills).',
    );
  }
  return skill;
}

function object(body: unknown, fix: string): Record<string, unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new SkillEditError(400, 'The body must be a JSON object.', fix);
  return body as Record<string, unknown>;
}

function builtIn(what: string): SkillEditError {
  return new SkillEditError(
    409,
    `chat is the built-in skill: it is not ${what.replace(/^is /, '')} here.`,
    'Chat runs on the gatewayAgent setting (Settings > Gateway), and an agent with host tools is accepted for it on the Overview.',
  );
}

function acceptedNotHere(): SkillEditError {
  return new SkillEditError(
    400,
    'A skill is accepted with its tools as they are, not in its setting.',
    'Accept it with POST /api/skills/<id>/accept {"tools": [...]}, once it is saved.',
    [{ field: 'accepted', message: 'is set by POST /api/skills/<id>/accept' }],
  );
}
