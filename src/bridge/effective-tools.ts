// What one OpenClaw agent is offered, read from OpenClaw's own config (GATEWAY.md "Who the caller becomes on
// the gateway": a bridged call is an owner turn, so the agent's tool policy is the only boundary). Checked
// against OpenClaw 2026.9.6's compiled catalog and policy code (dist/tool-catalog-*.mjs, tool-policy-shared,
// tool-policy-match, agent-tools.policy, tool-surface-bridge, agents/sandbox/tool-policy).
//
// The answer errs towards more tools, never fewer: any plugin or MCP tool, unknown name or wildcard is
// listed. Policy layers mirror OpenClaw's: the profile (plus `alsoAllow`, plus any plugin tool whose
// manifest puts it in that profile), then `tools.allow`/`deny`, then the agent's `allow`/`deny`, then, for an
// agent whose every session is sandboxed, the sandbox tool policy; each layer can only remove tools, a deny
// anywhere wins, and a non-empty allow blocks what it does not name. Provider, group and sender layers are
// left out: they can only remove more, so leaving them out errs towards listing. Two surfaces are added
// after that policy and are read separately: Code Mode's `exec` and Tool Search's `tool_search_code`.
// The classifiers (tool-policy.ts, tool-class.ts) judge the answer.
import {
  ConfigProblem,
  expand,
  isOtherName,
  listsIn,
  names,
  normalizeAgentId,
  permits,
  record,
  scope,
  type Candidate,
  type Layer,
} from './policy-layers.js';
import { sandboxOf, type SandboxSettings } from './sandbox-settings.js';
import { CATALOG, CODE_MODE_EXEC, PROFILES, SAFE_TOOLS } from './tool-catalog.js';

export interface Agent {
  id: string;
  /** Where its settings live, for the operator: `agents.entries.<key>` or `agents.list[<i>]`. */
  path: string;
  entry: Record<string, unknown>;
}

export interface CodeMode {
  exposed: boolean;
  setting: string;
  source: string;
  byModel: boolean;
}

/** The agent's tools, and what the classifiers need to judge and explain them. */
export interface EffectiveTools {
  agent: Agent;
  /** The agent as the operator reads it: `"x"`, or `"x" (the default agent)` when asked for `default`. */
  name: string;
  /** Where its tool settings live: `<agent path>.tools`. */
  toolsAt: string;
  /** Everything it is offered beyond the safe set (SAFE_TOOLS), sorted, with Code Mode's exec and tool_search_code. */
  tools: string[];
  /** The part of `tools` the tool policy gives (no Code Mode, no tool_search_code). */
  offered: string[];
  code: CodeMode;
  searchCode: boolean;
  /** The settings that shaped the answer, in the operator's words. */
  settings: string[];
  sandbox: SandboxSettings;
  /** Whether every session of the agent runs sandboxed (mode "all"), so the sandbox tool policy applies. */
  sandboxed: boolean;
  /** A multi-agent roster with no owner, which OpenClaw refuses to load. */
  ownerless: boolean;
  /** The parsed config, the global `tools` and the agent's own `tools`, for further settings. */
  root: Record<string, unknown>;
  global: Record<string, unknown>;
  own: Record<string, unknown>;
}

export type AgentTools = ({ found: true } & EffectiveTools) | { found: false; detail: string };

interface CodeModeSetting {
  enabled?: boolean | 'auto';
  executor?: 'node' | 'quickjs';
}

/** The agent's effective tools; throws ConfigProblem for a config OpenClaw refuses or this cannot follow. */
export function effectiveTools(config: unknown, agentId: string): AgentTools {
  const root = record(config, 'the config') ?? {};
  const agents = roster(root);
  const agent = findAgent(root, agents, agentId);
  if (!agent) {
    const declared = agents.length > 0 ? agents.map((a) => `"${a.id}"`).join(', ') : 'no agents';
    return {
      found: false,
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
  const sandbox = sandboxOf(root, agent.path, agent.entry, { global, own });
  // A session is sandboxed by mode "all" always; under "non-main" the bridge's sessions are too, but
  // which key the gateway gives a session is not the config's to say, so that layer is not counted.
  const sandboxed = sandbox.mode.value === 'all';
  const layers: Layer[] = [
    ...(inProfile ? [{ allow: expand([...inProfile, ...alsoAllow]), deny: [], pluginsJoin: true }] : []),
    globalLayer,
    agentLayer,
    ...(sandboxed ? [sandbox.tools] : []),
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
  // `tools.web.search.enabled` / `tools.web.fetch.enabled` false take the tool away (default on).
  const web = record(global.web, 'tools.web') ?? {};
  const off = (['search', 'fetch'] as const).filter(
    (kind) => record(web[kind], `tools.web.${kind}`)?.enabled === false,
  );
  const offered = candidates
    .filter((candidate) => layers.every((layer) => permits(layer, candidate)))
    .map((candidate) => candidate.name)
    .filter((name) => !safe.has(name) && !off.some((kind) => name === `web_${kind}`));

  const code = codeMode(root, global, own, agent);
  const searchCode = toolSearchCode(global.toolSearch);
  const tools = [
    ...offered,
    ...(code.exposed ? [CODE_MODE_EXEC] : []),
    ...(searchCode ? ['tool_search_code'] : []),
  ].sort();

  const settings = [
    profile == null ? 'no tools.profile, so every core and plugin tool' : `${profileAt} "${String(profile)}"`,
    ...(inProfile && alsoAllow.length > 0 ? [alsoAt] : []),
    ...listsIn(globalLayer, 'tools'),
    ...listsIn(agentLayer, toolsAt),
    ...(sandboxed
      ? [`the sandbox tool policy${sandbox.toolsAt === 'default' ? "'s defaults" : ` in ${sandbox.toolsAt}`}`]
      : []),
    ...off.map((kind) => `tools.web.${kind}.enabled false`),
    code.setting,
    ...(searchCode ? ['tools.toolSearch in "code" mode'] : []),
  ];
  const name = agent.id === normalizeAgentId(agentId) ? `"${agent.id}"` : `"${agent.id}" (the default agent)`;
  return {
    found: true,
    agent,
    name,
    toolsAt,
    tools,
    offered,
    code,
    searchCode,
    settings,
    sandbox,
    sandboxed,
    ownerless: ownerless(root, agents),
    root,
    global,
    own,
  };
}

/** The agent ids the config declares, or undefined when this cannot follow the roster ($include, a bad list). */
export function declaredAgents(config: unknown): string[] | undefined {
  try {
    return [...new Set(roster(record(config, 'the config') ?? {}).map((agent) => agent.id))];
  } catch (error) {
    if (error instanceof ConfigProblem) return undefined;
    throw error;
  }
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
): CodeMode {
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
function roster(root: Record<string, unknown>): Agent[] {
  const agents = record(root.agents, 'agents');
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
function ownerless(root: Record<string, unknown>, agents: Agent[]): boolean {
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
