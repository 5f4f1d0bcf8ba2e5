// Can the gateway agent that strangers reach touch the operator's machine? Read from OpenClaw's own config
// (GATEWAY.md "Who the caller becomes on the gateway": a bridged call is an owner turn, so the agent's tool
// policy is the only boundary). Mirrors OpenClaw 2026.9's layers: the profile (plus `alsoAllow`), then
// `tools.allow`/`deny`, then the agent's `allow`/`deny`. Each layer can only remove tools, a deny anywhere
// wins, and a non-empty allow blocks what it does not name. Provider, sender and sandbox layers are left
// out: they can only remove more, so leaving them out errs towards warning.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import JSON5 from 'json5';
import type { ToolExposureView } from '../protocol/console-api.js';

/**
 * Tools that reach the operator's machine: shell and processes, files, browser and desktop, paired devices,
 * and the gateway itself (schedules, updates and config, plugin installs, the setup agent).
 */
export const HOST_TOOLS: readonly string[] = [
  // shell and processes
  'exec',
  'process',
  'terminal',
  // files
  'read',
  'write',
  'edit',
  'apply_patch',
  'ls',
  // browser, desktop and paired devices
  'browser',
  'canvas',
  'computer',
  'nodes',
  'mobile_ui',
  'file_fetch',
  'file_write',
  'dir_list',
  'dir_fetch',
  // the gateway itself
  'cron',
  'gateway',
  'plugins',
  'openclaw',
];

// OpenClaw matches names case-insensitively after these aliases; `automations` is the scheduler's id.
const ALIASES = new Map([
  ['bash', 'exec'],
  ['apply-patch', 'apply_patch'],
  ['cron', 'automations'],
]);

// The host tools inside each group, or each plugin id used as a group (OpenClaw's tool catalog and bundled
// plugin manifests). Other groups stay as literal entries that match no host tool.
const GROUPS = new Map([
  ['group:fs', ['ls', 'read', 'write', 'edit', 'apply_patch']],
  ['group:runtime', ['exec', 'process']],
  ['group:ui', ['browser', 'terminal', 'canvas']],
  ['group:automation', ['automations', 'gateway', 'plugins', 'openclaw']],
  ['group:nodes', ['nodes', 'computer', 'mobile_ui']],
  [
    'group:openclaw',
    [
      'browser',
      'terminal',
      'automations',
      'gateway',
      'plugins',
      'openclaw',
      'nodes',
      'computer',
      'mobile_ui',
    ],
  ],
  ['group:plugins', ['browser', 'canvas', 'file_fetch', 'file_write', 'dir_list', 'dir_fetch']],
  ['file-transfer', ['file_fetch', 'file_write', 'dir_list', 'dir_fetch']],
]);

// The host tools each profile offers; `full` and no profile leave every tool in.
const PROFILES = new Map<string, string[] | 'all'>([
  ['minimal', ['gateway']],
  ['messaging', ['gateway']],
  [
    'coding',
    [
      'ls',
      'read',
      'write',
      'edit',
      'apply_patch',
      'exec',
      'process',
      'terminal',
      'automations',
      'gateway',
      'plugins',
    ],
  ],
  ['full', 'all'],
]);

/** A config the gateway would reject, or one this check cannot follow: the verdict is `unknown`. */
class ConfigProblem extends Error {}

/** One filtering layer; `allow` undefined means the layer names no allowlist. */
interface Layer {
  allow?: string[];
  deny: string[];
}

interface Agent {
  id: string;
  /** Where its settings live, for the operator: `agents.entries.<key>` or `agents.list[<i>]`. */
  path: string;
  entry: Record<string, unknown>;
}

/** The target agent's effective access to {@link HOST_TOOLS}, from a parsed `openclaw.json`. */
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
  const path = configPath.startsWith('~/') ? join(env.HOME || homedir(), configPath.slice(2)) : configPath;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const detail =
      code === 'ENOENT'
        ? `No OpenClaw config at ${path}, so the tools of agent "${agentId}" cannot be checked.`
        : `Cannot read the OpenClaw config at ${path} (${code ?? (error as Error).message}).`;
    return { verdict: 'unknown', detail };
  }
  let config: unknown;
  try {
    config = JSON5.parse<unknown>(text);
  } catch (error) {
    const reason = (error as Error).message;
    return { verdict: 'unknown', detail: `The OpenClaw config at ${path} is not valid JSON5 (${reason}).` };
  }
  return classifyToolPolicy(config, agentId);
}

