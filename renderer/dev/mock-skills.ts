/**
 * The mock console's Skills (issue 27): GET /api/skills, POST /api/skills, PUT and DELETE /api/skills/:id,
 * POST /api/skills/:id/accept, and the Overview's count, over made-up but realistic skills: chat on its
 * restricted agent, a web research skill for approved senders, a sandboxed code runner, a host skill waiting
 * for the operator's acceptance, a paused one. The rules are the real ones in small (src/skills/skill-edits.ts
 * and src/bridge/skill-rule.ts): a public skill stays none or web, a host one needs named callers and an
 * acceptance of exactly its tools. POST /api/skills/snippet proposes a template's real snippet: a new agent
 * is not in the config at first, and is there at the next "Check again" (as after a merge and OpenClaw's hot
 * reload): as the template intends, or, in the problems scenario, a Research agent the operator's config
 * makes host. Development only.
 */
import { STOCK_ROSTER } from '../../src/bridge/agent-snippet.js';
import { skillAgentSnippet } from '../../src/bridge/skill-snippet.js';
import { SKILL_TEMPLATES, type SkillTemplate } from '../../src/protocol/skill-templates.js';
import type {
  SkillAgentCheck,
  SkillSnippetResponse,
  SkillServing,
  SkillsResponse,
  SkillView,
  StatusResponse,
} from '../../src/protocol/console-api.js';
import {
  TOOL_CLASSES,
  WIDEST_CLASS,
  type SkillAudience,
  type SkillSetting,
  type ToolClassView,
} from '../../src/protocol/skills.js';

export type MockReply = { code: number; body: unknown };

const AGENT_URL = 'https://quiet-otter.loca.lt';

/** What the mock gateway's agents are offered, as the classifier would say. */
const AGENTS: Record<string, ToolClassView> = {
  public: {
    class: 'none',
    tools: [],
    detail: 'Agent "public" is offered no tools (profile "minimal", deny "*").',
  },
  research: {
    class: 'web',
    tools: ['web_fetch', 'web_search'],
    detail: 'Agent "research" is offered web_search and web_fetch only; web_fetch blocks private addresses.',
  },
  coder: {
    class: 'sandboxed',
    tools: ['edit', 'exec', 'read', 'write'],
    detail:
      'Agent "coder" runs exec, read, write and edit in its sandbox (mode "all", workspace "ro", network none).',
  },
  ops: {
    class: 'host',
    tools: ['exec', 'process', 'read'],
    detail: 'Agent "ops" is offered exec, process and read on this machine: no sandbox.',
  },
  writer: { class: 'none', tools: [], detail: 'Agent "writer" is offered no tools.' },
};

