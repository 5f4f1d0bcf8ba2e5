// What the gateway agent behind the bridge may use on the operator's machine, from OpenClaw's config
// (GATEWAY.md "Who the caller becomes on the gateway"; OpenClaw 2026.9 tool-policy docs and catalog).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import JSON5 from 'json5';
import { afterAll, describe, expect, it } from 'vitest';
import {
  classifyToolPolicy,
  configuredAgents,
  HOST_TOOLS,
  readToolExposure,
  restrictedAgentSnippet,
} from '../../src/bridge/tool-policy.js';

const ALL = [...HOST_TOOLS].sort();
const CODING = [
  'apply_patch',
  'cron',
  'edit',
  'exec',
  'gateway',
  'ls',
  'plugins',
  'process',
  'read',
  'terminal',
  'write',
];
const without = (...names: string[]) => ALL.filter((name) => !names.includes(name));

/** A config whose only agent besides main is `public`, with the given global and per-agent tools. */
const fleet = (tools: object, publicTools: object) => ({
  tools,
  agents: { entries: { main: { default: true }, public: { tools: publicTools } } },
});

// [case, config, agent id, host tools offered (empty = restricted)]
const cases: [string, unknown, string, string[]][] = [
  // Profiles
  ['no profile leaves every core tool in', {}, 'main', ALL],
  ['profile full', { tools: { profile: 'full' } }, 'main', ALL],
  ['profile coding', { tools: { profile: 'coding' } }, 'main', CODING],
  [
    'profile messaging offers the gateway (update) tool only',
    { tools: { profile: 'messaging' } },
    'main',
    ['gateway'],
  ],
  [
    'profile minimal offers the gateway (update) tool only',
    { tools: { profile: 'minimal' } },
    'main',
    ['gateway'],
  ],
  ['profile minimal with gateway denied', { tools: { profile: 'minimal', deny: ['gateway'] } }, 'main', []],
  [
    'alsoAllow widens a limited profile',
    { tools: { profile: 'minimal', alsoAllow: ['exec'] } },
    'main',
    ['exec', 'gateway'],
  ],
  ['alsoAllow alone restricts nothing', { tools: { alsoAllow: ['exec'] } }, 'main', ALL],

  // Global allow and deny
  ['a non-empty allow blocks the rest', { tools: { allow: ['read', 'group:web'] } }, 'main', ['read']],
  [
    'an allow naming no host tool blocks them all',
    { tools: { allow: ['group:web', 'message'] } },
    'main',
    [],
  ],
  ['an empty allow restricts nothing', { tools: { allow: [] } }, 'main', ALL],
  [
    'allowing write also allows apply_patch',
    { tools: { allow: ['write'] } },
    'main',
    ['apply_patch', 'write'],
  ],
  [
    'denying write leaves apply_patch',
    { tools: { profile: 'coding', deny: ['write'] } },
    'main',
    CODING.filter((t) => t !== 'write'),
  ],
  ['deny wins over allow', { tools: { allow: ['exec', 'read'], deny: ['exec'] } }, 'main', ['read']],
  [
    'deny matches aliases, case-insensitively',
    { tools: { profile: 'coding', deny: ['BASH', 'Cron', 'apply-patch'] } },
    'main',
    CODING.filter((t) => !['exec', 'cron', 'apply_patch'].includes(t)),
  ],
  [
    'the automations id denies cron',
    { tools: { profile: 'coding', deny: ['automations'] } },
    'main',
    CODING.filter((t) => t !== 'cron'),
  ],

  // Groups and plugin ids
  [
    'deny group:fs and group:runtime',
    { tools: { profile: 'coding', deny: ['group:fs', 'group:runtime'] } },
    'main',
    ['cron', 'gateway', 'plugins', 'terminal'],
  ],
  [
    'deny group:openclaw keeps the fs and runtime primitives',
    { tools: { deny: ['group:openclaw'] } },
    'main',
    [
      'apply_patch',
      'canvas',
      'dir_fetch',
      'dir_list',
      'edit',
      'exec',
      'file_fetch',
      'file_write',
      'ls',
      'process',
      'read',
      'write',
    ],
  ],
  [
    'allow group:ui and group:nodes',
    { tools: { allow: ['group:ui', 'group:nodes'] } },
    'main',
    ['browser', 'canvas', 'computer', 'mobile_ui', 'nodes', 'terminal'],
  ],
  [
    'deny group:automation',
    { tools: { deny: ['group:automation'] } },
    'main',
    without('cron', 'gateway', 'plugins', 'openclaw'),
  ],
  [
    'deny group:plugins',
    { tools: { deny: ['group:plugins'] } },
    'main',
    without('browser', 'canvas', 'file_fetch', 'file_write', 'dir_list', 'dir_fetch'),
  ],
  [
    'a plugin id names its tools',
    { tools: { allow: ['file-transfer'] } },
    'main',
    ['dir_fetch', 'dir_list', 'file_fetch', 'file_write'],
  ],

  // Wildcards
  ['deny * blocks everything', { tools: { deny: ['*'] } }, 'main', []],
  ['allow with a prefix wildcard', { tools: { allow: ['file_*'] } }, 'main', ['file_fetch', 'file_write']],
  [
    'deny with a middle wildcard',
    { tools: { deny: ['*_*'] } },
    'main',
    without('apply_patch', 'mobile_ui', 'file_fetch', 'file_write', 'dir_list', 'dir_fetch'),
  ],
  ['a wildcard matches the canonical id, not the alias', { tools: { deny: ['cron*'] } }, 'main', ALL],

  // Per-agent overrides
  [
    'agent stricter than global',
    fleet({ profile: 'full' }, { profile: 'minimal', deny: ['gateway'] }),
    'public',
    [],
  ],
  [
    'agent allow cannot grant back a global deny',
    fleet({ deny: ['exec'] }, { allow: ['exec', 'read'] }),
    'public',
    ['read'],
  ],
  [
    'agent allow cannot widen a global allow',
    fleet({ allow: ['read'] }, { allow: ['read', 'exec'] }),
    'public',
    ['read'],
  ],
  [
    'agent profile replaces a stricter global profile',
    fleet({ profile: 'minimal' }, { profile: 'full' }),
    'public',
    ALL,
  ],
  [
    'agent profile replaces a looser global profile',
    fleet({ profile: 'full' }, { profile: 'messaging' }),
    'public',
    ['gateway'],
  ],
  [
    'agent inherits the global profile and adds a deny',
    fleet({ profile: 'coding' }, { deny: ['group:fs'] }),
    'public',
    ['cron', 'exec', 'gateway', 'plugins', 'process', 'terminal'],
  ],
  [
    'agent inherits the global alsoAllow',
    fleet({ alsoAllow: ['exec'] }, { profile: 'minimal' }),
    'public',
    ['exec', 'gateway'],
  ],
  [
    'agent alsoAllow replaces the global one',
    fleet({ alsoAllow: ['exec'] }, { profile: 'minimal', alsoAllow: [] }),
    'public',
    ['gateway'],
  ],
  ['another agent settings do not leak', fleet({}, { profile: 'minimal', deny: ['gateway'] }), 'main', ALL],
  ['agent ids are case-insensitive', fleet({}, { deny: ['*'] }), 'Public', []],
  [
    "OpenClaw's read-only family example",
    fleet(
      { profile: 'full' },
      { allow: ['read', 'message'], deny: ['exec', 'write', 'edit', 'apply_patch', 'process', 'browser'] },
    ),
    'public',
    ['read'],
  ],

  // Agents given as the legacy list, and the default agent
  [
    'agents.list',
    { agents: { list: [{ id: 'main' }, { id: 'public', tools: { deny: ['*'] } }] } },
    'public',
    [],
  ],
  [
    'agents.entries wins over agents.list',
    { agents: { entries: { public: {} }, list: [{ id: 'public', tools: { deny: ['*'] } }] } },
    'public',
    ALL,
  ],
  [
    'default is the sole agent',
    { agents: { entries: { solo: { tools: { profile: 'minimal' } } } } },
    'default',
    ['gateway'],
  ],
  ['default is the agent marked default', fleet({}, { deny: ['*'] }), 'default', ALL],
];