/** The agent ids the config declares, as `GET /v1/models` would list them after `openclaw/`. */
export function configuredAgents(config: unknown): string[] {
  try {
    return [...new Set(roster(config).map((agent) => agent.id))];
  } catch {
    return [];
  }
}

/** A JSON5 block that adds a restricted agent, after OpenClaw's own "public agent" example. */
export function restrictedAgentSnippet(agentId: string): string {
  const id = normalizeId(agentId);
  const deny = chunks(HOST_TOOLS, 6).map((names) => `            ${names.map((n) => `"${n}"`).join(', ')},`);
  return [
    '// Merge into ~/.openclaw/openclaw.json. Listing agents replaces the implicit "main" agent, so keep an',
    '// entry for every agent you use. With two or more, OpenClaw adds agents.ownership: "explicit" unless one',
    '// is marked `default: true`, and model "openclaw" then no longer picks an agent.',
    '{',
    '  agents: {',
    '    entries: {',
    ...(id === 'main' ? [] : ['      main: {},']),
    `      ${/^[a-z_][a-z0-9_]*$/.test(id) ? id : `"${id}"`}: {`,
    `        workspace: "~/.openclaw/workspace-${id}",`,
    '        tools: {',
    '          profile: "minimal",',
    '          deny: [',
    ...deny,
    '          ],',
    '        },',
    '      },',
    '    },',
    '  },',
    '}',
  ].join('\n');
}

function classify(config: unknown, agentId: string): ToolExposureView {
  const root = record(config, 'the config') ?? {};
  const agents = roster(root);
  const agent = findAgent(root, agents, agentId);
  if (!agent) {
    const declared = agents.length > 0 ? agents.map((a) => `"${a.id}"`).join(', ') : 'no agents';
    return {
      verdict: 'unknown',
      detail: `Agent "${normalizeId(agentId)}" is not in the OpenClaw config (it declares ${declared}), so the gateway will refuse it.`,
    };
  }

  const global = record(root.tools, 'tools') ?? {};
  const own = record(agent.entry.tools, `${agent.path}.tools`) ?? {};
  // The agent's profile and alsoAllow replace the global ones; its allow/deny add a layer.
  const profileAt = own.profile != null ? `${agent.path}.tools.profile` : 'tools.profile';
  const profile = own.profile ?? global.profile;
  const inProfile = profile == null ? 'all' : PROFILES.get(String(profile));
  if (!inProfile) throw new ConfigProblem(`${profileAt} "${String(profile)}" is not a tool profile`);
  const alsoAt = own.alsoAllow != null ? `${agent.path}.tools.alsoAllow` : 'tools.alsoAllow';
  const alsoAllow = names(own.alsoAllow ?? global.alsoAllow, alsoAt) ?? [];

  // alsoAllow widens a limited profile only; with `full` or no profile nothing was taken away.
  const profileLayer: Layer = {
    deny: [],
    allow: inProfile === 'all' ? undefined : [...inProfile, ...alsoAllow],
  };
  const globalLayer = scope(global, 'tools');
  const agentLayer = scope(own, `${agent.path}.tools`);
  const layers = [profileLayer, globalLayer, agentLayer];
  const tools = HOST_TOOLS.filter((tool) => layers.every((layer) => permits(layer, policyId(tool)))).sort();

  // The settings that shaped the answer, so the operator knows what to change.
  const settings = [
    profile == null ? 'no tools.profile, so every core tool' : `${profileAt} "${String(profile)}"`,
    ...(inProfile !== 'all' && alsoAllow.length > 0 ? [alsoAt] : []),
    ...listsIn(globalLayer, 'tools'),
    ...listsIn(agentLayer, `${agent.path}.tools`),
  ].join(', ');
  const name = agent.id === normalizeId(agentId) ? `"${agent.id}"` : `"${agent.id}" (the default agent)`;
  if (tools.length === 0) {
    return {
      verdict: 'restricted',
      detail: `Agent ${name} is offered none of the host tools (${settings}).`,
    };
  }
  const listed =
    tools.length > 8 ? `${tools.slice(0, 8).join(', ')} and ${tools.length - 8} more` : tools.join(', ');
  return {
    verdict: 'exposes-host-tools',
    tools,
    detail: `Agent ${name} is offered ${listed} (${settings}); deny them in ${agent.path}.tools.deny or point the bridge at a restricted agent.`,
  };
}

