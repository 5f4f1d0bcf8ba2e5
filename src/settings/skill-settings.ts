// The `skills` setting (issue 27): the skills the operator publishes beside `chat`, each on its own OpenClaw
// agent. Its JSON Schema (what `conf` and the settings store check), and the same rules in words, each
// problem naming the skill and the field, with the rules one skill cannot state about the others.
import { printable } from '../lib/text.js';
import { DEFAULT_SKILL, MAX_SKILLS, SKILL_ID_PATTERN, isSkillId } from '../protocol/skill-ids.js';
import type { SkillAudience, SkillSetting } from '../protocol/skills.js';

const AUDIENCES: readonly SkillAudience[] = ['public', 'approved', 'named'];
const AGENT_ID_PATTERN = '^[A-Za-z0-9._-]{1,64}$';
const AGENT_ID = new RegExp(AGENT_ID_PATTERN);
export const MAX_EXAMPLES = 5;
const LIMITS = { requestsPerMinute: [1, 1_000_000], tokensPerDay: [1, 1_000_000_000] } as const;

/** One skill's JSON Schema (the setting is a list of these). */
const skillSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'description', 'examples', 'agent', 'audience', 'limits', 'paused'],
  properties: {
    id: { type: 'string', pattern: SKILL_ID_PATTERN },
    name: { type: 'string', minLength: 1, maxLength: 100 },
    description: { type: 'string', minLength: 1, maxLength: 500 },
    examples: {
      type: 'array',
      maxItems: MAX_EXAMPLES,
      items: { type: 'string', minLength: 1, maxLength: 200 },
    },
    agent: { type: 'string', pattern: AGENT_ID_PATTERN },
    audience: { type: 'string', enum: [...AUDIENCES] },
    limits: {
      type: 'object',
      additionalProperties: false,
      properties: {
        requestsPerMinute: {
          type: 'integer',
          minimum: LIMITS.requestsPerMinute[0],
          maximum: LIMITS.requestsPerMinute[1],
        },
        tokensPerDay: { type: 'integer', minimum: LIMITS.tokensPerDay[0], maximum: LIMITS.tokensPerDay[1] },
      },
    },
    paused: { type: 'boolean' },
    sandboxNetwork: { type: 'boolean' },
    accepted: {
      type: 'object',
      additionalProperties: false,
      required: ['tools', 'at'],
      properties: {
        tools: { type: 'array', maxItems: 500, items: { type: 'string', minLength: 1, maxLength: 200 } },
        at: { type: 'string', format: 'date-time' },
      },
    },
  },
} as const;

export const skillsSchema = { type: 'array', maxItems: MAX_SKILLS, items: skillSchema } as const;

export const SKILLS_RULE =
  'must be a list of skills, each {id, name, description, examples, agent, audience, limits, paused}: see "Skills" in the README';

/**
 * Every problem of a `skills` value, each one sentence that names the skill and the field (`skills[1]
 * "research".audience: must be ...`); none when it is valid. Beside the schema's rules: ids unique, and
 * none of them `chat` (the built-in skill).
 */
export function skillsProblems(value: unknown): string[] {
  if (!Array.isArray(value)) return [`skills: ${SKILLS_RULE}`];
  const problems: string[] = [];
  if (value.length > MAX_SKILLS) problems.push(`skills: at most ${MAX_SKILLS} skills beside chat`);
  const seen = new Set<string>();
  value.forEach((skill: unknown, index) => {
    const id = (skill as { id?: unknown } | null)?.id;
    const where = `skills[${index}]${isSkillId(id) ? ` "${id}"` : ''}`;
    problems.push(...skillProblems(skill).map((problem) => `${where}${problem}`));
    if (isSkillId(id)) {
      if (seen.has(id)) problems.push(`${where}.id: is taken by another skill: each skill needs its own id`);
      seen.add(id);
    }
  });
  return problems;
}

