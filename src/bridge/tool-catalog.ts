// OpenClaw 2026.9.6's tool catalog and the facts about it the bridge's checks rest on: data only, read by
// the policy engine (effective-tools.ts) and the classifiers (tool-policy.ts, tool-class.ts). Copied from
// its compiled code: dist/tool-catalog-*.mjs (CORE_TOOL_DEFINITIONS, groups, profiles), tool-policy-shared
// (aliases), agents/sandbox/constants (the sandbox tool policy's defaults).

/**
 * What an agent may be offered and still count as restricted: OpenClaw's Tool Search controls
 * (`tool_search`, `tool_describe`, `tool_call`, which reach only the policy-filtered catalog) and
 * `sessions_yield` (ends the agent's own turn to wait for its own sub-agents). `session_status` joins them
 * only when `tools.sessions.visibility` is "self": under the default "all" it reads, and changes the model
 * of, the operator's other sessions.
 */
export const SAFE_TOOLS: readonly string[] = ['sessions_yield', 'tool_call', 'tool_describe', 'tool_search'];

/** The name this check gives Code Mode's `exec` (JavaScript in the gateway's process via `node:vm`). */
export const CODE_MODE_EXEC = 'code mode exec';

/**
 * OpenClaw 2026.9.6's core tool catalog (CORE_TOOL_DEFINITIONS): each tool's section, which is its
 * `group:<section>`, and the limited profiles that offer it (n minimal, c coding, m messaging; `full` and
 * no profile offer every one). All but the file and shell primitives and `canvas` are in `group:openclaw`.
 */
export const CATALOG: readonly (readonly [tool: string, section: string, profiles: string])[] = [
  ['ls', 'fs', 'c'],
  ['read', 'fs', 'c'],
  ['write', 'fs', 'c'],
  ['edit', 'fs', 'c'],
  ['apply_patch', 'fs', 'c'],
  ['exec', 'runtime', 'c'],
  ['process', 'runtime', 'c'],
  ['code_execution', 'runtime', 'c'],
  ['secrets', 'runtime', 'cm'],
  ['web_search', 'web', 'c'],
  ['web_fetch', 'web', 'c'],
  ['x_search', 'web', 'c'],
  ['memory_search', 'memory', 'c'],
  ['memory_get', 'memory', 'c'],
  ['sessions', 'sessions', 'cm'],
  ['sessions_list', 'sessions', 'cm'],
  ['sessions_history', 'sessions', 'cm'],
  ['sessions_search', 'sessions', 'cm'],
  ['conversations_list', 'sessions', 'cm'],
  ['conversations_send', 'sessions', 'cm'],
  ['conversations_turn', 'sessions', 'cm'],
  ['sessions_send', 'sessions', 'cm'],
  ['sessions_spawn', 'sessions', 'cm'],
  ['github_identity_status', 'sessions', 'c'],
  ['github_publish', 'sessions', 'c'],
  ['agents_wait', 'sessions', 'c'],
  ['sessions_yield', 'sessions', 'cm'],
  ['subagents', 'sessions', 'cm'],
  ['session_status', 'sessions', 'ncm'],
  ['suggest_task', 'sessions', 'c'],
  ['dismiss_task', 'sessions', 'c'],
  ['browser', 'ui', ''],
  ['screen', 'ui', 'c'],
  ['theme', 'ui', 'cm'],
  ['dashboard', 'ui', 'c'],
  ['terminal', 'ui', 'c'],
  ['portal', 'ui', 'c'],
  ['canvas', 'ui', ''],
  ['show_widget', 'ui', ''],
  ['message', 'messaging', 'm'],
  ['heartbeat_respond', 'automation', ''],
  ['automations', 'automation', 'c'],
  ['gateway', 'automation', 'ncm'],
  ['plugins', 'automation', 'c'],
  ['openclaw', 'automation', ''],
  ['nodes', 'nodes', ''],
  ['computer', 'nodes', ''],
  ['mobile_ui', 'nodes', ''],
  ['agents_list', 'agents', ''],
  ['get_goal', 'agents', 'c'],
  ['create_goal', 'agents', 'c'],
  ['update_goal', 'agents', 'c'],
  ['progress_card', 'agents', 'c'],
  ['ask_user', 'agents', 'cm'],
  ['skill_workshop', 'agents', 'c'],
  ['view_image', 'media', 'c'],
  ['image_generate', 'media', 'c'],
  ['music_generate', 'media', 'c'],
  ['video_generate', 'media', 'c'],
  ['tts', 'media', ''],
  ['pdf', 'media', ''],
];
/** Every core tool by its current name, in catalog order. */
export const CORE_TOOLS: readonly string[] = CATALOG.map(([tool]) => tool);
export const CORE = new Set(CORE_TOOLS);
const NOT_IN_OPENCLAW_GROUP = new Set([
  'ls',
  'read',
  'write',
  'edit',
  'apply_patch',
  'exec',
  'process',
  'canvas',
]);

export const GROUPS = new Map<string, string[]>([
  ['group:openclaw', CATALOG.map(([tool]) => tool).filter((tool) => !NOT_IN_OPENCLAW_GROUP.has(tool))],
]);
for (const [tool, section] of CATALOG) {
  GROUPS.set(`group:${section}`, [...(GROUPS.get(`group:${section}`) ?? []), tool]);
}

