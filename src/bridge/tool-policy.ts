// Can the gateway agent that strangers reach touch the operator's machine, or act for the operator? Read
// from OpenClaw's own config (GATEWAY.md "Who the caller becomes on the gateway": a bridged call is an owner
// turn, so the agent's tool policy is the only boundary). Checked against OpenClaw 2026.9.6's compiled
// catalog and policy code (dist/tool-catalog-*.mjs, tool-policy-shared, tool-policy-match, agent-tools.policy,
// tool-surface-bridge).
//
// The logic is inverted on purpose: an agent is `restricted` only when everything it can be offered lies in
// a small known-safe set; any other tool, plugin or MCP tool, unknown name or wildcard counts against it.
// Policy layers mirror OpenClaw's: the profile (plus `alsoAllow`, plus any plugin tool whose manifest puts
// it in that profile), then `tools.allow`/`deny`, then the agent's `allow`/`deny`; each layer can only
// remove tools, a deny anywhere wins, and a non-empty allow blocks what it does not name. Provider, group,
// sender and sandbox layers are left out: they can only remove more, so leaving them out errs towards
// warning. Two surfaces are added after that policy and are read separately: Code Mode's `exec` and Tool
// Search's `tool_search_code`.
import type { ToolExposureView } from '../protocol/console-api.js';
import { readOpenClawFile, type OpenClawFile } from './openclaw-file.js';

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
const CATALOG: readonly (readonly [tool: string, section: string, profiles: string])[] = [
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
const CORE = new Set(CORE_TOOLS);
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

const GROUPS = new Map<string, string[]>([
  ['group:openclaw', CATALOG.map(([tool]) => tool).filter((tool) => !NOT_IN_OPENCLAW_GROUP.has(tool))],
]);
for (const [tool, section] of CATALOG) {
  GROUPS.set(`group:${section}`, [...(GROUPS.get(`group:${section}`) ?? []), tool]);
}

// The profile allowlists; `coding` and `messaging` also name `bundle-mcp` (every configured MCP server).
const PROFILES = new Map<string, string[]>([
  ['minimal', CATALOG.filter(([, , p]) => p.includes('n')).map(([tool]) => tool)],
  ['coding', [...CATALOG.filter(([, , p]) => p.includes('c')).map(([tool]) => tool), 'bundle-mcp']],
  ['messaging', [...CATALOG.filter(([, , p]) => p.includes('m')).map(([tool]) => tool), 'bundle-mcp']],
  ['full', ['*']],
]);

// OpenClaw matches names case-insensitively after these aliases (`cron` is the scheduler's old name) and
// renames; a policy entry `canvas` also covers `show_widget`. The old `image` is no alias: it matches nothing.
const ALIASES = new Map([
  ['bash', 'exec'],
  ['apply-patch', 'apply_patch'],
  ['cron', 'automations'],
  ['update_plan', 'progress_card'],
]);
// Names outside the policy: Tool Search's controls, added after it.
const META_TOOLS = new Set(['tool_search', 'tool_describe', 'tool_call', 'tool_search_code']);

/** Why each kind of tool matters, most serious first; the detail names them in this order. */
const REASONS: readonly (readonly [why: string, tools: readonly string[]])[] = [
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
const UNKNOWN_REASON = 'tools this check does not know (plugin or MCP names)';

/** A config the gateway would reject, or one this check cannot follow: the verdict is `unknown`. */
class ConfigProblem extends Error {}

/** One filtering layer, entries normalized and expanded; `allow` undefined means no allowlist. */
interface Layer {
  allow?: string[];
  deny: string[];
  /** Whether `allow` is the scope's own `allow` (not `*` plus its `alsoAllow`), for the operator. */
  ownAllow?: boolean;
  /** A profile: plugins add their own tools to it (manifest `toolMetadata.<tool>.profiles`). */
  pluginsJoin?: boolean;
}

/** A core catalog tool, any plugin tool, any MCP server tool, or a name an allowlist gives. */
interface Candidate {
  kind: 'core' | 'plugins' | 'mcp' | 'named';
  name: string;
}

interface Agent {
  id: string;
  /** Where its settings live, for the operator: `agents.entries.<key>` or `agents.list[<i>]`. */
  path: string;
  entry: Record<string, unknown>;
}

interface CodeModeSetting {
  enabled?: boolean | 'auto';
  executor?: 'node' | 'quickjs';
}

/** The target agent's effective tool exposure, from a parsed `openclaw.json`. */
export function classifyToolPolicy(config: unknown, agentId: string): ToolExposureView {
  try {
    return classify(config, agentId);
  } catch (error) {
    if (!(error instanceof ConfigProblem)) throw error;
    return { verdict: 'unknown', detail: `Cannot tell what agent "${agentId}" may use: ${error.message}.` };
  }
}

/** Reads and classifies the OpenClaw config file; cheap enough to call per status poll, but cache it. */
export function readToolExposure(
  configPath: string,
  agentId: string,
  env: NodeJS.ProcessEnv = process.env,
): ToolExposureView {
  const file = readOpenClawFile(configPath, env);
  return file.ok ? classifyToolPolicy(file.config, agentId) : exposureOfFile(file, agentId);
}

/** The verdict when the config file could not be read or parsed: unknown, with why. */
export function exposureOfFile(file: OpenClawFile & { ok: false }, agentId: string): ToolExposureView {
  const detail =
    file.reason === 'missing'
      ? `${file.detail}, so the tools of agent "${agentId}" cannot be checked.`
      : `${file.detail}.`;
  return { verdict: 'unknown', detail };
}

/** The agent ids the config declares, as `GET /v1/models` would list them after `openclaw/`. */
export function configuredAgents(config: unknown): string[] {
  return declaredAgents(config) ?? [];
}

/** The same, or undefined when this check cannot follow the roster ($include, a malformed list). */
export function declaredAgents(config: unknown): string[] | undefined {
  try {
    return [...new Set(roster(config).map((agent) => agent.id))];
  } catch (error) {
    if (error instanceof ConfigProblem) return undefined;
    throw error;
  }
}

function classify(config: unknown, agentId: string): ToolExposureView {
  const root = record(config, 'the config') ?? {};
  const agents = roster(root);
  const agent = findAgent(root, agents, agentId);
  if (!agent) {
    const declared = agents.length > 0 ? agents.map((a) => `"${a.id}"`).join(', ') : 'no agents';
    return {
      verdict: 'unknown',
      detail: `Agent "${normalizeAgentId(agentId)}" is not in the OpenClaw config (it declares ${declared}), so the gateway will refuse it.`,
    };
  }
  const agentsSection = record(root.agents, 'agents') ?? {};
  const defaults = record(agentsSection.defaults, 'agents.defaults') ?? {};
  if (defaults.tools !== undefined && defaults.tools !== null) {
    throw new ConfigProblem(
      'agents.defaults.tools is not an OpenClaw 2026.9 setting, so the gateway refuses it',
    );
  }

  const global = record(root.tools, 'tools') ?? {};
  const toolsAt = `${agent.path}.tools`;
  const own = record(agent.entry.tools, toolsAt) ?? {};
  // The agent's profile and alsoAllow replace the global ones; its allow/deny add a layer.
  const profileAt = own.profile != null ? `${toolsAt}.profile` : 'tools.profile';
  const profile = own.profile ?? global.profile;
  const inProfile = profile == null ? undefined : PROFILES.get(String(profile));
  if (profile != null && !inProfile) {
    throw new ConfigProblem(`${profileAt} "${String(profile)}" is not a tool profile`);
  }
  const alsoAt = own.alsoAllow != null ? `${toolsAt}.alsoAllow` : 'tools.alsoAllow';
  const alsoAllow = names(own.alsoAllow ?? global.alsoAllow, alsoAt) ?? [];
  const globalLayer = scope(global, 'tools');
  const agentLayer = scope(own, toolsAt);
  const layers = [
    ...(inProfile ? [{ allow: expand([...inProfile, ...alsoAllow]), deny: [], pluginsJoin: true }] : []),
    globalLayer,
    agentLayer,
  ];

  // Everything that could be offered: the core catalog, any plugin or MCP tool, and every other name an
  // allowlist gives (a plugin id, an MCP tool, a wildcard, a name this check does not know).
  const named = layers.flatMap((layer) => (layer.allow ?? []).filter(isOtherName));
  const candidates: Candidate[] = [
    ...CATALOG.map(([tool]): Candidate => ({ kind: 'core', name: tool })),
    { kind: 'plugins', name: 'group:plugins' },
    { kind: 'mcp', name: 'bundle-mcp' },
    ...[...new Set(named)].map((name): Candidate => ({ kind: 'named', name })),
  ];
  const sessions = record(global.sessions, 'tools.sessions') ?? {};
  const selfOnly = String(sessions.visibility ?? '').toLowerCase() === 'self';
  const safe = new Set([...SAFE_TOOLS, ...(selfOnly ? ['session_status'] : [])]);
  const offered = candidates
    .filter((candidate) => layers.every((layer) => permits(layer, candidate)))
    .map((candidate) => candidate.name)
    .filter((name) => !safe.has(name));

  const code = codeMode(root, global, own, agent);
  const searchCode = toolSearchCode(global.toolSearch);
  const tools = [
    ...offered,
    ...(code.exposed ? [CODE_MODE_EXEC] : []),
    ...(searchCode ? ['tool_search_code'] : []),
  ].sort();

  // The settings that shaped the answer, so the operator knows what to change.
  const settings = [
    profile == null ? 'no tools.profile, so every core and plugin tool' : `${profileAt} "${String(profile)}"`,
    ...(inProfile && alsoAllow.length > 0 ? [alsoAt] : []),
    ...listsIn(globalLayer, 'tools'),
    ...listsIn(agentLayer, toolsAt),
    code.setting,
    ...(searchCode ? ['tools.toolSearch in "code" mode'] : []),
  ].join(', ');
  const name = agent.id === normalizeAgentId(agentId) ? `"${agent.id}"` : `"${agent.id}" (the default agent)`;
  if (tools.length === 0 && ownerless(root, agents)) {
    // The gateway keeps the last config it accepted: a restriction in one it refuses is not what runs.
    const notLoaded = 'the file lists several agents and none owns the fleet';
    return {
      verdict: 'unknown',
      notLoaded,
      detail: `The OpenClaw config lists several agents without agents.ownership: "explicit" (or one of them marked default: true), which OpenClaw refuses, so it is not what the gateway runs and the restriction of agent ${name} in it may not be either. Run openclaw config validate where the gateway runs and fix what it reports: the gateway reloads a valid file by itself.`,
    };
  }
  if (tools.length === 0) {
    return {
      verdict: 'restricted',
      detail: `Agent ${name} is offered nothing that reaches this machine or acts for you (${settings}).`,
    };
  }
  const fixes = [
    ...(offered.length > 0 ? [`deny them in ${toolsAt}.deny`] : []),
    ...(code.exposed
      ? [`set ${toolsAt}.codeMode to false${code.byModel ? ` and drop ${code.source}` : ''}`]
      : []),
    ...(searchCode ? ['set tools.toolSearch to false or { mode: "tools" }'] : []),
  ];
  return {
    verdict: 'exposes-host-tools',
    tools,
    detail: `Agent ${name} is offered ${reasons(tools)}. Settings: ${settings}. To restrict it, ${fixes.join(', ')}, or point the bridge at a restricted agent.`,
  };
}

/** The offered tools grouped by why they matter: `a, b (why); c (why)`, a few names per group. */
function reasons(tools: string[]): string {
  const known = new Set(REASONS.flatMap(([, members]) => members));
  const groups = [
    ...REASONS.map(([why, members]) => [why, tools.filter((tool) => members.includes(tool))] as const),
    [UNKNOWN_REASON, tools.filter((tool) => !known.has(tool))] as const,
  ].filter(([, members]) => members.length > 0);
  return groups
    .map(([why, members]) => {
      const listed =
        members.length > 4
          ? `${members.slice(0, 3).join(', ')} and ${members.length - 3} more`
          : members.join(', ');
      return `${listed} (${why})`;
    })
    .join('; ');
}

/**
 * Whether Code Mode can put its `exec` in front of the model. OpenClaw resolves activation per model from
 * the first setting present: the agent's `models["provider/model"].codeMode`, the agent's
 * `tools.codeMode`, `agents.defaults.models["provider/model"].codeMode`, then `tools.codeMode`, which is
 * "auto" when absent (an object without `enabled` is off). "auto" engages on models their catalog marks
 * preferred. The executor is the agent's, else the global one, else `node` (`node:vm`, no sandbox);
 * `quickjs` is a WASM guest that reaches only the policy-filtered tools.
 */
function codeMode(
  root: Record<string, unknown>,
  global: Record<string, unknown>,
  own: Record<string, unknown>,
  agent: Agent,
): { exposed: boolean; setting: string; source: string; byModel: boolean } {
  const globalMode = codeModeSetting(global.codeMode, 'tools.codeMode');
  const ownMode = codeModeSetting(own.codeMode, `${agent.path}.tools.codeMode`);
  const executor = ownMode?.executor ?? globalMode?.executor ?? 'node';
  const agentModels = modelCodeModes(agent.entry.models, `${agent.path}.models`);
  const defaults = record(record(root.agents, 'agents')?.defaults, 'agents.defaults') ?? {};
  const defaultModels = modelCodeModes(defaults.models, 'agents.defaults.models');

  // The first setting that can engage it, if any, else the one that keeps it off.
  let on: { source: string; value: true | 'auto'; byModel?: boolean } | undefined;
  let off: string;
  const agentModel = agentModels.find(([, value]) => value);
  if (agentModel) on = { source: `${agent.path}.models["${agentModel[0]}"]`, value: true, byModel: true };
  if (ownMode?.enabled !== undefined) {
    off = `${agent.path}.tools.codeMode`;
    if (!on && ownMode.enabled !== false) on = { source: off, value: ownMode.enabled };
  } else {
    const defaultModel = defaultModels.find(([key, value]) => value && !agentModels.some(([k]) => k === key));
    if (!on && defaultModel) on = { source: `agents.defaults.models["${defaultModel[0]}"]`, value: true };
    off = 'tools.codeMode';
    const enabled = globalMode ? (globalMode.enabled ?? false) : 'auto';
    if (!on && enabled !== false) on = { source: globalMode ? off : 'no tools.codeMode', value: enabled };
  }
  if (!on) return { exposed: false, setting: `Code Mode off in ${off}`, source: off, byModel: false };
  const state = on.value === 'auto' ? 'Code Mode "auto"' : 'Code Mode on';
  const where = on.source.startsWith('no ') ? `(${on.source})` : `in ${on.source}`;
  const quickjs = executor === 'quickjs';
  return {
    exposed: !quickjs,
    setting: `${state} ${where}${quickjs ? ' with QuickJS' : ''}`,
    source: `${on.source}${on.byModel ? '.codeMode' : ''}`,
    byModel: on.byModel === true,
  };
}

function codeModeSetting(value: unknown, at: string): CodeModeSetting | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === true || value === false || value === 'auto') return { enabled: value };
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigProblem(`${at} is not true, false, "auto" or a Code Mode object`);
  }
  const { enabled, executor } = value as Record<string, unknown>;
  if (enabled !== undefined && typeof enabled !== 'boolean' && enabled !== 'auto') {
    throw new ConfigProblem(`${at}.enabled is not true, false or "auto"`);
  }
  if (executor !== undefined && executor !== 'node' && executor !== 'quickjs') {
    throw new ConfigProblem(`${at}.executor is not "node" or "quickjs"`);
  }
  return { enabled, executor } as CodeModeSetting;
}