/** One skill's problems, each `.field: what it must be` (or `: ...` for the skill as a whole). */
export function skillProblems(value: unknown): string[] {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return [': must be an object {id, name, description, examples, agent, audience, limits, paused}'];
  const skill = value as Record<string, unknown>;
  const problems: string[] = [];
  const known = Object.keys(skillSchema.properties);
  for (const field of Object.keys(skill)) {
    if (!known.includes(field)) problems.push(`.${field}: is not a skill field: use ${known.join(', ')}`);
  }
  const field = (name: string, ok: boolean, rule: string) => {
    if (!ok) problems.push(`.${name}: ${rule}`);
  };
  field(
    'id',
    isSkillId(skill.id) && skill.id !== DEFAULT_SKILL,
    skill.id === DEFAULT_SKILL
      ? 'chat is the built-in skill: choose another id'
      : 'must be 1 to 40 lower-case letters, digits or dashes, starting with a letter or digit (it is in the cards and the A2A paths)',
  );
  field('name', isLine(skill.name, 100), 'must be one line of 1 to 100 characters (the cards show it)');
  field(
    'description',
    isText(skill.description, 500),
    'must be a text of 1 to 500 characters (the cards show it)',
  );
  field(
    'examples',
    Array.isArray(skill.examples) &&
      skill.examples.length <= MAX_EXAMPLES &&
      skill.examples.every((example) => isLine(example, 200)),
    `must be a list of at most ${MAX_EXAMPLES} sample requests, each one line of 1 to 200 characters`,
  );
  field(
    'agent',
    typeof skill.agent === 'string' && AGENT_ID.test(skill.agent),
    'must be an OpenClaw agent id: 1 to 64 letters, digits, dots, dashes or underscores (the skill runs on openclaw/<agent>)',
  );
  field(
    'audience',
    AUDIENCES.includes(skill.audience as SkillAudience),
    `must be one of: ${AUDIENCES.join(', ')}`,
  );
  problems.push(...limitsProblems(skill.limits));
  field('paused', typeof skill.paused === 'boolean', 'must be true or false');
  field(
    'sandboxNetwork',
    skill.sandboxNetwork === undefined || typeof skill.sandboxNetwork === 'boolean',
    'must be true or false',
  );
  if (skill.accepted !== undefined) {
    const accepted = skill.accepted as { tools?: unknown; at?: unknown } | null;
    field(
      'accepted',
      !!accepted &&
        typeof accepted === 'object' &&
        Object.keys(accepted).every((key) => key === 'tools' || key === 'at') &&
        Array.isArray(accepted.tools) &&
        accepted.tools.every((tool) => typeof tool === 'string' && tool.length > 0 && tool.length <= 200) &&
        typeof accepted.at === 'string' &&
        Number.isFinite(Date.parse(accepted.at)),
      'must be {tools, at}: the tools the operator accepted and when (set it with POST /api/skills/<id>/accept)',
    );
  }
  return problems;
}

function limitsProblems(value: unknown): string[] {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return ['.limits: must be {"requestsPerMinute": N, "tokensPerDay": N}, each left out for the default'];
  const problems: string[] = [];
  for (const [name, limit] of Object.entries(value)) {
    const range = LIMITS[name as keyof typeof LIMITS] as readonly [number, number] | undefined;
    if (!range) problems.push(`.limits.${name}: is not a limit: use requestsPerMinute and tokensPerDay`);
    else if (!Number.isSafeInteger(limit) || (limit as number) < range[0] || (limit as number) > range[1])
      problems.push(
        `.limits.${name}: must be a whole number from ${range[0]} to ${range[1].toLocaleString('en-US')}; leave it out for the per-sender default`,
      );
  }
  return problems;
}

function isLine(value: unknown, max: number): boolean {
  return (
    typeof value === 'string' &&
    value.trim().length > 0 &&
    value.length <= max &&
    printable(value) === value &&
    !/[\u2028\u2029]/.test(value)
  );
}

/** A description: lines of printable text (line breaks allowed, no other control character). */
function isText(value: unknown, max: number): boolean {
  return (
    typeof value === 'string' &&
    value.split('\n').every((line) => line === '' || isLine(line, max)) &&
    value.trim().length > 0 &&
    value.length <= max
  );
}

/** The setting as stored, with its optional parts only when set: the form every writer keeps. */
export function normalSkill(skill: SkillSetting): SkillSetting {
  return {
    id: skill.id,
    name: skill.name.trim(),
    description: skill.description.trim(),
    examples: skill.examples.map((example) => example.trim()),
    agent: skill.agent,
    audience: skill.audience,
    limits: {
      ...(skill.limits.requestsPerMinute === undefined
        ? {}
        : { requestsPerMinute: skill.limits.requestsPerMinute }),
      ...(skill.limits.tokensPerDay === undefined ? {} : { tokensPerDay: skill.limits.tokensPerDay }),
    },
    paused: skill.paused,
    ...(skill.sandboxNetwork === undefined ? {} : { sandboxNetwork: skill.sandboxNetwork }),
    ...(skill.accepted ? { accepted: { tools: [...skill.accepted.tools], at: skill.accepted.at } } : {}),
  };
}