describe('classifyToolPolicy', () => {
  it.each(cases)('%s', (_name, config, agent, tools) => {
    const view = classifyToolPolicy(config, agent);
    if (tools.length === 0) {
      expect(view).toEqual({ verdict: 'restricted', detail: expect.any(String) });
    } else {
      expect(view).toEqual({ verdict: 'exposes-host-tools', tools, detail: expect.any(String) });
    }
  });

  it('names the agent, the tools and the setting responsible', () => {
    const view = classifyToolPolicy({ tools: { profile: 'coding' } }, 'main');
    expect(view.detail).toBe(
      'Agent "main" is offered apply_patch, cron, edit, exec, gateway, ls, plugins, process and 3 more ' +
        '(tools.profile "coding"); deny them in agents.entries.main.tools.deny or point the bridge at a restricted agent.',
    );
    const unset = classifyToolPolicy({}, 'main');
    expect(unset.detail).toContain('(no tools.profile, so every core tool)');
  });

  it('names the agent settings that restrict it', () => {
    const view = classifyToolPolicy(
      fleet({ profile: 'full' }, { profile: 'minimal', deny: ['gateway'] }),
      'public',
    );
    expect(view.detail).toBe(
      'Agent "public" is offered none of the host tools ' +
        '(agents.entries.public.tools.profile "minimal", agents.entries.public.tools.deny).',
    );
    const listed = { agents: { list: [{ id: 'a' }, { id: 'b', tools: { allow: ['message'] } }] } };
    expect(classifyToolPolicy(listed, 'b').detail).toContain('agents.list[1].tools.allow');
  });

  it('says when the default agent stands in for "default"', () => {
    expect(classifyToolPolicy({}, 'default').detail).toMatch(
      /^Agent "main" \(the default agent\) is offered/,
    );
  });

  it('reports an agent the config does not declare, listing the ones it does', () => {
    expect(classifyToolPolicy(fleet({}, {}), 'helper')).toEqual({
      verdict: 'unknown',
      detail:
        'Agent "helper" is not in the OpenClaw config (it declares "main", "public"), so the gateway will refuse it.',
    });
    // Declaring any agent drops the implicit "main".
    expect(classifyToolPolicy({ agents: { entries: { work: {} } } }, 'main').verdict).toBe('unknown');
    expect(classifyToolPolicy({ agents: { entries: {} } }, 'main').detail).toContain('it declares no agents');
  });

  it('cannot tell, rather than guess, when the config is invalid or out of reach', () => {
    const unknown = (config: unknown, agent = 'main') => {
      const view = classifyToolPolicy(config, agent);
      expect(view.verdict).toBe('unknown');
      return view.detail;
    };
    expect(unknown({ tools: { profile: 'open' } })).toBe(
      'Cannot tell what agent "main" may use: tools.profile "open" is not a tool profile.',
    );
    expect(unknown({ tools: { deny: 'exec' } })).toContain('tools.deny is not a list of tool names');
    expect(unknown({ agents: { $include: './agents.json5' } })).toContain('agents uses $include');
    expect(unknown({ agents: { list: { id: 'main' } } })).toContain('agents.list is not a list');
    expect(unknown(['not', 'a', 'config'])).toContain('the config is not an object');
    expect(unknown({ agents: { entries: { a: {}, b: {} } } }, 'default')).toContain('none is the default');
    // An explicit fleet ignores legacy default markers.
    const explicit = { agents: { ownership: 'explicit', entries: { a: { default: true }, b: {} } } };
    expect(unknown(explicit, 'default')).toContain('none is the default');
  });
});

