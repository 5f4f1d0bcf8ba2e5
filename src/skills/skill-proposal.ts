// The OpenClaw config the console proposes for a new skill's agent (issue 27, item 4): the template's snippet
// fitted to the roster of the operator's own config file (as the restricted agent's is), the class it gives
// the agent, and the agent as it is now, so that "Check again", once the operator merged it and OpenClaw
// reloaded, says whether the agent got that class, or what in the operator's config defeated the template.
import { rosterFacts, STOCK_ROSTER, type RosterFacts } from '../bridge/agent-snippet.js';
import { skillAgentSnippet } from '../bridge/skill-snippet.js';
import type { SkillTarget } from '../bridge/skill-targets.js';
import type { OpenClawFile } from '../bridge/openclaw-file.js';
import { normalizeAgentId } from '../bridge/tool-policy.js';
import type { SkillSnippetOutcome, SkillSnippetResponse } from '../protocol/console-api.js';
import { SKILL_TEMPLATES, type SandboxBackend, type SkillTemplate } from '../protocol/skill-templates.js';
import type { SkillSetting } from '../protocol/skills.js';
import { SkillEditError } from './skill-edits.js';

export interface SkillProposalDeps {
  /** The config file as the skills' checks read it (nothing for a gateway on another machine). */
  readConfig(): { remote: true } | OpenClawFile;
  /** Where that file is: what the operator merges the snippet into. */
  configPath: string;
  /** The agent's gateway list asked now and the file read now (SkillTargets.checkNow). */
  checkNow(skill: Pick<SkillSetting, 'agent' | 'sandboxNetwork'>): Promise<SkillTarget>;
  /** The agent `chat` runs on (`gatewayAgent`). */
  chatAgent: string;
  /** The skills published now: a template must not change the tools of another skill's agent. */
  skills: SkillSetting[];
}

/** An OpenClaw agent id as the skill setting takes it (settings/skill-settings.ts). */
const AGENT_ID = /^[A-Za-z0-9._-]{1,64}$/;
const BACKENDS: readonly SandboxBackend[] = ['docker', 'podman'];

/**
 * POST /api/skills/snippet: the config for `body.agent` from `body.template` (none for `custom`), and the
 * agent as it is now. Refuses (SkillEditError) a template aimed at an agent something else runs on: the
 * snippet would change that agent's tools too.
 */
export async function proposeSkillConfig(
  body: unknown,
  deps: SkillProposalDeps,
): Promise<SkillSnippetResponse> {
  const request = parse(body);
  const { template, backend, sandboxNetwork } = request;
  const info = SKILL_TEMPLATES.find((each) => each.id === template)!;
  // The agent id as OpenClaw writes it (the snippet's, and the gateway's list).
  const agent = normalizeAgentId(request.agent);
  const file = deps.readConfig();
  const { roster, rosterNote, declared } = rosterOf(file, agent);
  if (template !== 'custom') checkNotTaken(agent, roster, deps);
  const target = await deps.checkNow({ agent, ...(sandboxNetwork ? { sandboxNetwork } : {}) });
  const snippet =
    template === 'custom'
      ? undefined
      : skillAgentSnippet(template, agent, roster, {
          ...(backend ? { backend } : {}),
          ...(sandboxNetwork ? { sandboxNetwork } : {}),
        });
  return {
    template,
    agent,
    ...(snippet ? { snippet } : {}),
    ...(info.toolClass ? { expectedClass: info.toolClass } : {}),
    mergeInto: 'remote' in file ? '~/.openclaw/openclaw.json' : deps.configPath,
    roster: rosterNote ? 'stock' : 'file',
    ...(rosterNote ? { rosterNote } : {}),
    declared,
    agentCheck: target.agent,
    tools: target.tools,
    outcome: outcomeOf(agent, info.toolClass, declared, target, 'remote' in file || !file.ok),
  };
}

interface ProposalRequest {
  template: SkillTemplate;
  agent: string;
  sandboxNetwork?: boolean;
  backend?: SandboxBackend;
}

