import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { toolClassOfExposure } from '../../src/bridge/exposure-class.js';
import { classifyAgentTools } from '../../src/bridge/tool-class.js';
import type { AgentListing } from '../../src/bridge/gateway-agents.js';
import { resolveGatewayConfig } from '../../src/bridge/gateway-config.js';
import { beyondAudience, skillServing, widestAudience } from '../../src/bridge/skill-rule.js';
import { SkillTargets, type SkillAgent, type SkillTarget } from '../../src/bridge/skill-targets.js';
import type { SkillSetting, ToolClassView } from '../../src/protocol/skills.js';
import { tempDir } from '../helpers/agents.js';

// A published skill's agent (issue 27): checked as the chat agent is, its tools a class, and the rules it
// serves under. Pure parts and a real config file; the gateway's agent list is the test's.
const dir = tempDir('skill-targets-');
const configPath = join(dir, 'openclaw.json');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RESTRICTED = { profile: 'minimal', deny: ['*'], codeMode: false };

function targets(options: { url?: string; agents?: string[]; skills: SkillAgent[]; classify?: never }) {
  const listing: AgentListing = { ok: true, agents: options.agents ?? ['main', 'quiet', 'stock'] };
  let listed = 0;
  const made = new SkillTargets({
    gateway: () => resolveGatewayConfig({ url: options.url ?? 'http://127.0.0.1:18789', token: 't' }, {}),
    configPath: () => configPath,
    listing: async () => {
      listed += 1;
      return listing;
    },
    skills: () => options.skills,
    ...(options.classify ? { classify: options.classify } : {}),
  });
  return { made, listed: () => listed };
}

const quiet: SkillAgent = { id: 'quiet', agent: 'quiet' };
const stock: SkillAgent = { id: 'stock', agent: 'stock' };

describe("a skill's agent", () => {
  writeFileSync(
    configPath,
    JSON.stringify({
      agents: { ownership: 'explicit', entries: { main: {}, quiet: { tools: RESTRICTED }, stock: {} } },
    }),
  );

  it('is classified from the config file at once, and checked on the gateway at the next refresh', async () => {
    const { made, listed } = targets({ skills: [quiet, stock] });
    expect(made.target(quiet)).toMatchObject({
      agent: { agent: 'quiet', model: 'openclaw/quiet', check: 'checking' },
      tools: { class: 'none', tools: [] },
    });
    // Today's exposure check stands in for the classifier: an agent with host tools (none denied) is host.
    const host = made.target(stock).tools;
    expect(host.class).toBe('host');
    expect(host.tools).toEqual(expect.arrayContaining(['exec', 'read', 'write']));
    await made.refresh();
    expect(listed()).toBe(1);
    expect(made.target(quiet).agent).toMatchObject({
      check: 'present',
      available: ['main', 'quiet', 'stock'],
    });
  });

  it('is missing when the gateway does not list it, and host while the file is not what the gateway runs', async () => {
    const { made } = targets({ skills: [quiet], agents: ['main', 'quiet'] });
    await made.refresh();
    // The file declares stock, which the gateway does not run: it has not loaded this file.
    const seen = made.target(quiet);
    expect(seen.agent.notLoaded).toBe('the file has "stock", which the gateway does not run');
    expect(seen.tools.class).toBe('host');
    const { made: other } = targets({
      skills: [{ id: 'gone', agent: 'gone' }],
      agents: ['main', 'quiet', 'stock'],
    });
    await other.refresh();
    expect(other.target({ id: 'gone', agent: 'gone' }).agent).toMatchObject({ check: 'missing' });
  });

  it('is host when its tools cannot be read: a gateway elsewhere, or a classifier that fails', () => {
    const remote = targets({ url: 'https://gateway.example', skills: [quiet] }).made.target(quiet);
    expect(remote.tools).toMatchObject({ class: 'host', tools: [] });
    expect(remote.tools.detail).toMatch(/another machine.*counts as host/);
    const failing = targets({
      skills: [quiet],
      classify: (() => {
        throw new Error('unexpected shape');
      }) as never,
    }).made.target(quiet);
    expect(failing.tools).toMatchObject({ class: 'host' });
    expect(failing.tools.detail).toMatch(/could not be classified \(unexpected shape\)/);
  });

  it('is read afresh for a change (fresh), which every cached answer follows', () => {
    const { made } = targets({ skills: [quiet] });
    expect(made.target(quiet).tools.class).toBe('none');
    writeFileSync(
      configPath,
      JSON.stringify({ agents: { ownership: 'explicit', entries: { main: {}, quiet: {}, stock: {} } } }),
    );
    try {
      expect(made.target(quiet).tools.class).toBe('none');
      expect(made.fresh(quiet).tools.class).toBe('host');
      expect(made.target(quiet).tools.class).toBe('host');
    } finally {
      writeFileSync(
        configPath,
        JSON.stringify({
          agents: { ownership: 'explicit', entries: { main: {}, quiet: { tools: RESTRICTED }, stock: {} } },
        }),
      );
    }
  });
});