/** The `codeMode` booleans of a `models` map, as [model, value] pairs. */
function modelCodeModes(value: unknown, at: string): [string, boolean][] {
  const models = record(value, at) ?? {};
  return Object.entries(models).flatMap(([key, entry]): [string, boolean][] => {
    const codeMode = record(entry, `${at}["${key}"]`)?.codeMode;
    if (codeMode === undefined || codeMode === null) return [];
    if (typeof codeMode !== 'boolean')
      throw new ConfigProblem(`${at}["${key}"].codeMode is not true or false`);
    return [[key, codeMode]];
  });
}

/**
 * Whether Tool Search offers `tool_search_code` (model-written JavaScript in a Node child process whose
 * permission model Node itself calls no defence against hostile code). Unset is the structured `tools` mode;
 * `true`, or an object that sets anything and no other mode, selects `code`.
 */
function toolSearchCode(value: unknown): boolean {
  if (value === true) return true;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const setting = value as Record<string, unknown>;
  const configured = Object.keys(setting).some((key) => key !== 'enabled');
  const enabled = typeof setting.enabled === 'boolean' ? setting.enabled : configured;
  return enabled && !['tools', 'directory'].includes(String(setting.mode));
}

/** The agents OpenClaw knows: keyed `agents.entries`, else the legacy `agents.list`, else an implicit "main". */
function roster(config: unknown): Agent[] {
  const agents = record(record(config, 'the config')?.agents, 'agents');
  if (agents?.entries !== undefined) {
    const entries = record(agents.entries, 'agents.entries') ?? {};
    return Object.entries(entries).flatMap(([key, entry]) => {
      const value = record(entry, `agents.entries.${key}`);
      return value ? [{ id: normalizeAgentId(key), path: `agents.entries.${key}`, entry: value }] : [];
    });
  }
  if (agents?.list !== undefined) {
    if (!Array.isArray(agents.list)) throw new ConfigProblem('agents.list is not a list');
    return agents.list.flatMap((entry: unknown, i) => {
      const value = record(entry, `agents.list[${i}]`);
      return value
        ? [{ id: normalizeAgentId(String(value.id ?? '')), path: `agents.list[${i}]`, entry: value }]
        : [];
    });
  }
  return [{ id: 'main', path: 'agents.entries.main', entry: {} }];
}

