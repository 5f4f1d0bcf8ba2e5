// What the gateway agent behind the bridge can be offered, from OpenClaw's config (GATEWAY.md "Who the caller
// becomes on the gateway"). The expectations come from OpenClaw 2026.9.6's compiled catalog and policy code,
// copied here by hand (never imported from the module under test, so the two can disagree).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import JSON5 from 'json5';
import { afterAll, describe, expect, it } from 'vitest';
import { restrictedAgentSnippet } from '../../src/bridge/agent-snippet.js';
import { classifyToolPolicy, configuredAgents, readToolExposure } from '../../src/bridge/tool-policy.js';

// dist/tool-catalog-CLTpLFor.mjs: CORE_TOOL_GROUPS (one group per section) ...
const GROUP = {
  fs: ['ls', 'read', 'write', 'edit', 'apply_patch'],
  runtime: ['exec', 'process', 'code_execution', 'secrets'],
  web: ['web_search', 'web_fetch', 'x_search'],
  memory: ['memory_search', 'memory_get'],
  sessions: [
    'sessions',
    'sessions_list',
    'sessions_history',
    'sessions_search',
    'conversations_list',
    'conversations_send',
    'conversations_turn',
    'sessions_send',
    'sessions_spawn',
    'github_identity_status',
    'github_publish',
    'agents_wait',
    'sessions_yield',
    'subagents',
    'session_status',
    'suggest_task',
    'dismiss_task',
  ],
  ui: ['browser', 'screen', 'theme', 'dashboard', 'terminal', 'portal', 'canvas', 'show_widget'],
  messaging: ['message'],
  automation: ['heartbeat_respond', 'automations', 'gateway', 'plugins', 'openclaw'],
  nodes: ['nodes', 'computer', 'mobile_ui'],
  agents: [
    'agents_list',
    'get_goal',
    'create_goal',
    'update_goal',
    'progress_card',
    'ask_user',
    'skill_workshop',
  ],
  media: ['view_image', 'image_generate', 'music_generate', 'video_generate', 'tts', 'pdf'],
};
const CATALOG = Object.values(GROUP).flat();
// ... group:openclaw is every tool but these ...
const NOT_OPENCLAW = ['ls', 'read', 'write', 'edit', 'apply_patch', 'exec', 'process', 'canvas'];
// ... and CORE_TOOL_PROFILES (coding and messaging also allow "bundle-mcp"; full allows "*").
const MINIMAL = ['session_status', 'gateway'];
const CODING = [
  ...GROUP.fs,
  ...GROUP.runtime,
  ...GROUP.web,
  ...GROUP.memory,
  ...GROUP.sessions,
  'screen',
  'theme',
  'dashboard',
  'terminal',
  'portal',
  'automations',
  'gateway',
  'plugins',
  ...GROUP.agents.filter((tool) => tool !== 'agents_list'),
  'view_image',
  'image_generate',
  'music_generate',
  'video_generate',
];
const MESSAGING = [
  'secrets',
  'sessions',
  'sessions_list',
  'sessions_history',
  'sessions_search',
  'conversations_list',
  'conversations_send',
  'conversations_turn',
  'sessions_send',
  'sessions_spawn',
  'sessions_yield',
  'subagents',
  'session_status',
  'theme',
  'message',
  'gateway',
  'ask_user',
];

// Beside the catalog: every plugin tool, every MCP server tool, and Code Mode's exec (after the policy).
// Plugins can also put their tools in a limited profile (manifest toolMetadata.<tool>.profiles, merged into
// the profile's allowlist): memory-core's `intent` is in coding and messaging, and the real gateway offered
// it to a messaging agent. Any installed plugin could do the same for minimal.
const PLUGINS = 'group:plugins';
const MCP = 'bundle-mcp';
const CODE = 'code mode exec';
/** The one catalog tool a restricted agent may keep: it only ends its own turn. */
const SAFE = ['sessions_yield'];

