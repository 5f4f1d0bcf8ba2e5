/**
 * The Skills page's words and rules, pure: what each tool class and audience means, which audiences a class
 * allows (the core's WIDEST_CLASS, so the page offers only what the console would accept), a skill's
 * scope in words, and the add/edit form's values as the request the console takes.
 */
import {
  TOOL_CLASSES,
  WIDEST_CLASS,
  type SkillAddRequest,
  type SkillAudience,
  type SkillEditRequest,
  type SkillSetting,
  type SkillView,
  type ToolClass,
} from '../api/contract';
import type { Tone } from '../components/Badge';

export const AUDIENCES: readonly SkillAudience[] = ['public', 'approved', 'named'];

export const CLASS_LABELS: Readonly<Record<ToolClass, string>> = {
  none: 'no tools',
  web: 'web search and fetch',
  sandboxed: 'shell and files in a sandbox',
  host: 'reaches this machine',
};

export const CLASS_TONES: Readonly<Record<ToolClass, Tone>> = {
  none: 'ok',
  web: 'info',
  sandboxed: 'warn',
  host: 'bad',
};

export const AUDIENCE_TITLES: Readonly<Record<SkillAudience, string>> = {
  public: 'Public',
  approved: 'Approved callers',
  named: 'Named callers only',
};

export const AUDIENCE_TEXTS: Readonly<Record<SkillAudience, string>> = {
  public:
    'Anyone your access policy admits, as for chat. Its agent may have no tools, or web search and fetch only.',
  approved:
    'Senders you approved and A2A key holders (unscoped, or scoped to it). Its agent may reach up to shell and files in a sandbox.',
  named:
    'Only keys and approvals that name this skill. The only audience for an agent that reaches this machine, which you then accept with exactly its tools.',
};

/** Whether tools of class `toolClass` may be opened to `audience` (the console refuses the others). */
export function audienceAllows(audience: SkillAudience, toolClass: ToolClass): boolean {
  return TOOL_CLASSES.indexOf(toolClass) <= TOOL_CLASSES.indexOf(WIDEST_CLASS[audience]);
}

/** Why an audience is not offered for an agent of this class, or undefined when it is. */
export function audienceRefusal(audience: SkillAudience, toolClass: ToolClass): string | undefined {
  if (audienceAllows(audience, toolClass)) return undefined;
  const widest = WIDEST_CLASS[audience];
  const article = audience === 'approved' ? 'an' : 'a';
  return `Not for this agent: it is ${toolClass} (${CLASS_LABELS[toolClass]}), and ${article} ${audience} skill may reach ${widest} tools at most (${CLASS_LABELS[widest]}).`;
}

/** The audience to start from: approved callers when the class allows it, else the narrowest. */
export function defaultAudience(toolClass: ToolClass | undefined): SkillAudience {
  return toolClass && !audienceAllows('approved', toolClass) ? 'named' : 'approved';
}

/** A key's or an approval's skills in words: exactly these, or every public and approved one. */
export function scopeText(skills: readonly string[] | undefined): string {
  return skills ? skills.join(', ') : 'every public and approved skill';
}

/** How an A2A caller's SDK client is pointed at the skill: its card's base, with the trailing slash. */
export function a2aBase(cardUrl: string): string {
  return cardUrl.replace(/\.well-known\/agent-card\.json$/, '');
}

/** The add/edit form's fields, as typed. */
export interface SkillFormValues {
  id: string;
  name: string;
  description: string;
  /** One example a line. */
  examples: string;
  agent: string;
  audience: SkillAudience;
  requestsPerMinute: string;
  tokensPerDay: string;
  sandboxNetwork: boolean;
}

export function emptyForm(): SkillFormValues {
  return {
    id: '',
    name: '',
    description: '',
    examples: '',
    agent: '',
    audience: 'approved',
    requestsPerMinute: '',
    tokensPerDay: '',
    sandboxNetwork: false,
  };
}