/**
 * A roster of `agents.entries` OpenClaw 2026.9 refuses (its AgentsSchema; its hot reload then skips the file):
 * several agents, and neither `agents.ownership: "explicit"` nor exactly one marked `default: true`. The
 * legacy `agents.list` is not judged.
 */
export function ownerless(root: Record<string, unknown>, agents: Agent[]): boolean {
  const section = record(root.agents, 'agents');
  if (section?.entries === undefined || agents.length < 2 || section.ownership === 'explicit') return false;
  return agents.filter((agent) => agent.entry.default === true).length !== 1;
}

/** The first agent with this id; `default` (as in `openclaw/default`) is the marked or the sole agent. */
function findAgent(root: Record<string, unknown>, agents: Agent[], agentId: string): Agent | undefined {
  const id = normalizeAgentId(agentId);
  if (id !== 'default') return agents.find((agent) => agent.id === id);
  // A legacy `default: true` marker counts unless the fleet declared explicit ownership.
  const explicit = record(root.agents, 'agents')?.ownership === 'explicit';
  const marked = explicit ? [] : agents.filter((agent) => agent.entry.default === true);
  if (marked.length === 1) return marked[0];
  if (agents.length === 1) return agents[0];
  if (agents.length === 0) return undefined;
  throw new ConfigProblem('several agents are configured and none is the default; name one instead');
}