describe('configuredAgents', () => {
  it('lists keyed entries, the legacy list, or the implicit main agent', () => {
    expect(configuredAgents({ agents: { entries: { main: {}, Work: {}, 'x y': {} } } })).toEqual([
      'main',
      'work',
      'x-y',
    ]);
    expect(configuredAgents({ agents: { list: [{ id: 'a' }, { id: 'b' }, { id: 'a' }] } })).toEqual([
      'a',
      'b',
    ]);
    expect(configuredAgents({ gateway: {} })).toEqual(['main']);
    expect(configuredAgents({ agents: { entries: {} } })).toEqual([]);
    expect(configuredAgents('nonsense')).toEqual([]);
  });
});

describe('restrictedAgentSnippet', () => {
  const parse = (snippet: string) => JSON5.parse<Record<string, unknown>>(snippet);

  it('parses as JSON5 and classifies as restricted, keeping main', () => {
    const config = parse(restrictedAgentSnippet('public'));
    expect(classifyToolPolicy(config, 'public').verdict).toBe('restricted');
    expect(configuredAgents(config)).toEqual(['main', 'public']);
    expect(config).toMatchObject({
      agents: {
        entries: { public: { workspace: '~/.openclaw/workspace-public', tools: { profile: 'minimal' } } },
      },
    });
  });

  it('stays restricted under the most permissive global settings', () => {
    const config = parse(restrictedAgentSnippet('public'));
    config.tools = { profile: 'full', allow: ['*'], alsoAllow: [...HOST_TOOLS] };
    expect(classifyToolPolicy(config, 'public').verdict).toBe('restricted');
  });

  it('quotes ids that are not bare JSON5 keys, and does not repeat main', () => {
    const dashed = parse(restrictedAgentSnippet('My-Bot'));
    expect(configuredAgents(dashed)).toEqual(['main', 'my-bot']);
    expect(classifyToolPolicy(dashed, 'my-bot').verdict).toBe('restricted');
    const main = restrictedAgentSnippet('main');
    expect(main.match(/main: \{/g)).toHaveLength(1);
    expect(classifyToolPolicy(parse(main), 'main').verdict).toBe('restricted');
  });
});

describe('readToolExposure', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tool-policy-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  const json5 = `// written by hand, as operators do
{
  tools: { profile: 'full', }, /* local onboarding's default */
  agents: {
    entries: {
      main: { default: true, },
      public: {
        workspace: "~/.openclaw/workspace-public",
        tools: { profile: 'minimal', deny: ['gateway',], },
      },
    },
  },
}
`;

  it('reads real JSON5: comments, trailing commas, unquoted keys', () => {
    const path = file('openclaw.json', json5);
    expect(readToolExposure(path, 'public').verdict).toBe('restricted');
    expect(readToolExposure(path, 'main')).toMatchObject({ verdict: 'exposes-host-tools', tools: ALL });
  });

  it('expands ~/ with the given HOME', () => {
    mkdirSync(join(dir, 'home', '.openclaw'), { recursive: true });
    writeFileSync(join(dir, 'home', '.openclaw', 'openclaw.json'), json5);
    const view = readToolExposure('~/.openclaw/openclaw.json', 'public', { HOME: join(dir, 'home') });
    expect(view.verdict).toBe('restricted');
  });

  it('gives unknown for a missing file', () => {
    const path = join(dir, 'missing.json');
    expect(readToolExposure(path, 'public')).toEqual({
      verdict: 'unknown',
      detail: `No OpenClaw config at ${path}, so the tools of agent "public" cannot be checked.`,
    });
  });

  it('gives unknown for a file that is not JSON5', () => {
    const view = readToolExposure(file('broken.json', '{ tools: { profile: "full" '), 'main');
    expect(view.verdict).toBe('unknown');
    expect(view.detail).toMatch(/is not valid JSON5 \(.+\)\.$/);
  });

  it('gives unknown for a path that cannot be read as a file', () => {
    const view = readToolExposure(dir, 'main');
    expect(view).toEqual({
      verdict: 'unknown',
      detail: `Cannot read the OpenClaw config at ${dir} (EISDIR).`,
    });
  });
});