export function mockSkills(scenario: 'healthy' | 'problems', perSender: () => number) {
  // Each mock console its own gateway: an agent merged in one run is not in the next.
  const agents: Record<string, ToolClassView> = { ...AGENTS };
  const started = Date.now();
  const iso = (msAgo: number) => new Date(started - msAgo).toISOString();
  const usage = new Map<string, { calls: number; tokens: number }>([
    ['chat', { calls: 214, tokens: 388_410 }],
    ['research', { calls: 37, tokens: 152_977 }],
    ['code-runner', { calls: 6, tokens: 41_208 }],
  ]);
  const skills: SkillSetting[] = [
    {
      id: 'research',
      name: 'Research',
      description: 'Searches the web and answers with the sources it read.',
      examples: ['What changed in Node 22?', 'Find three reviews of the Framework 13.'],
      agent: 'research',
      audience: 'approved',
      limits: { requestsPerMinute: 5, tokensPerDay: 200_000 },
      paused: false,
    },
    {
      id: 'code-runner',
      name: 'Code runner',
      description: 'Runs short Python or shell snippets in a sandbox with no network.',
      examples: ['Run: print(sum(range(10)))'],
      agent: 'coder',
      audience: 'approved',
      limits: {},
      paused: false,
    },
    {
      id: 'ops',
      name: 'Ops helper',
      description: 'Checks disk space and service status on the build machine.',
      examples: ['How full is /var?'],
      agent: 'ops',
      audience: 'named',
      limits: { requestsPerMinute: 2 },
      paused: false,
      ...(scenario === 'problems' ? { accepted: { tools: ['exec', 'read'], at: iso(5 * 86_400_000) } } : {}),
    },
    {
      id: 'summary',
      name: 'Summary',
      description: 'Summarises a text in three bullet points.',
      examples: [],
      agent: 'writer',
      audience: 'public',
      limits: {},
      paused: true,
    },
  ];

  // Agents the operator added from a proposed snippet (merged and reloaded at the next check).
  const added: string[] = [];
  const check = (agent: string): SkillAgentCheck => {
    const missing = (scenario === 'problems' && agent === 'research') || !(agent in agents);
    return {
      agent,
      model: `openclaw/${agent}`,
      check: missing ? 'missing' : 'present',
      checkedAt: new Date(Date.now() - 20_000).toISOString(),
      available: [
        'main',
        'public',
        'coder',
        'ops',
        'writer',
        ...(scenario === 'problems' ? [] : ['research']),
        ...added,
      ],
    };
  };

  /** POST /api/skills/snippet: the template's real snippet; the agent merged by the next ask. */
  const propose = (body: Record<string, unknown>): MockReply => {
    const template = body.template as SkillTemplate;
    const info = SKILL_TEMPLATES.find((each) => each.id === template);
    const agent = String(body.agent ?? '')
      .trim()
      .toLowerCase();
    if (!info || !/^[a-z0-9._-]{1,64}$/.test(agent))
      return refused(
        400,
        'No config was proposed: name a template and an agent id.',
        'Send {"template", "agent"}.',
      );
    if (template !== 'custom' && ['main', 'public', ...skills.map((skill) => skill.agent)].includes(agent))
      return refused(
        409,
        `Agent "${agent}" is an agent something else runs on: a template would change its tools, so no config was proposed.`,
        'Name a new agent for this skill, or choose "Custom: an existing agent".',
        [{ field: 'agent', message: 'is taken' }],
      );
    const expected = info.toolClass;
    const declared = agent in agents;
    const tools = toolsOf(agent);
    const now = check(agent);
    const outcome: SkillSnippetResponse['outcome'] = !declared
      ? {
          state: 'not-applied',
          message: expected
            ? `Agent "${agent}" is not in your OpenClaw config yet: merge the config above (OpenClaw applies it without a restart), then check again.`
            : `There is no agent "${agent}" in your OpenClaw config: name one it has, or choose a template that adds one.`,
        }
      : !expected
        ? {
            state: 'classified',
            message: `Agent "${agent}" is ${tools.class}: ${tools.tools.join(', ') || 'no tools'}.`,
          }
        : tools.class === expected
          ? {
              state: 'as-intended',
              message: `Agent "${agent}" is ${tools.class}, as the template intends: ${tools.tools.join(', ')}.`,
            }
          : {
              state: 'defeated',
              message: `Your OpenClaw config makes agent "${agent}" ${tools.class}, not ${expected} as the template intends. ${tools.detail}`,
            };
    const answer: SkillSnippetResponse = {
      template,
      agent,
      ...(template === 'custom'
        ? {}
        : {
            snippet: skillAgentSnippet(template, agent, STOCK_ROSTER, {
              ...(body.backend === 'podman' ? { backend: 'podman' as const } : {}),
              ...(body.sandboxNetwork ? { sandboxNetwork: true } : {}),
            }),
          }),
      ...(expected ? { expectedClass: expected } : {}),
      mergeInto: '/home/you/.openclaw/openclaw.json',
      roster: 'file',
      declared,
      agentCheck: now,
      tools,
      outcome,
    };
    if (!declared && expected && template !== 'custom') {
      // Merged and reloaded by the time the operator checks again.
      added.push(agent);
      agents[agent] =
        scenario === 'problems' && template === 'research'
          ? {
              class: 'host',
              tools: ['web_fetch', 'web_search'],
              detail: `Agent ${agent} reaches this machine: web_fetch (may reach your own network). Not narrower because web_fetch may reach your own network (tools.web.fetch.ssrfPolicy.dangerouslyAllowPrivateNetwork). Settings: tools.profile "full", agents.entries.${agent}.tools.allow. For a narrower class, for web_fetch, remove tools.web.fetch.ssrfPolicy.dangerouslyAllowPrivateNetwork.`,
            }
          : expected === 'web'
            ? { ...agents.research!, detail: `Agent ${agent} is offered web search and fetch only.` }
            : {
                class: 'sandboxed',
                tools: ['apply_patch', 'edit', 'exec', 'ls', 'process', 'read', 'write'],
                detail: `Agent ${agent} runs exec, read, write and more only in OpenClaw's sandbox.`,
                sandbox: {
                  mode: 'all',
                  workspaceAccess: 'none',
                  network: body.sandboxNetwork ? 'bridge' : 'none',
                },
              };
    }
    return { code: 200, body: answer };
  };
  const toolsOf = (agent: string): ToolClassView =>
    agents[agent] ?? {
      class: 'host',
      tools: [],
      detail: `Agent "${agent}" is not in the config: counted as host.`,
    };
  const beyond = (tools: ToolClassView, audience: SkillAudience) =>
    TOOL_CLASSES.indexOf(tools.class) > TOOL_CLASSES.indexOf(WIDEST_CLASS[audience]);
  const same = (a: string[], b: string[]) => [...a].sort().join() === [...b].sort().join();

  const acceptance = (skill: SkillSetting, tools: ToolClassView): SkillView['acceptance'] => {
    if (tools.class !== 'host') return undefined;
    if (!skill.accepted) return { state: 'needed' };
    return same(skill.accepted.tools, tools.tools)
      ? { state: 'accepted', at: skill.accepted.at }
      : { state: 'changed', tools: skill.accepted.tools, at: skill.accepted.at };
  };

  const serving = (skill: SkillSetting, tools: ToolClassView, agent: SkillAgentCheck): SkillServing => {
    const no = (reason: Exclude<SkillServing, { serving: true }>['reason'], message: string, fix: string) =>
      ({ serving: false, reason, message, fix }) as const;
    if (skill.paused)
      return no(
        'paused',
        `Skill "${skill.id}" is paused.`,
        'Resume it on the Skills page when it should serve again.',
      );
    if (agent.check === 'missing')
      return no(
        'agent-missing',
        `The gateway has no agent "${skill.agent}" (it has ${agent.available?.join(', ')}), so skill "${skill.id}" forwards nothing.`,
        `Add the agent "${skill.agent}" to the OpenClaw config, or run the skill on an existing agent.`,
      );
    if (beyond(tools, skill.audience))
      return no(
        'audience',
        `Skill "${skill.id}" is ${skill.audience}, and agent "${skill.agent}" is ${tools.class}.`,
        `Give agent "${skill.agent}" fewer tools, or narrow the skill's audience.`,
      );
    const accepted = acceptance(skill, tools);
    if (accepted?.state === 'needed')
      return no(
        'acceptance-needed',
        `Skill "${skill.id}" reaches this machine (${tools.tools.join(', ')}) and you have not accepted that.`,
        'If its named callers are to reach these tools, accept the skill with exactly these tools.',
      );
    if (accepted?.state === 'changed')
      return no(
        'tools-changed',
        `The tools of skill "${skill.id}" changed since you accepted it (then: ${accepted.tools.join(', ')}; now: ${tools.tools.join(', ')}).`,
        'Look at its tools and accept them again if its named callers are to reach them.',
      );
    return { serving: true };
  };

  const view = (skill: SkillSetting, builtIn = false): SkillView => {
    const tools = toolsOf(skill.agent);
    const agent = check(skill.agent);
    const accepted = acceptance(skill, tools);
    return {
      setting: structuredClone(skill),
      builtIn,
      agent,
      tools,
      widest: WIDEST_CLASS[skill.audience],
      ...(accepted ? { acceptance: accepted } : {}),
      serving: serving(skill, tools, agent),
      limits: {
        requestsPerMinute: skill.limits.requestsPerMinute ?? perSender(),
        tokensPerDay: skill.limits.tokensPerDay ?? 100_000,
      },
      today: usage.get(skill.id) ?? { calls: 0, tokens: 0 },
      a2aCardUrl: skill.paused
        ? null
        : builtIn
          ? `${AGENT_URL}/.well-known/agent-card.json`
          : `${AGENT_URL}/a2a/skills/${skill.id}/.well-known/agent-card.json`,
    };
  };

  const chat: SkillSetting = {
    id: 'chat',
    name: 'Chat',
    description:
      "Send a message to the operator's agent and get its reply. Conversations are kept per sender and channel.",
    examples: [],
    agent: 'public',
    audience: 'public',
    limits: {},
    paused: false,
  };

  const response = (): SkillsResponse => ({
    skills: [view(chat, true), ...skills.map((skill) => view(skill))],
    defaults: { requestsPerMinute: perSender(), tokensPerDay: 100_000 },
  });

  const refused = (code: number, message: string, fix: string, fields?: unknown): MockReply => ({
    code,
    body: { error: { message, fix, ...(fields ? { fields } : {}) } },
  });

  /** The audience rule on a skill as it would be saved; undefined when it holds. */
  const ruleBroken = (skill: SkillSetting): MockReply | undefined => {
    const tools = toolsOf(skill.agent);
    if (skill.paused || !beyond(tools, skill.audience)) return undefined;
    const message = `a ${skill.audience} skill may reach ${WIDEST_CLASS[skill.audience]} tools at most, and agent "${skill.agent}" is ${tools.class}`;
    return refused(
      409,
      `Skill "${skill.id}" was not saved: ${message}.`,
      'Give the agent fewer tools, or narrow the audience.',
      [{ field: 'audience', message }],
    );
  };

  return {
    /** The Overview's line. */
    status(): StatusResponse['skills'] {
      const views = response().skills.filter((each) => !each.setting.paused);
      return {
        published: views.length,
        public: views.filter((each) => each.setting.audience === 'public').length,
        notServing: views.filter((each) => !each.serving.serving).length,
      };
    },

    /** Answers a Skills route, or undefined for any other route. */
    handle(route: string, body: Record<string, unknown>): MockReply | undefined {
      if (route === 'GET /api/skills') return { code: 200, body: response() };
      if (route === 'POST /api/skills/snippet') return propose(body);
      if (route === 'POST /api/skills') {
        const missing = ['id', 'name', 'description', 'agent', 'audience'].filter(
          (field) => typeof body[field] !== 'string' || body[field] === '',
        );
        if (missing.length > 0)
          return refused(
            400,
            `The skill was not added: ${missing.join(', ')} missing.`,
            'Correct the fields named and save again.',
            missing.map((field) => ({ field, message: 'is required' })),
          );
        if (body.id === 'chat' || skills.some((skill) => skill.id === body.id))
          return refused(
            409,
            `There is a skill "${String(body.id)}" already; nothing was added.`,
            'Choose another id.',
          );
        const skill = { examples: [], limits: {}, paused: false, ...body } as unknown as SkillSetting;
        const broken = ruleBroken(skill);
        if (broken) return broken;
        skills.push(skill);
        return { code: 201, body: response() };
      }
      const match = /^(PUT|DELETE|POST) \/api\/skills\/([^/]+)(\/accept)?$/.exec(route);
      if (!match) return undefined;
      const [, method, id, accept] = match;
      if (id === 'chat')
        return refused(
          409,
          'chat is the built-in skill: it is not changed here.',
          'Chat runs on the gatewayAgent setting (Settings > Gateway).',
        );
      const at = skills.findIndex((skill) => skill.id === id);
      if (at < 0) return refused(404, `There is no skill "${id}".`, 'Pick a skill from the list.');
      const current = skills[at]!;
      if (method === 'DELETE' && !accept) {
        skills.splice(at, 1);
        return { code: 200, body: response() };
      }
      if (method === 'PUT' && !accept) {
        const next = { ...current, ...body } as SkillSetting;
        if (next.agent !== current.agent) delete next.accepted;
        const broken = ruleBroken(next);
        if (broken) return broken;
        skills[at] = next;
        return { code: 200, body: response() };
      }
      if (method === 'POST' && accept) {
        const tools = toolsOf(current.agent);
        const sent = Array.isArray(body.tools) ? (body.tools as string[]) : [];
        if (tools.class !== 'host' || current.audience !== 'named' || !same(sent, tools.tools))
          return refused(
            409,
            `Skill "${id}" does not have exactly those tools now, so nothing was accepted.`,
            'Look at the skill again and accept what it shows.',
          );
        skills[at] = {
          ...current,
          accepted: { tools: [...tools.tools].sort(), at: new Date().toISOString() },
        };
        return { code: 200, body: response() };
      }
      return undefined;
    },
  };
}