/** One scope's allow/deny. An empty allow restricts nothing; alsoAllow alone means "*" plus those names. */
function scope(tools: Record<string, unknown>, at: string): Layer {
  const allow = names(tools.allow, `${at}.allow`) ?? [];
  const alsoAllow = names(tools.alsoAllow, `${at}.alsoAllow`) ?? [];
  if (allow.length > 0 && alsoAllow.length > 0) {
    throw new ConfigProblem(`${at} sets both allow and alsoAllow, which OpenClaw refuses`);
  }
  const listed = allow.length > 0 ? allow : alsoAllow.length > 0 ? ['*', ...alsoAllow] : undefined;
  return {
    ...(listed ? { allow: expand(listed), ownAllow: allow.length > 0 } : {}),
    deny: expand(names(tools.deny, `${at}.deny`) ?? []),
  };
}

function listsIn(layer: Layer, at: string): string[] {
  return [...(layer.ownAllow ? [`${at}.allow`] : []), ...(layer.deny.length > 0 ? [`${at}.deny`] : [])];
}

function permits(layer: Layer, candidate: Candidate): boolean {
  if (layer.deny.some((pattern) => covers(pattern, candidate))) return false;
  if (!layer.allow) return true;
  // Any plugin may put its tools in a profile (memory-core's `intent` is in coding and messaging); MCP
  // server tools join only through the profile's `bundle-mcp`.
  if (layer.pluginsJoin && (candidate.kind === 'plugins' || candidate.kind === 'named')) return true;
  // Allowing `write` also allows `apply_patch`; denying `write` does not deny it.
  return (
    layer.allow.some((pattern) => covers(pattern, candidate)) ||
    (candidate.name === 'apply_patch' && layer.allow.some((pattern) => glob(pattern, 'write')))
  );
}