/** An existing skill's setting in the form. */
export function formOf(setting: SkillSetting): SkillFormValues {
  return {
    id: setting.id,
    name: setting.name,
    description: setting.description,
    examples: setting.examples.join('\n'),
    agent: setting.agent,
    audience: setting.audience,
    requestsPerMinute: setting.limits.requestsPerMinute?.toString() ?? '',
    tokensPerDay: setting.limits.tokensPerDay?.toString() ?? '',
    sandboxNetwork: setting.sandboxNetwork === true,
  };
}

/** A skill id as the console takes it (src/protocol/skill-ids.ts). */
export const SKILL_ID = /^[a-z0-9][a-z0-9-]{0,39}$/;

/** What the form lacks before the console is asked, by field (the console checks everything again). */
export function formProblems(values: SkillFormValues, adding: boolean): Record<string, string> {
  const problems: Record<string, string> = {};
  if (adding && !SKILL_ID.test(values.id))
    problems.id = 'Lower case letters, digits and dashes, starting with a letter or digit (at most 40).';
  if (values.name.trim() === '') problems.name = 'Name the skill: callers see it on the cards.';
  if (values.description.trim() === '') problems.description = 'Say what it does, in a sentence or two.';
  if (values.agent.trim() === '') problems.agent = 'Name the OpenClaw agent it runs on.';
  if (examplesOf(values.examples).length > 5) problems.examples = 'At most 5 examples, one a line.';
  for (const field of ['requestsPerMinute', 'tokensPerDay'] as const) {
    const text = values[field].trim();
    if (text !== '' && !/^[1-9]\d*$/.test(text)) problems[`limits.${field}`] = 'A whole number above 0.';
  }
  return problems;
}

function examplesOf(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}

function limitsOf(values: SkillFormValues): SkillAddRequest['limits'] {
  const limit = (text: string) => (text.trim() === '' ? undefined : Number(text.trim()));
  const rpm = limit(values.requestsPerMinute);
  const tokens = limit(values.tokensPerDay);
  return {
    ...(rpm === undefined ? {} : { requestsPerMinute: rpm }),
    ...(tokens === undefined ? {} : { tokensPerDay: tokens }),
  };
}

/** POST /api/skills from the form; `sandboxNetwork` only when it is on. */
export function addRequest(values: SkillFormValues): SkillAddRequest {
  return {
    id: values.id.trim(),
    name: values.name.trim(),
    description: values.description.trim(),
    examples: examplesOf(values.examples),
    agent: values.agent.trim(),
    audience: values.audience,
    limits: limitsOf(values),
    ...(values.sandboxNetwork ? { sandboxNetwork: true } : {}),
  };
}

/**
 * PUT /api/skills/:id from the form: only what changed, so an edit of the name is not judged as a change
 * of the agent (a widening change is judged against the agent's tools now).
 */
export function editRequest(setting: SkillSetting, values: SkillFormValues): SkillEditRequest {
  const next = addRequest(values);
  const changes: SkillEditRequest = {};
  if (next.name !== setting.name) changes.name = next.name;
  if (next.description !== setting.description) changes.description = next.description;
  if (JSON.stringify(next.examples) !== JSON.stringify(setting.examples)) changes.examples = next.examples;
  if (next.agent !== setting.agent) changes.agent = next.agent;
  if (next.audience !== setting.audience) changes.audience = next.audience;
  if (JSON.stringify(next.limits) !== JSON.stringify(setting.limits)) changes.limits = next.limits;
  if (values.sandboxNetwork !== (setting.sandboxNetwork === true))
    changes.sandboxNetwork = values.sandboxNetwork;
  return changes;
}

/** Whether a skill waits for the operator to accept its host tools (named, host, not accepted as they are). */
export function needsAcceptance(view: SkillView): boolean {
  return (
    !view.builtIn &&
    view.setting.audience === 'named' &&
    (view.acceptance?.state === 'needed' || view.acceptance?.state === 'changed')
  );
}