function parse(body: unknown): ProposalRequest {
  const input = (body && typeof body === 'object' && !Array.isArray(body) ? body : {}) as Record<
    string,
    unknown
  >;
  const fields: { field: string; message: string }[] = [];
  const templates = SKILL_TEMPLATES.map((each) => each.id);
  if (!templates.includes(input.template as SkillTemplate))
    fields.push({ field: 'template', message: `must be one of ${templates.join(', ')}` });
  if (typeof input.agent !== 'string' || !AGENT_ID.test(input.agent))
    fields.push({
      field: 'agent',
      message: 'must be an OpenClaw agent id: 1 to 64 letters, digits, dots, dashes or underscores',
    });
  if (input.sandboxNetwork !== undefined && typeof input.sandboxNetwork !== 'boolean')
    fields.push({ field: 'sandboxNetwork', message: 'must be true or false' });
  if (input.backend !== undefined && !BACKENDS.includes(input.backend as SandboxBackend))
    fields.push({ field: 'backend', message: `must be ${BACKENDS.join(' or ')}` });
  if (fields.length > 0) {
    throw new SkillEditError(
      400,
      `No config was proposed: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}.`,
      'Send {"template": "research", "agent": "research"} (sandboxed: "sandboxNetwork" and "backend" too, if you want).',
      fields,
    );
  }
  return input as unknown as ProposalRequest;
}

/** A template gives its agent exactly its tools: never to the agent chat or another skill runs on. */
function checkNotTaken(agent: string, roster: RosterFacts, deps: SkillProposalDeps): void {
  const sole = roster.agents.length === 1 && roster.agents[0] === agent;
  const owner =
    agent === 'main' || agent === 'default' || sole
      ? 'your own OpenClaw agent (the one your channels and the CLI use)'
      : agent === normalizeAgentId(deps.chatAgent)
        ? 'the agent chat runs on (Settings > Gateway, "Agent for callers")'
        : deps.skills
            .filter((skill) => normalizeAgentId(skill.agent) === agent)
            .map((skill) => `the agent skill "${skill.id}" runs on`)[0];
  if (!owner) return;
  throw new SkillEditError(
    409,
    `Agent "${agent}" is ${owner}: a template would change its tools, so no config was proposed.`,
    'Name a new agent for this skill (its id, for example), or choose "Custom: an existing agent" to run the skill on that agent as it is.',
    [{ field: 'agent', message: `is ${owner}` }],
  );
}

/** The roster the snippet fits: the file's, or a stock one when the file cannot be read here (and why). */
function rosterOf(
  file: { remote: true } | OpenClawFile,
  agent: string,
): { roster: RosterFacts; rosterNote?: string; declared: boolean } {
  if ('remote' in file) {
    return {
      roster: STOCK_ROSTER,
      rosterNote:
        "The gateway runs on another machine, so its config cannot be read from here: this fits a stock config. Merge it into that machine's openclaw.json, keeping the agents it lists.",
      declared: false,
    };
  }
  if (!file.ok) {
    return {
      roster: STOCK_ROSTER,
      rosterNote: `${file.detail}: this fits a stock config.`,
      declared: false,
    };
  }
  const roster = rosterFacts(file.config);
  return { roster, declared: roster.agents.includes(agent) };
}

/** What the agent is now, beside what the template intends, in a sentence. */
function outcomeOf(
  agent: string,
  expected: SkillSnippetResponse['expectedClass'],
  declared: boolean,
  target: SkillTarget,
  unreadable: boolean,
): SkillSnippetOutcome {
  const { agent: check, tools } = target;
  if (unreadable) return { state: 'unknown', message: tools.detail };
  if (!declared) {
    return {
      state: 'not-applied',
      message: expected
        ? `Agent "${agent}" is not in your OpenClaw config yet: merge the config above (OpenClaw applies it without a restart), then check again.`
        : `There is no agent "${agent}" in your OpenClaw config: name one it has, or choose a template that adds one.`,
    };
  }
  if (check.notLoaded || check.check === 'missing') {
    const why = check.notLoaded ?? `it lists ${check.available?.join(', ') || 'no agents'}`;
    return {
      state: 'not-loaded',
      message: `Agent "${agent}" is in your config file, but the gateway does not run it yet (${why}). If it does not reload by itself, run \`openclaw config validate\` where the gateway runs and fix what it reports, then check again.`,
    };
  }
  const listed = tools.tools.length > 0 ? `: ${tools.tools.join(', ')}` : '';
  const unconfirmed =
    check.check === 'present' ? '' : ` (The gateway could not be asked whether it runs it: ${check.detail}.)`;
  if (!expected) {
    return { state: 'classified', message: `Agent "${agent}" is ${tools.class}${listed}.${unconfirmed}` };
  }
  if (tools.class === expected) {
    return {
      state: 'as-intended',
      message: `Agent "${agent}" is ${tools.class}, as the template intends${listed}.${unconfirmed}`,
    };
  }
  return {
    state: 'defeated',
    message: `Your OpenClaw config makes agent "${agent}" ${tools.class}, not ${expected} as the template intends. ${tools.detail}${unconfirmed}`,
  };
}
