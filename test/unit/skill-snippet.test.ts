// The config the console proposes for a new skill's agent (issue 27, item 4): merged into the configs
// operators have, its agent classifies as its template's class, with exactly that class's tools, and the
// roster stays one OpenClaw 2026.9 accepts. test/openclaw/skill-classes.test.ts proves it on a real gateway.
import JSON5 from 'json5';
import { describe, expect, it } from 'vitest';
import { rosterFacts } from '../../src/bridge/agent-snippet.js';
import {
  skillAgentSnippet,
  SKILL_TEMPLATES,
  type SkillSnippetOptions,
} from '../../src/bridge/skill-snippet.js';
import { classifyAgentTools } from '../../src/bridge/tool-class.js';
import { configuredAgents } from '../../src/bridge/tool-policy.js';

type Config = Record<string, unknown>;

/** Merges as an operator does: objects key by key, anything else replaced. */
function merge(into: unknown, from: unknown): unknown {
  const isObject = (v: unknown): v is Config => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(into) || !isObject(from)) return from;
  const out: Config = { ...into };
  for (const [key, value] of Object.entries(from)) out[key] = key in into ? merge(into[key], value) : value;
  return out;
}

function applied(
  config: Config,
  template: 'research' | 'sandboxed',
  agent: string,
  options: SkillSnippetOptions = {},
): Config {
  const snippet = skillAgentSnippet(template, agent, rosterFacts(config), options);
  return merge(config, JSON5.parse(snippet)) as Config;
}

// What local onboarding writes (every tool, Code Mode unset), and the rosters operators grow from it.
const STOCK: Config = { gateway: { mode: 'local' }, tools: { profile: 'full' }, agents: { defaults: {} } };
const SAMPLES: [string, Config][] = [
  ['a stock config', STOCK],
  ['no tools setting at all', { agents: { defaults: {} } }],
  ['a global minimal profile', { tools: { profile: 'minimal' } }],
  ['a global messaging profile with Code Mode on', { tools: { profile: 'messaging', codeMode: true } }],
  ['a sole named agent', { agents: { entries: { home: { workspace: '~/claw-home' } } } }],
  [
    'an explicit roster with the restricted agent',
    {
      tools: { profile: 'full' },
      agents: { ownership: 'explicit', entries: { main: {}, public: { tools: { deny: ['*'] } } } },
    },
  ],
  [
    'a fleet sandbox for non-main sessions',
    { ...STOCK, agents: { defaults: { sandbox: { mode: 'non-main' } } } },
  ],
  [
    'a fleet sandbox for every session, with network',
    { ...STOCK, agents: { defaults: { sandbox: { mode: 'all', docker: { network: 'bridge' } } } } },
  ],
  ['elevated on globally', { ...STOCK, tools: { profile: 'full', elevated: { enabled: true } } }],
];

describe('skillAgentSnippet, merged into the configs operators have', () => {
  describe.each(SAMPLES)('%s', (_label, config) => {
    it('Research: web, offered web_search and web_fetch', () => {
      const result = applied(config, 'research', 'research');
      expect(configuredAgents(result)).toContain('research');
      expect(classifyAgentTools(result, 'research')).toMatchObject({
        class: 'web',
        tools: ['web_fetch', 'web_search'],
      });
    });

    it('Sandboxed helper: sandboxed, offered the shell and file tools in a container with no network', () => {
      const result = applied(config, 'sandboxed', 'helper');
      expect(classifyAgentTools(result, 'helper')).toEqual(
        expect.objectContaining({
          class: 'sandboxed',
          tools: ['apply_patch', 'edit', 'exec', 'ls', 'process', 'read', 'write'],
          sandbox: { mode: 'all', workspaceAccess: 'none', network: 'none' },
        }),
      );
    });

    it('adds the agent to a roster OpenClaw accepts, and leaves the other agents as they were', () => {
      const before = configuredAgents(config);
      const result = applied(config, 'research', 'research');
      const agents = result.agents as Config;
      expect(agents.ownership === 'explicit' || before.length === 0).toBe(true);
      for (const id of before) {
        expect(classifyAgentTools(result, id)).toEqual(classifyAgentTools(config, id));
      }
    });
  });

  it('the skill may let its sandbox reach the network: bridge, and sandboxed only for that skill', () => {
    const result = applied(STOCK, 'sandboxed', 'helper', { sandboxNetwork: true });
    expect(classifyAgentTools(result, 'helper', { sandboxNetwork: true })).toMatchObject({
      class: 'sandboxed',
      sandbox: { network: 'bridge' },
    });
    // The same agent for a skill that does not allow the network is not contained.
    expect(classifyAgentTools(result, 'helper').class).toBe('host');
  });

  it('podman as the backend', () => {
    const snippet = skillAgentSnippet('sandboxed', 'helper', rosterFacts(STOCK), { backend: 'podman' });
    expect(snippet).toContain('backend: "podman"');
    expect(
      classifyAgentTools(applied(STOCK, 'sandboxed', 'helper', { backend: 'podman' }), 'helper').class,
    ).toBe('sandboxed');
  });

  it('a config whose web_fetch guard is open: the research agent is host, and says why', () => {
    const open = {
      ...STOCK,
      tools: { profile: 'full', web: { fetch: { ssrfPolicy: { dangerouslyAllowPrivateNetwork: true } } } },
    };
    const view = classifyAgentTools(applied(open, 'research', 'research'), 'research');
    expect(view.class).toBe('host');
    expect(view.detail).toContain('tools.web.fetch.ssrfPolicy.dangerouslyAllowPrivateNetwork');
  });

  it('only a fleet sandbox makes the research agent turn its sandbox off (it would lose the web tools)', () => {
    expect(skillAgentSnippet('research', 'research', rosterFacts(STOCK))).not.toContain('sandbox');
    const fleet = { ...STOCK, agents: { defaults: { sandbox: { mode: 'all' } } } };
    expect(skillAgentSnippet('research', 'research', rosterFacts(fleet))).toContain(
      'sandbox: { mode: "off" }',
    );
  });

  it('a stock config: explicit roster, main keeps its workspace and its owners, as for the restricted agent', () => {
    const result = applied(STOCK, 'sandboxed', 'helper');
    expect(configuredAgents(result)).toEqual(['main', 'helper']);
    expect(result).toMatchObject({
      agents: {
        ownership: 'explicit',
        defaults: { systemAgent: { agentId: 'main' }, heartbeat: { agentId: 'main' } },
        entries: {
          main: { workspace: '~/.openclaw/workspace' },
          helper: { workspace: '~/.openclaw/workspace-helper' },
        },
      },
      talk: { agentId: 'main' },
    });
  });
});

describe('SKILL_TEMPLATES', () => {
  it('names the three templates, each with the class its snippet gives', () => {
    expect(SKILL_TEMPLATES.map((t) => [t.id, t.name, t.toolClass])).toEqual([
      ['research', 'Research (web search and fetch)', 'web'],
      ['sandboxed', 'Sandboxed helper (shell in a container)', 'sandboxed'],
      ['custom', 'Custom: an existing agent', undefined],
    ]);
  });
});