// The profile allowlists; `coding` and `messaging` also name `bundle-mcp` (every configured MCP server).
export const PROFILES = new Map<string, string[]>([
  ['minimal', CATALOG.filter(([, , p]) => p.includes('n')).map(([tool]) => tool)],
  ['coding', [...CATALOG.filter(([, , p]) => p.includes('c')).map(([tool]) => tool), 'bundle-mcp']],
  ['messaging', [...CATALOG.filter(([, , p]) => p.includes('m')).map(([tool]) => tool), 'bundle-mcp']],
  ['full', ['*']],
]);

// OpenClaw matches names case-insensitively after these aliases (`cron` is the scheduler's old name) and
// renames; a policy entry `canvas` also covers `show_widget`. The old `image` is no alias: it matches nothing.
export const ALIASES = new Map([
  ['bash', 'exec'],
  ['apply-patch', 'apply_patch'],
  ['cron', 'automations'],
  ['update_plan', 'progress_card'],
]);
// Names outside the policy: Tool Search's controls, added after it.
export const META_TOOLS = new Set(['tool_search', 'tool_describe', 'tool_call', 'tool_search_code']);

/** Why each kind of tool matters, most serious first; the detail names them in this order. */
export const REASONS: readonly (readonly [why: string, tools: readonly string[]])[] = [
  ['runs commands on this machine', ['exec', 'process', 'terminal']],
  [
    'runs JavaScript the model writes on this machine, with no real sandbox',
    [CODE_MODE_EXEC, 'tool_search_code'],
  ],
  [
    'reads or changes files on this machine',
    ['ls', 'read', 'write', 'edit', 'apply_patch', 'view_image', 'pdf'],
  ],
  ['shows and deletes your stored secrets', ['secrets']],
  [
    "hands the caller's words to your other agents, which may run commands",
    [
      'sessions_send',
      'sessions_spawn',
      'conversations_send',
      'conversations_turn',
      'subagents',
      'agents_wait',
    ],
  ],
  ['sends messages from your accounts', ['message']],
  [
    'drives your browser, screen, desktop or paired devices',
    ['browser', 'canvas', 'screen', 'dashboard', 'portal', 'show_widget', 'computer', 'nodes', 'mobile_ui'],
  ],
  [
    'changes OpenClaw itself: jobs, updates, config, plugins, skills or themes',
    ['automations', 'gateway', 'plugins', 'openclaw', 'heartbeat_respond', 'skill_workshop', 'theme'],
  ],
  [
    'fetches and searches the web, including addresses on your own network',
    ['web_fetch', 'web_search', 'x_search'],
  ],
  ['every tool of your configured MCP servers', ['bundle-mcp']],
  ["your plugins' tools, which this check cannot see", ['group:plugins']],
  [
    'reads or changes your other sessions, conversations and memory',
    [
      'sessions',
      'sessions_list',
      'sessions_history',
      'sessions_search',
      'conversations_list',
      'session_status',
      'suggest_task',
      'dismiss_task',
      'memory_search',
      'memory_get',
      'agents_list',
      'get_goal',
      'create_goal',
      'update_goal',
      'progress_card',
      'ask_user',
      'sessions_yield',
    ],
  ],
  ['acts with your GitHub identity', ['github_identity_status', 'github_publish']],
  [
    'spends your money on outside services',
    ['code_execution', 'image_generate', 'music_generate', 'video_generate', 'tts'],
  ],
];
export const UNKNOWN_REASON = 'tools this check does not know (plugin or MCP names)';

/**
 * The sandbox tool policy when the config sets none (dist/constants-*.mjs, DEFAULT_TOOL_ALLOW and
 * DEFAULT_TOOL_DENY): a sandboxed session is offered at most these, and never the denied ones unless an
 * explicit sandbox allow names them. The denied list also holds every channel id (plugin tools here).
 */
export const SANDBOX_DEFAULT_ALLOW: readonly string[] = [
  'exec',
  'process',
  'read',
  'ls',
  'write',
  'edit',
  'apply_patch',
  'view_image',
  'sessions_list',
  'sessions_history',
  'sessions_search',
  'sessions_send',
  'sessions_spawn',
  'sessions_yield',
  'subagents',
  'session_status',
];
export const SANDBOX_DEFAULT_DENY: readonly string[] = [
  'browser',
  'canvas',
  'computer',
  'mobile_ui',
  'nodes',
  'automations',
  'gateway',
];

/**
 * The tools that run inside the sandbox when the agent has one (docs/gateway/sandboxing/what-gets-sandboxed.md:
 * "exec, ls, read, write, edit, apply_patch, process"; `view_image` reads through the same sandbox file
 * bridge). Every other tool runs in the gateway's process on the operator's machine, sandbox or not.
 */
export const SANDBOXED_TOOLS: readonly string[] = [
  'exec',
  'process',
  'ls',
  'read',
  'write',
  'edit',
  'apply_patch',
  'view_image',
];

/**
 * Search and fetch (`group:web`): `web_search` and `x_search` send a query to the configured provider (xAI
 * for `x_search`), `web_fetch` GETs a URL the model picks, from the gateway, behind OpenClaw's
 * private-network guard (docs/tools/web.md, docs/tools/web-fetch.md).
 */
export const WEB_TOOLS: readonly string[] = ['web_search', 'web_fetch', 'x_search'];