/** The tools named beyond the safe set, as the classifier lists them: sorted, no duplicates. */
const offered = (...lists: string[][]) => [...new Set(lists.flat())].filter((t) => !SAFE.includes(t)).sort();
const minus = (list: string[], ...names: string[]) => list.filter((t) => !names.includes(t));
/** Everything: no profile or `full`. */
const ALL = offered(CATALOG, [PLUGINS, MCP]);

/** Global tools with Code Mode off, so a case tests the policy alone. */
const off = (tools: object = {}) => ({ tools: { ...tools, codeMode: false } });
/** A config with `main` and `public`, given the global and the public agent's tools (Code Mode off). */
const fleet = (tools: object, publicTools: object, publicEntry: object = {}) => ({
  tools: { codeMode: false, ...tools },
  agents: { entries: { main: { default: true }, public: { ...publicEntry, tools: publicTools } } },
});
/** The agent that is offered nothing from the policy: what the Code Mode and Tool Search cases add to. */
const bare = { profile: 'minimal', deny: ['gateway', 'session_status', PLUGINS] };
const withCode = (tools: object, publicTools: object = bare) => ({
  tools,
  agents: { entries: { main: { default: true }, public: { tools: publicTools } } },
});
// The bridge's list of host tools before this review, which its fix text told the operator to deny.
const OLD_HOST_TOOLS = [
  'exec',
  'process',
  'terminal',
  'read',
  'write',
  'edit',
  'apply_patch',
  'ls',
  'browser',
  'canvas',
  'computer',
  'nodes',
  'mobile_ui',
  'file_fetch',
  'file_write',
  'dir_list',
  'dir_fetch',
  'cron',
  'gateway',
  'plugins',
  'openclaw',
];
// GATEWAY.md's "public agent", OpenClaw's own example.
const GATEWAY_MD_PUBLIC = {
  profile: 'minimal',
  deny: [
    'read',
    'write',
    'edit',
    'apply_patch',
    'exec',
    'process',
    'browser',
    'canvas',
    'nodes',
    'cron',
    'gateway',
    'image',
  ],
};