/**
 * Whether a policy entry (already expanded) names the candidate. A bare `*` names everything; `group:plugins`
 * every plugin tool, MCP included; `bundle-mcp` every MCP tool (`server__tool`). A name no catalog knows
 * is matched as the literal text, so an entry that only might cover it is not credited.
 */
function covers(pattern: string, candidate: Candidate): boolean {
  if (/^\*+$/.test(pattern)) return true;
  if (candidate.kind !== 'core' && pattern === 'group:plugins') return true;
  if (candidate.kind === 'plugins') return false;
  if (candidate.kind === 'mcp') return pattern === 'bundle-mcp';
  if (candidate.kind === 'named' && pattern === 'bundle-mcp' && candidate.name.includes('__')) return true;
  return glob(pattern, candidate.name);
}

function glob(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  return new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`).test(name);
}

/** A name an allowlist gives that is neither a core tool nor one of the catalog-wide entries. */
function isOtherName(name: string): boolean {
  return (
    !CORE.has(name) &&
    !/^\*+$/.test(name) &&
    name !== 'group:plugins' &&
    name !== 'bundle-mcp' &&
    !META_TOOLS.has(name)
  );
}

/** Policy ids, as OpenClaw matches them: aliases and renames applied, core groups expanded. */
function expand(entries: string[]): string[] {
  const ids = entries.flatMap((entry) => {
    const id = policyId(entry);
    return id === 'canvas' ? ['canvas', 'show_widget'] : [id];
  });
  return [...new Set(ids.flatMap((id) => GROUPS.get(id) ?? [id]))];
}

function policyId(name: string): string {
  const lower = name.trim().toLowerCase();
  return ALIASES.get(lower) ?? lower;
}

/** OpenClaw's agent id form: lower case, other characters as `-`, "main" when nothing is left. */
export function normalizeAgentId(value: string): string {
  const id = value
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
  return id || 'main';
}

/** An object, or undefined when absent; `$include` is refused because this check does not follow it. */
function record(value: unknown, at: string): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new ConfigProblem(`${at} is not an object`);
  if (Object.hasOwn(value, '$include'))
    throw new ConfigProblem(`${at} uses $include, which this check does not follow`);
  return value as Record<string, unknown>;
}

function names(value: unknown, at: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((entry) => typeof entry === 'string')) {
    throw new ConfigProblem(`${at} is not a list of tool names`);
  }
  return value.map((entry) => entry.trim()).filter(Boolean);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