/** The agents OpenClaw knows: keyed `agents.entries`, else the legacy `agents.list`, else an implicit "main". */
function roster(config: unknown): Agent[] {
  const agents = record(record(config, 'the config')?.agents, 'agents');
  if (agents?.entries !== undefined) {
    const entries = record(agents.entries, 'agents.entries') ?? {};
    return Object.entries(entries).flatMap(([key, entry]) => {
      const value = record(entry, `agents.entries.${key}`);
      return value ? [{ id: normalizeId(key), path: `agents.entries.${key}`, entry: value }] : [];
    });
  }
  if (agents?.list !== undefined) {
    if (!Array.isArray(agents.list)) throw new ConfigProblem('agents.list is not a list');
    return agents.list.flatMap((entry: unknown, i) => {
      const value = record(entry, `agents.list[${i}]`);
      return value
        ? [{ id: normalizeId(String(value.id ?? '')), path: `agents.list[${i}]`, entry: value }]
        : [];
    });
  }
  return [{ id: 'main', path: 'agents.entries.main', entry: {} }];
}

/** The first agent with this id; `default` (as in `openclaw/default`) is the marked or the sole agent. */
function findAgent(root: Record<string, unknown>, agents: Agent[], agentId: string): Agent | undefined {
  const id = normalizeId(agentId);
  if (id !== 'default') return agents.find((agent) => agent.id === id);
  // A legacy `default: true` marker counts unless the fleet declared explicit ownership.
  const explicit = record(root.agents, 'agents')?.ownership === 'explicit';
  const marked = explicit ? [] : agents.filter((agent) => agent.entry.default === true);
  if (marked.length === 1) return marked[0];
  if (agents.length === 1) return agents[0];
  if (agents.length === 0) return undefined;
  throw new ConfigProblem('several agents are configured and none is the default; name one instead');
}

/** One scope's allow/deny; an empty allow, or alsoAllow alone, restricts nothing (OpenClaw adds "*"). */
function scope(tools: Record<string, unknown>, at: string): Layer {
  const allow = names(tools.allow, `${at}.allow`);
  const alsoAllow = names(tools.alsoAllow, `${at}.alsoAllow`) ?? [];
  return {
    allow: allow && allow.length > 0 ? [...allow, ...alsoAllow] : undefined,
    deny: names(tools.deny, `${at}.deny`) ?? [],
  };
}

function listsIn(layer: Layer, at: string): string[] {
  return [...(layer.allow ? [`${at}.allow`] : []), ...(layer.deny.length > 0 ? [`${at}.deny`] : [])];
}

function permits(layer: Layer, tool: string): boolean {
  if (matches(tool, layer.deny)) return false;
  if (!layer.allow) return true;
  // Allowing `write` also allows `apply_patch`; denying `write` does not deny it.
  return matches(tool, layer.allow) || (tool === 'apply_patch' && matches('write', layer.allow));
}

/** Whether a tool id matches any entry: groups expanded, `*` as a wildcard. */
function matches(tool: string, entries: string[]): boolean {
  return entries
    .flatMap((entry) => GROUPS.get(policyId(entry)) ?? [policyId(entry)])
    .some((pattern) =>
      pattern.includes('*')
        ? new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`).test(tool)
        : pattern === tool,
    );
}

function policyId(name: string): string {
  const lower = name.trim().toLowerCase();
  return ALIASES.get(lower) ?? lower;
}

/** OpenClaw's agent id form: lower case, other characters as `-`, "main" when nothing is left. */
function normalizeId(value: string): string {
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

function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}
