// The config the console hands the operator (issue 16 item 4): valid for OpenClaw 2026.9 once merged into
// the roster they have (a second agent needs `agents.ownership: "explicit"`), and harmless to their own agent
// (it keeps its workspace and stays the owner of channels, heartbeats and Talk, as `openclaw agents add`
// leaves it). test/openclaw/ proves the stock case against a running gateway.
import { readFileSync } from 'node:fs';
import JSON5 from 'json5';
import { describe, expect, it } from 'vitest';
import { restrictedAgentSnippet, rosterFacts } from '../../src/bridge/agent-snippet.js';
import { classifyToolPolicy, configuredAgents } from '../../src/bridge/tool-policy.js';

type Config = Record<string, unknown>;
const parse = (text: string) => JSON5.parse<Config>(text);

/** Merges as an operator does: objects key by key, anything else replaced. */
function merge(into: unknown, from: unknown): unknown {
  const isObject = (v: unknown): v is Config => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(into) || !isObject(from)) return from;
  const out: Config = { ...into };
  for (const [key, value] of Object.entries(from)) out[key] = key in into ? merge(into[key], value) : value;
  return out;
}

function applied(config: Config, agent = 'public'): Config {
  return merge(config, parse(restrictedAgentSnippet(agent, rosterFacts(config)))) as Config;
}

const STOCK = { gateway: { mode: 'local' }, tools: { profile: 'full' }, agents: { defaults: {} } };

describe('restrictedAgentSnippet, into a stock config (the implicit "main")', () => {
  const result = applied(STOCK);

  it('makes the roster explicit, as OpenClaw 2026.9 requires of two agents', () => {
    expect(configuredAgents(result)).toEqual(['main', 'public']);
    expect(result).toMatchObject({ agents: { ownership: 'explicit' } });
    expect(classifyToolPolicy(result, 'public').verdict).toBe('restricted');
  });

  it('keeps main what it was: its workspace, and the owner of channels, heartbeats and Talk', () => {
    expect(result).toMatchObject({
      agents: {
        defaults: { systemAgent: { agentId: 'main' }, heartbeat: { agentId: 'main' } },
        entries: { main: { workspace: '~/.openclaw/workspace' } },
      },
      talk: { agentId: 'main' },
    });
    // main's own tools are untouched: the operator keeps every tool.
    expect(classifyToolPolicy(result, 'main').verdict).toBe('exposes-host-tools');
  });

  it('pins the workspace the file gives the fleet, when it gives one', () => {
    const config = { ...STOCK, agents: { defaults: { workspace: '/srv/claw/ws' } } };
    expect(applied(config)).toMatchObject({ agents: { entries: { main: { workspace: '/srv/claw/ws' } } } });
  });

  it('is the same text without a readable file (a remote gateway)', () => {
    expect(restrictedAgentSnippet('public')).toBe(restrictedAgentSnippet('public', rosterFacts(STOCK)));
  });
});

describe('restrictedAgentSnippet, into other rosters', () => {
  it('a sole named agent keeps its own workspace and owns what it owned', () => {
    const config = { agents: { entries: { home: { workspace: '~/claw-home' } } } };
    expect(applied(config)).toMatchObject({
      agents: {
        ownership: 'explicit',
        defaults: { systemAgent: { agentId: 'home' } },
        entries: { home: { workspace: '~/claw-home' } },
      },
      talk: { agentId: 'home' },
    });
  });

  it('leaves owners the operator set as they are', () => {
    const config = {
      agents: { defaults: { systemAgent: { agentId: 'main' }, heartbeat: { agentId: 'main' } } },
      talk: { agentId: 'main', voice: 'x' },
    };
    const snippet = restrictedAgentSnippet('public', rosterFacts(config));
    expect(snippet).not.toMatch(/systemAgent:|heartbeat:|talk:/);
    expect(snippet).toContain('ownership: "explicit"');
  });

  it('adds only the agent to a roster that already takes several (explicit, or one legacy default)', () => {
    for (const agents of [
      { ownership: 'explicit', entries: { main: {}, ops: {} } },
      { entries: { main: { default: true }, ops: {} } },
    ]) {
      const snippet = restrictedAgentSnippet('public', rosterFacts({ agents }));
      expect(snippet).not.toMatch(/ownership|systemAgent|workspace: "~\/\.openclaw\/workspace"/);
      const result = applied({ agents });
      expect(configuredAgents(result)).toEqual(['main', 'ops', 'public']);
      expect(classifyToolPolicy(result, 'public').verdict).toBe('restricted');
    }
  });

  it('a roster of several without an owner gets the ownership OpenClaw asks for, and no owner chosen for it', () => {
    const snippet = restrictedAgentSnippet('public', rosterFacts({ agents: { entries: { a: {}, b: {} } } }));
    expect(snippet).toContain('ownership: "explicit"');
    expect(snippet).not.toMatch(/systemAgent:|talk:/);
  });

  it('restricts an agent the roster has in place: its tools only, never its workspace', () => {
    const config = {
      tools: { profile: 'full' },
      agents: { ownership: 'explicit', entries: { main: {}, helper: { workspace: '~/h' } } },
    };
    const snippet = restrictedAgentSnippet('helper', rosterFacts(config));
    expect(snippet).not.toContain('workspace');
    const result = applied(config, 'helper');
    expect(result).toMatchObject({ agents: { entries: { helper: { workspace: '~/h' } } } });
    expect(classifyToolPolicy(result, 'helper').verdict).toBe('restricted');
  });
});

describe("docs/security.md's example agent", () => {
  it("is the console's, for a stock config: parsed, they are the same config", () => {
    const page = readFileSync(new URL('../../docs/security.md', import.meta.url), 'utf8');
    const at = page.indexOf("This is the console's config for a stock local");
    expect(at, 'docs/security.md introduces the config').toBeGreaterThan(0);
    const after = page.slice(at);
    const block = /```json5\n([\s\S]*?)\n\s*```/.exec(after)?.[1];
    expect(block, 'the json5 block after "This is the console\'s config"').toBeDefined();
    expect(parse(block!)).toEqual(parse(restrictedAgentSnippet('public')));
  });
});