// [case, config, agent id, tools offered beyond the safe set (empty = restricted)]
const cases: [string, unknown, string, string[]][] = [
  // The security review's two configs
  [
    'review: a messaging agent denying gateway still gets secrets, sessions, message, MCP and Code Mode',
    { agents: { entries: { main: {}, public: { tools: { profile: 'messaging', deny: ['gateway'] } } } } },
    'public',
    offered(minus(MESSAGING, 'gateway'), [MCP, PLUGINS, CODE]),
  ],
  [
    "review: profile full with the old host-tool list denied keeps the rest (canvas's deny takes show_widget)",
    {
      tools: { profile: 'full' },
      agents: { entries: { main: {}, public: { tools: { deny: OLD_HOST_TOOLS } } } },
    },
    'public',
    offered(minus(ALL, ...OLD_HOST_TOOLS, 'automations', 'show_widget'), [CODE]),
  ],
  [
    "GATEWAY.md's public agent: session_status (default visibility), plugins and Code Mode",
    { tools: { profile: 'full' }, agents: { entries: { main: {}, public: { tools: GATEWAY_MD_PUBLIC } } } },
    'public',
    offered(['session_status'], [PLUGINS, CODE]),
  ],

  // Profiles
  ['no profile: every core tool, plugins and MCP', off(), 'main', ALL],
  ['profile full', off({ profile: 'full' }), 'main', ALL],
  ['profile coding', off({ profile: 'coding' }), 'main', offered(CODING, [MCP, PLUGINS])],
  ['profile messaging', off({ profile: 'messaging' }), 'main', offered(MESSAGING, [MCP, PLUGINS])],
  ['profile minimal', off({ profile: 'minimal' }), 'main', offered(MINIMAL, [PLUGINS])],
  ['profile minimal with its tools and plugins denied', off(bare), 'main', []],
  [
    'session_status is safe when session tools see only their own session',
    {
      tools: {
        profile: 'minimal',
        deny: ['gateway', PLUGINS],
        codeMode: false,
        sessions: { visibility: 'self' },
      },
    },
    'main',
    [],
  ],
  [
    'but not when they see the whole agent',
    {
      tools: {
        profile: 'minimal',
        deny: ['gateway', PLUGINS],
        codeMode: false,
        sessions: { visibility: 'agent' },
      },
    },
    'main',
    ['session_status'],
  ],
  [
    'alsoAllow widens a limited profile',
    off({ profile: 'minimal', alsoAllow: ['exec'] }),
    'main',
    offered(['exec', PLUGINS], MINIMAL),
  ],
  ['alsoAllow alone restricts nothing', off({ alsoAllow: ['exec'] }), 'main', ALL],
  ['alsoAllow "*" opens a limited profile', off({ profile: 'minimal', alsoAllow: ['*'] }), 'main', ALL],

  // Allow and deny
  [
    'a non-empty allow blocks the rest',
    off({ allow: ['read', 'group:web'] }),
    'main',
    offered(['read'], GROUP.web),
  ],
  [
    'an allow of safe tools and Tool Search names only',
    off({ allow: ['sessions_yield', 'tool_search'] }),
    'main',
    [],
  ],
  ['an empty allow restricts nothing', off({ allow: [] }), 'main', ALL],
  ['allow "*"', off({ allow: ['*'] }), 'main', ALL],
  ['allowing write also allows apply_patch', off({ allow: ['write'] }), 'main', ['apply_patch', 'write']],
  [
    'denying write leaves apply_patch',
    off({ profile: 'coding', deny: ['write'] }),
    'main',
    offered(minus(CODING, 'write'), [MCP, PLUGINS]),
  ],
  ['deny wins over allow', off({ allow: ['exec', 'read'], deny: ['exec'] }), 'main', ['read']],
  [
    'deny matches aliases, case-insensitively',
    off({ profile: 'coding', deny: ['BASH', 'Cron', 'apply-patch'] }),
    'main',
    offered(minus(CODING, 'exec', 'automations', 'apply_patch'), [MCP, PLUGINS]),
  ],
  [
    'the old name image denies nothing; view_image does',
    off({ profile: 'coding', deny: ['image'] }),
    'main',
    offered(CODING, [MCP, PLUGINS]),
  ],
  [
    'view_image',
    off({ profile: 'coding', deny: ['view_image'] }),
    'main',
    offered(minus(CODING, 'view_image'), [MCP, PLUGINS]),
  ],
  [
    'denying canvas also denies show_widget',
    off({ deny: ['canvas'] }),
    'main',
    minus(ALL, 'canvas', 'show_widget'),
  ],
  [
    'the old update_plan denies progress_card',
    off({ deny: ['update_plan'] }),
    'main',
    minus(ALL, 'progress_card'),
  ],

  // Groups
  [
    'deny group:fs and group:runtime (which holds secrets and code_execution)',
    off({ profile: 'coding', deny: ['group:fs', 'group:runtime'] }),
    'main',
    offered(minus(CODING, ...GROUP.fs, ...GROUP.runtime), [MCP, PLUGINS]),
  ],
  ['allow group:runtime', off({ allow: ['group:runtime'] }), 'main', offered(GROUP.runtime)],
  [
    'deny group:openclaw keeps the file and shell primitives, canvas, plugins and MCP',
    off({ deny: ['group:openclaw'] }),
    'main',
    offered(NOT_OPENCLAW, [PLUGINS, MCP]),
  ],
  ['allow group:sessions', off({ allow: ['group:sessions'] }), 'main', offered(GROUP.sessions)],
  [
    'allow the ui, nodes, agents, media and automation groups',
    off({ allow: ['group:ui', 'group:nodes', 'group:agents', 'group:media', 'group:automation'] }),
    'main',
    offered(GROUP.ui, GROUP.nodes, GROUP.agents, GROUP.media, GROUP.automation),
  ],
  ['allow group:messaging', off({ allow: ['group:messaging'] }), 'main', ['message']],

  // Plugin and MCP tools
  ['a plugin id is offered as itself', off({ allow: ['file-transfer'] }), 'main', ['file-transfer']],
  [
    'an MCP tool given to a limited profile',
    off({ profile: 'minimal', alsoAllow: ['outlook__send_mail'] }),
    'main',
    offered(['outlook__send_mail', PLUGINS], MINIMAL),
  ],
  [
    'denying bundle-mcp denies MCP tools by name too',
    off({ profile: 'minimal', alsoAllow: ['outlook__send_mail'], deny: [MCP, PLUGINS, ...MINIMAL] }),
    'main',
    [],
  ],
  ['deny bundle-mcp', off({ deny: [MCP] }), 'main', minus(ALL, MCP)],
  ['deny group:plugins takes MCP too', off({ deny: [PLUGINS] }), 'main', minus(ALL, PLUGINS, MCP)],
  [
    'a plugin tool denied by name still leaves the other plugins, MCP among them',
    off({ profile: 'minimal', alsoAllow: ['file_fetch', PLUGINS], deny: ['file_fetch', ...MINIMAL] }),
    'main',
    [MCP, PLUGINS],
  ],
  [
    'denying group:plugins keeps a limited profile free of plugin tools',
    off({ profile: 'messaging', deny: [PLUGINS] }),
    'main',
    offered(MESSAGING),
  ],
  [
    'the profile lets plugin names through; the allow layer then decides',
    off({ profile: 'minimal', allow: ['file-transfer', 'session_status'] }),
    'main',
    ['file-transfer', 'session_status'],
  ],
  ['allow group:plugins', off({ allow: [PLUGINS] }), 'main', [MCP, PLUGINS]],
  ['allow bundle-mcp', off({ allow: [MCP] }), 'main', [MCP]],
  [
    'coding plus group:plugins',
    off({ profile: 'coding', alsoAllow: [PLUGINS] }),
    'main',
    offered(CODING, [MCP, PLUGINS]),
  ],

  // Wildcards
  ['deny * blocks everything', off({ deny: ['*'] }), 'main', []],
  ['allow with a prefix wildcard matching no core tool', off({ allow: ['file_*'] }), 'main', ['file_*']],
  [
    'allow sessions_* names the core matches and the wildcard itself',
    off({ allow: ['sessions_*'] }),
    'main',
    offered([
      'sessions_history',
      'sessions_list',
      'sessions_search',
      'sessions_send',
      'sessions_spawn',
      'sessions_*',
    ]),
  ],
  [
    'deny with a middle wildcard',
    off({ deny: ['*_*'] }),
    'main',
    offered(
      CATALOG.filter((tool) => !tool.includes('_')),
      [PLUGINS, MCP],
    ),
  ],
  ['a wildcard matches the canonical id, not the alias', off({ deny: ['cron*'] }), 'main', ALL],

  // Per-agent overrides
  ['agent stricter than global', fleet({ profile: 'full' }, bare), 'public', []],
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
    offered(MESSAGING, [MCP, PLUGINS]),
  ],
  [
    'agent inherits the global profile and adds a deny',
    fleet({ profile: 'coding' }, { deny: ['group:fs'] }),
    'public',
    offered(minus(CODING, ...GROUP.fs), [MCP, PLUGINS]),
  ],
  [
    'agent inherits the global alsoAllow',
    fleet({ alsoAllow: ['exec'] }, { profile: 'minimal' }),
    'public',
    offered(['exec', PLUGINS], MINIMAL),
  ],
  [
    'agent alsoAllow replaces the global one',
    fleet({ alsoAllow: ['exec'] }, { profile: 'minimal', alsoAllow: [] }),
    'public',
    offered(MINIMAL, [PLUGINS]),
  ],
  ["another agent's settings do not leak", fleet({}, { deny: ['*'] }), 'main', ALL],
  ['agent ids are case-insensitive', fleet({}, { deny: ['*'] }), 'Public', []],
  [
    "OpenClaw's read-only family example",
    fleet(
      { profile: 'full' },
      { allow: ['read', 'message'], deny: ['exec', 'write', 'edit', 'apply_patch', 'process', 'browser'] },
    ),
    'public',
    ['message', 'read'],
  ],

  // Code Mode: after the policy, so even an agent denied everything gets its exec
  ['Code Mode absent is "auto"', withCode({}), 'public', [CODE]],
  ['Code Mode off', withCode({ codeMode: false }), 'public', []],
  ['Code Mode "auto"', withCode({ codeMode: 'auto' }), 'public', [CODE]],
  ['Code Mode on', withCode({ codeMode: true }), 'public', [CODE]],
  ['an object without enabled is off', withCode({ codeMode: {} }), 'public', []],
  [
    'choosing the node executor does not enable it',
    withCode({ codeMode: { executor: 'node' } }),
    'public',
    [],
  ],
  ['enabled "auto" in the object', withCode({ codeMode: { enabled: 'auto' } }), 'public', [CODE]],
  [
    'on with QuickJS (a WASM guest)',
    withCode({ codeMode: { enabled: true, executor: 'quickjs' } }),
    'public',
    [],
  ],
  [
    'the agent inherits the global executor',
    withCode({ codeMode: { executor: 'quickjs' } }, { ...bare, codeMode: true }),
    'public',
    [],
  ],
  [
    'the agent turns it off over a global on',
    withCode({ codeMode: true }, { ...bare, codeMode: false }),
    'public',
    [],
  ],
  [
    'the agent turns it on over a global off',
    withCode({ codeMode: false }, { ...bare, codeMode: { enabled: true } }),
    'public',
    [CODE],
  ],
  [
    'the agent picks QuickJS under the default "auto"',
    withCode({}, { ...bare, codeMode: { executor: 'quickjs' } }),
    'public',
    [],
  ],
  [
    'an agent object without enabled inherits "auto"',
    withCode({}, { ...bare, codeMode: { executor: 'node' } }),
    'public',
    [CODE],
  ],
  [
    'an agent object without enabled inherits off',
    withCode({ codeMode: false }, { ...bare, codeMode: {} }),
    'public',
    [],
  ],
  [
    "the agent's model entry beats the agent's off",
    {
      agents: {
        entries: {
          main: { default: true },
          public: { tools: { ...bare, codeMode: false }, models: { 'standin/model': { codeMode: true } } },
        },
      },
    },
    'public',
    [CODE],
  ],
  [
    "agents.defaults.models does not beat the agent's off",
    {
      agents: {
        defaults: { models: { 'standin/model': { codeMode: true } } },
        entries: { main: { default: true }, public: { tools: { ...bare, codeMode: false } } },
      },
    },
    'public',
    [],
  ],
  [
    'agents.defaults.models turns it on over a global off',
    {
      tools: { codeMode: false },
      agents: {
        defaults: { models: { 'standin/model': { codeMode: true } } },
        entries: { main: { default: true }, public: { tools: bare } },
      },
    },
    'public',
    [CODE],
  ],
  [
    "the agent's own model entry turns that model back off",
    {
      tools: { codeMode: false },
      agents: {
        defaults: { models: { 'standin/model': { codeMode: true } } },
        entries: {
          main: { default: true },
          public: { tools: bare, models: { 'standin/model': { codeMode: false } } },
        },
      },
    },
    'public',
    [],
  ],
  [
    'a model entry turning it off leaves the other models on "auto"',
    {
      agents: {
        entries: {
          main: { default: true },
          public: { tools: bare, models: { 'standin/model': { codeMode: false } } },
        },
      },
    },
    'public',
    [CODE],
  ],

  // Tool Search: `code` mode adds tool_search_code (JavaScript in a Node child process), also after the policy
  ['Tool Search unset is the structured mode', withCode({ codeMode: false }), 'public', []],
  [
    'Tool Search true is code mode',
    withCode({ codeMode: false, toolSearch: true }),
    'public',
    ['tool_search_code'],
  ],
  [
    'Tool Search code mode',
    withCode({ codeMode: false, toolSearch: { mode: 'code' } }),
    'public',
    ['tool_search_code'],
  ],
  [
    'a Tool Search object with settings but no mode is code mode',
    withCode({ codeMode: false, toolSearch: { maxSearchLimit: 5 } }),
    'public',
    ['tool_search_code'],
  ],
  ['Tool Search tools mode', withCode({ codeMode: false, toolSearch: { mode: 'tools' } }), 'public', []],
  [
    'Tool Search directory mode',
    withCode({ codeMode: false, toolSearch: { mode: 'directory' } }),
    'public',
    [],
  ],
  [
    'Tool Search off',
    withCode({ codeMode: false, toolSearch: { enabled: false, mode: 'code' } }),
    'public',
    [],
  ],
  ['an empty Tool Search object is off', withCode({ codeMode: false, toolSearch: {} }), 'public', []],

  // Agents given as the legacy list, and the default agent
  [
    'agents.list',
    {
      tools: { codeMode: false },
      agents: { list: [{ id: 'main' }, { id: 'public', tools: { deny: ['*'] } }] },
    },
    'public',
    [],
  ],
  [
    'agents.entries wins over agents.list',
    {
      tools: { codeMode: false },
      agents: { entries: { public: {} }, list: [{ id: 'public', tools: { deny: ['*'] } }] },
    },
    'public',
    ALL,
  ],
  [
    'default is the sole agent',
    { tools: { codeMode: false }, agents: { entries: { solo: { tools: { profile: 'minimal' } } } } },
    'default',
    offered(MINIMAL, [PLUGINS]),
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

  it('says why each offered tool matters, the settings responsible and the fix', () => {
    expect(classifyToolPolicy(off({ profile: 'minimal' }), 'main').detail).toBe(
      'Agent "main" is offered gateway (changes OpenClaw itself: jobs, updates, config, plugins, skills or themes); ' +
        "group:plugins (your plugins' tools, which this check cannot see); " +
        'session_status (reads or changes your other sessions, conversations and memory). ' +
        'Settings: tools.profile "minimal", Code Mode off in tools.codeMode. ' +
        'To restrict it, deny them in agents.entries.main.tools.deny, or point the bridge at a restricted agent.',
    );
    const review = classifyToolPolicy(cases[0]![1], 'public').detail;
    for (const part of [
      'secrets (shows and deletes your stored secrets)',
      "sessions_send and 2 more (hands the caller's words to your other agents, which may run commands)",
      'message (sends messages from your accounts)',
      'bundle-mcp (every tool of your configured MCP servers)',
      'code mode exec (runs JavaScript the model writes on this machine, with no real sandbox)',
      'Settings: agents.entries.public.tools.profile "messaging", agents.entries.public.tools.deny, ' +
        'Code Mode "auto" (no tools.codeMode).',
      'deny them in agents.entries.public.tools.deny, set agents.entries.public.tools.codeMode to false, or',
    ]) {
      expect(review).toContain(part);
    }
    // Every catalog tool has a reason; a name the catalog lacks is said to be unknown.
    expect(classifyToolPolicy(off(), 'main').detail).not.toContain('does not know');
    expect(classifyToolPolicy(off({ allow: ['outlook__send_mail'] }), 'main').detail).toContain(
      'outlook__send_mail (tools this check does not know (plugin or MCP names))',
    );
    const web = classifyToolPolicy(off({ allow: ['web_fetch'] }), 'main').detail;
    expect(web).toContain(
      'web_fetch (fetches and searches the web, including addresses on your own network)',
    );
  });

  it('names the model entry that keeps Code Mode on, and Tool Search as a global fix', () => {
    const byModel = classifyToolPolicy(
      cases.find(([name]) => name.startsWith("the agent's model entry"))![1],
      'public',
    );
    expect(byModel.detail).toContain('Code Mode on in agents.entries.public.models["standin/model"]');
    expect(byModel.detail).toContain(
      'set agents.entries.public.tools.codeMode to false and drop agents.entries.public.models["standin/model"].codeMode',
    );
    const search = classifyToolPolicy(withCode({ codeMode: false, toolSearch: true }), 'public').detail;
    expect(search).toContain('tools.toolSearch in "code" mode');
    expect(search).toContain('To restrict it, set tools.toolSearch to false or { mode: "tools" }, or point');
  });

  it('names the agent settings that restrict it', () => {
    expect(
      classifyToolPolicy(fleet({ profile: 'full' }, { ...bare, codeMode: false }), 'public').detail,
    ).toBe(
      'Agent "public" is offered nothing that reaches this machine or acts for you ' +
        '(agents.entries.public.tools.profile "minimal", agents.entries.public.tools.deny, ' +
        'Code Mode off in agents.entries.public.tools.codeMode).',
    );
    const listed = { agents: { list: [{ id: 'a' }, { id: 'b', tools: { allow: ['message'] } }] } };
    expect(classifyToolPolicy(listed, 'b').detail).toContain('agents.list[1].tools.allow');
    const quick = classifyToolPolicy(
      withCode({ codeMode: { enabled: true, executor: 'quickjs' } }),
      'public',
    );
    expect(quick.detail).toContain('Code Mode on in tools.codeMode with QuickJS');
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

  it('never reads a restriction from a roster OpenClaw refuses: several agents and no owner (review of issue 15)', () => {
    const restricting = (agents: object) => ({
      tools: { codeMode: false },
      agents: { ...agents, entries: { main: {}, public: { tools: bare } } },
    });
    // The gateway skips such a file and keeps the config it ran before: whatever that gives "public".
    const refused = classifyToolPolicy(restricting({}), 'public');
    expect(refused).toMatchObject({ verdict: 'unknown', notLoaded: expect.stringMatching(/several agents/) });
    expect(refused.detail).toMatch(/agents\.ownership: "explicit".*openclaw config validate/);
    // An owner makes it a roster OpenClaw runs: its restriction stands.
    expect(classifyToolPolicy(restricting({ ownership: 'explicit' }), 'public').verdict).toBe('restricted');
    expect(classifyToolPolicy(fleet({}, bare), 'public').verdict).toBe('restricted');
  });

  it('cannot tell, rather than guess, when the gateway would refuse the config or it is out of reach', () => {
    const unknown = (config: unknown, agent = 'main') => {
      const view = classifyToolPolicy(config, agent);
      expect(view.verdict).toBe('unknown');
      return view.detail;
    };
    expect(unknown({ tools: { profile: 'open' } })).toBe(
      'Cannot tell what agent "main" may use: tools.profile "open" is not a tool profile.',
    );
    expect(unknown({ tools: { deny: 'exec' } })).toContain('tools.deny is not a list of tool names');
    expect(unknown({ tools: { allow: ['read'], alsoAllow: ['exec'] } })).toContain(
      'tools sets both allow and alsoAllow, which OpenClaw refuses',
    );
    expect(unknown(fleet({}, { allow: ['read'], alsoAllow: ['exec'] }), 'public')).toContain(
      'agents.entries.public.tools sets both allow and alsoAllow',
    );
    expect(unknown({ tools: { codeMode: 'on' } })).toContain(
      'tools.codeMode is not true, false, "auto" or a Code Mode object',
    );
    expect(unknown({ tools: { codeMode: { enabled: 'yes' } } })).toContain('tools.codeMode.enabled is not');
    expect(unknown({ tools: { codeMode: { executor: 'deno' } } })).toContain(
      'tools.codeMode.executor is not',
    );
    expect(unknown({ agents: { defaults: { models: { 'a/b': { codeMode: 'auto' } } } } })).toContain(
      'agents.defaults.models["a/b"].codeMode is not true or false',
    );
    expect(unknown({ agents: { defaults: { tools: { profile: 'minimal' } } } })).toContain(
      'agents.defaults.tools is not an OpenClaw 2026.9 setting',
    );
    expect(unknown({ agents: { $include: './agents.json5' } })).toContain('agents uses $include');
    expect(unknown({ agents: { list: { id: 'main' } } })).toContain('agents.list is not a list');
    expect(unknown(['not', 'a', 'config'])).toContain('the config is not an object');
    expect(unknown({ agents: { entries: { a: {}, b: {} } } }, 'default')).toContain('none is the default');
    // An explicit fleet ignores legacy default markers.
    const explicit = { agents: { ownership: 'explicit', entries: { a: { default: true }, b: {} } } };
    expect(unknown(explicit, 'default')).toContain('none is the default');
    // An empty allow beside alsoAllow is fine: OpenClaw only refuses both non-empty.
    expect(classifyToolPolicy(off({ allow: [], alsoAllow: ['exec'] }), 'main').verdict).toBe(
      'exposes-host-tools',
    );
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
  const publicTools = (config: Record<string, unknown>) =>
    (config as { agents: { entries: { public: { tools: { deny: string[] } } } } }).agents.entries.public
      .tools;

  it('parses as JSON5 and classifies as restricted, keeping main', () => {
    const config = parse(restrictedAgentSnippet('public'));
    expect(classifyToolPolicy(config, 'public').verdict).toBe('restricted');
    expect(configuredAgents(config)).toEqual(['main', 'public']);
    expect(config).toMatchObject({
      agents: {
        entries: {
          public: {
            workspace: '~/.openclaw/workspace-public',
            tools: { profile: 'minimal', codeMode: false },
          },
        },
      },
    });
  });

  it('denies every catalog tool outside the safe set by its current name, plugins, MCP and "*"', () => {
    const deny = publicTools(parse(restrictedAgentSnippet('public'))).deny;
    expect([...deny].sort()).toEqual(['*', MCP, PLUGINS, ...minus(CATALOG, ...SAFE)].sort());
    expect(deny).toContain('view_image');
    expect(deny).toContain('automations');
    expect(deny).not.toContain('image');
    expect(deny).not.toContain('cron');
  });

  it.each([
    ['profile full and allow *', { profile: 'full', allow: ['*'] }],
    [
      'profile full and an alsoAllow of everything',
      { profile: 'full', alsoAllow: ['*', ...CATALOG, PLUGINS, MCP, 'outlook__*', 'file-transfer', 'image'] },
    ],
    [
      'a limited profile and an alsoAllow of everything',
      { profile: 'minimal', alsoAllow: ['*', ...CATALOG] },
    ],
    ['Code Mode on with node', { profile: 'full', codeMode: { enabled: true, executor: 'node' } }],
    ['Tool Search in tools mode', { profile: 'full', toolSearch: { mode: 'tools' } }],
    ['the default session visibility', { profile: 'full', sessions: { visibility: 'all' } }],
  ])('stays restricted under %s', (_name, tools) => {
    const config = parse(restrictedAgentSnippet('public'));
    config.tools = tools;
    expect(classifyToolPolicy(config, 'public').verdict).toBe('restricted');
  });

  it('stays restricted when agents.defaults turns Code Mode on for a model', () => {
    const config = parse(restrictedAgentSnippet('public'));
    config.agents = {
      ...(config.agents as object),
      defaults: { models: { 'openai/gpt-5.5': { codeMode: true } } },
    };
    expect(classifyToolPolicy(config, 'public').verdict).toBe('restricted');
  });

  it('cannot turn off the global tools.toolSearch code mode, and says so', () => {
    const config = parse(restrictedAgentSnippet('public'));
    config.tools = { toolSearch: true };
    expect(classifyToolPolicy(config, 'public')).toMatchObject({
      verdict: 'exposes-host-tools',
      tools: ['tool_search_code'],
    });
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
        tools: { profile: 'minimal', deny: ['gateway', 'session_status', 'group:plugins',], codeMode: false, },
      },
    },
  },
}
`;

  it('reads real JSON5: comments, trailing commas, unquoted keys', () => {
    const path = file('openclaw.json', json5);
    expect(readToolExposure(path, 'public').verdict).toBe('restricted');
    expect(readToolExposure(path, 'main')).toMatchObject({
      verdict: 'exposes-host-tools',
      tools: offered(ALL, [CODE]),
    });
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