describe('the exposure check as a class (until tool-class.ts is merged)', () => {
  it('is none for a restricted agent, host for one that exposes host tools or cannot be told', () => {
    expect(toolClassOfExposure({ verdict: 'restricted', detail: 'd' })).toEqual({
      class: 'none',
      tools: [],
      detail: 'd',
    });
    expect(
      toolClassOfExposure({ verdict: 'exposes-host-tools', tools: ['write', 'exec', 'exec'], detail: 'd' }),
    ).toEqual({ class: 'host', tools: ['exec', 'write'], detail: 'd' });
    expect(toolClassOfExposure({ verdict: 'unknown', detail: 'No config.' })).toEqual({
      class: 'host',
      tools: [],
      detail: 'No config. Until it can be told, it counts as host.',
    });
    // The published skills' classifier: an agent the config does not declare is host, whatever it is.
    expect(classifyAgentTools({}, 'nobody', { sandboxNetwork: false }).class).toBe('host');
  });
});

describe('the rule a skill serves under', () => {
  const setting = (over: Partial<SkillSetting> = {}): SkillSetting => ({
    id: 'x',
    name: 'X',
    description: 'x',
    examples: [],
    agent: 'x',
    audience: 'named',
    limits: {},
    paused: false,
    ...over,
  });
  const target = (tools: Partial<ToolClassView>, agent: Partial<SkillTarget['agent']> = {}): SkillTarget => ({
    agent: { agent: 'x', model: 'openclaw/x', check: 'present', ...agent },
    tools: { class: 'none', tools: [], detail: '', ...tools },
  });
  const reason = (s: SkillSetting, t: SkillTarget) => {
    const serving = skillServing(s, t);
    return serving.serving ? 'serving' : serving.reason;
  };

  it('holds each audience to its widest class', () => {
    expect(beyondAudience('web', 'public')).toBe(false);
    expect(beyondAudience('sandboxed', 'public')).toBe(true);
    expect(beyondAudience('sandboxed', 'approved')).toBe(false);
    expect(beyondAudience('host', 'approved')).toBe(true);
    expect(beyondAudience('host', 'named')).toBe(false);
    expect([
      widestAudience('none'),
      widestAudience('web'),
      widestAudience('sandboxed'),
      widestAudience('host'),
    ]).toEqual(['public', 'public', 'approved', 'named']);
  });

  it('serves only a skill that is published, whose agent is there and loaded, within its audience, and accepted if host', () => {
    const host = { class: 'host' as const, tools: ['exec', 'read'] };
    const accepted = { tools: ['read', 'exec'], at: '2026-12-01T00:00:00.000Z' };
    expect(reason(setting({ audience: 'public' }), target({ class: 'web', tools: ['web_fetch'] }))).toBe(
      'serving',
    );
    expect(reason(setting({ paused: true }), target({}))).toBe('paused');
    expect(reason(setting(), target({}, { check: 'missing', available: ['main'] }))).toBe('agent-missing');
    expect(reason(setting(), target({}, { notLoaded: 'differs' }))).toBe('unverified');
    expect(reason(setting({ audience: 'public' }), target({ class: 'sandboxed' }))).toBe('audience');
    expect(reason(setting({ audience: 'approved' }), target(host))).toBe('audience');
    expect(reason(setting(), target(host))).toBe('acceptance-needed');
    expect(reason(setting({ accepted }), target(host))).toBe('serving');
    expect(reason(setting({ accepted }), target({ ...host, tools: ['exec', 'read', 'write'] }))).toBe(
      'tools-changed',
    );
    // Unknown presence (the list could not be asked) lets calls go, as for chat: the gateway refuses an agent it lacks.
    expect(reason(setting({ audience: 'public' }), target({}, { check: 'unknown' }))).toBe('serving');
    const refused = skillServing(setting({ audience: 'public' }), target({ class: 'host', tools: ['exec'] }));
    expect(refused).toEqual({
      serving: false,
      reason: 'audience',
      message:
        'Skill "x" is public, and its agent "x" is host (exec): a public skill may reach web tools at most.',
      fix: 'Give agent "x" fewer tools, or open the skill to named callers only.',
    });
  });
});
