// The tool class of an OpenClaw agent (issue 27): how far a caller who reaches it can reach, decided from the
// gateway's own config (effective-tools.ts) and OpenClaw 2026.9.6's documented and compiled behaviour:
// - `none`: nothing beyond the safe set (Tool Search's controls, sessions_yield);
// - `web`: only web_search, web_fetch, x_search, with web_fetch's private-network guard as shipped
//   (docs/tools/web-fetch.md; dist openclaw-tools createWebFetchTool reads tools.web.fetch.*);
// - `sandboxed`: besides those, only the tools that run in the sandbox (exec, process, ls, read, write, edit,
//   apply_patch, view_image), in a local container sandbox every session of the agent uses, that sees at
//   most a read-only workspace, has no network unless the skill allows it, and has no way out: no elevated
//   exec, no exec host outside the sandbox, no host folders mounted, no dangerous docker flags
//   (docs/gateway/config-agents/sandbox.md, docs/tools/elevated.md, docs/tools/exec.md;
//   dist config-*.mjs resolveSandboxConfigForAgent, get-reply resolveElevatedPermissions, exec-defaults);
// - `host`: anything else, and anything this cannot classify.
// The checks are inverted on purpose: a class is granted only when every condition is known to hold.
import type { ToolClass, ToolClassView } from '../protocol/skills.js';
import { effectiveTools, type EffectiveTools } from './effective-tools.js';
import { readOpenClawFile } from './openclaw-file.js';
import { ConfigProblem, knownKeys, names, normalizeAgentId, record } from './policy-layers.js';
import { REASONS, SANDBOXED_TOOLS, UNKNOWN_REASON, WEB_TOOLS } from './tool-catalog.js';

export interface ToolClassOptions {
  /** The skill lets its sandbox reach the network (`SkillSetting.sandboxNetwork`): any network but a host's. */
  sandboxNetwork?: boolean;
}

/** What the classification found: the view, and the facts it rests on (for tool-policy.ts). */
export type ToolAssessment =
  { known: true; view: ToolClassView; facts: EffectiveTools } | { known: false; detail: string };

/** `tools.web.fetch` and its `ssrfPolicy` in OpenClaw's strict schema (ToolsWebFetchSchema, SsrFPolicyConfigSchema). */
const FETCH_KEYS = [
  'enabled',
  'provider',
  'maxChars',
  'maxCharsCap',
  'maxResponseBytes',
  'timeoutSeconds',
  'cacheTtlMinutes',
  'maxRedirects',
  'userAgent',
  'headers',
  'readability',
  'useTrustedEnvProxy',
  'ssrfPolicy',
];
const SSRF_KEYS = [
  'dangerouslyAllowPrivateNetwork',
  'allowRfc2544BenchmarkRange',
  'allowIpv6UniqueLocalRange',
  'allowedHostnames',
  'blockedHostnames',
];
/** Backends that run the sandbox as a container on this machine (`docker.network` applies to both). */
const LOCAL_BACKENDS = ['docker', 'podman'];
/** Exec hosts that keep `exec` in the sandbox when one is active (`auto` resolves to `sandbox` then). */
const SANDBOX_EXEC_HOSTS = ['auto', 'sandbox'];

/** The tool class of agent `agentId` in a parsed `openclaw.json`; `host` when it cannot be told. */
export function classifyAgentTools(
  config: unknown,
  agentId: string,
  options: ToolClassOptions = {},
): ToolClassView {
  const assessed = assessAgentTools(config, agentId, options);
  if (!assessed.known) return { class: 'host', tools: [], detail: assessed.detail };
  if (!assessed.facts.ownerless) return assessed.view;
  // The gateway keeps the last config it accepted: a class read from one it refuses is not what runs.
  return {
    ...assessed.view,
    class: 'host',
    detail: `The OpenClaw config lists several agents without agents.ownership: "explicit" (or one of them marked default: true), which OpenClaw refuses, so it is not what the gateway runs and the tools of agent ${assessed.facts.name} in it may not be either. Run openclaw config validate where the gateway runs and fix what it reports.`,
  };
}

/**
 * Reads the OpenClaw config file and classifies agent `agentId` in it; a file that is missing or cannot be
 * read or parsed is `host`, saying why. Cheap enough per status poll, but cache it.
 */
export function readToolClass(
  configPath: string,
  agentId: string,
  options: ToolClassOptions = {},
  env: NodeJS.ProcessEnv = process.env,
): ToolClassView {
  const file = readOpenClawFile(configPath, env);
  if (file.ok) return classifyAgentTools(file.config, agentId, options);
  const detail = `${file.detail}, so the tools of agent "${agentId}" cannot be checked.`;
  return { class: 'host', tools: [], detail };
}

/** The classification and its facts, or why there is none (a config OpenClaw refuses, a missing agent). */
export function assessAgentTools(
  config: unknown,
  agentId: string,
  options: ToolClassOptions = {},
): ToolAssessment {
  try {
    const facts = effectiveTools(config, agentId);
    if (!facts.found) return { known: false, detail: facts.detail };
    return { known: true, view: judge(facts, options), facts };
  } catch (error) {
    if (!(error instanceof ConfigProblem)) throw error;
    const detail = `Cannot tell what agent "${normalizeAgentId(agentId)}" may use: ${error.message}.`;
    return { known: false, detail };
  }
}

function judge(facts: EffectiveTools, options: ToolClassOptions): ToolClassView {
  const { tools, name, toolsAt } = facts;
  const settings = `Settings: ${facts.settings.join(', ')}.`;
  const sandbox = facts.sandbox.mode.value === 'off' ? undefined : sandboxView(facts);
  const view = (toolClass: ToolClass, detail: string): ToolClassView => ({
    class: toolClass,
    tools,
    detail,
    ...(sandbox ? { sandbox } : {}),
  });
  if (tools.length === 0) return view('none', `Agent ${name} is offered no tools. ${settings}`);

  const fetchOpen = tools.includes('web_fetch') ? webFetchOpenings(facts) : [];
  const web = WEB_TOOLS.filter((tool) => tool !== 'web_fetch' || fetchOpen.length === 0);
  const inSandbox = tools.filter((tool) => SANDBOXED_TOOLS.includes(tool));
  const outside = tools.filter((tool) => !web.includes(tool) && !SANDBOXED_TOOLS.includes(tool));
  const guard = tools.includes('web_fetch')
    ? " web_fetch keeps OpenClaw's private-network guard: tools.web.fetch opens it to no private address."
    : '';
  const denyAll = `deny ${tools.join(', ')} in ${toolsAt}.deny`;

  if (inSandbox.length === 0 && outside.length === 0) {
    return view(
      'web',
      `Agent ${name} is offered web search and fetch only (${tools.join(', ')}).${guard} ${settings} For no tools, ${denyAll}.`,
    );
  }
  const escapes = inSandbox.length > 0 ? sandboxEscapes(facts, inSandbox, options) : [];
  if (outside.length === 0 && escapes.length === 0) {
    const s = facts.sandbox;
    const network =
      s.network.value === 'none'
        ? 'no network'
        : `network "${s.network.value}", which this skill allows (${s.network.at})`;
    const fewer = `deny ${inSandbox.join(', ')} in ${toolsAt}.deny`;
    return view(
      'sandboxed',
      `Agent ${name} runs ${inSandbox.join(', ')} only in OpenClaw's sandbox: mode "all" (${s.mode.at}), a ${s.backend.value} container per ${s.scope.value}, workspace access "${s.workspaceAccess.value}", ${network}${inSandbox.includes('exec') ? ', no elevated exec and exec kept in the sandbox' : ''}.${guard} ${settings} For a narrower class, ${fewer}.`,
    );
  }

  // Host: say what reaches the machine, and what would make the agent narrower.
  const reaching = [...outside, ...(escapes.length > 0 ? inSandbox : [])].sort();
  const denied = outside.filter((tool) => facts.offered.includes(tool));
  const why = [
    ...(fetchOpen.length > 0 ? [`web_fetch may reach your own network (${fetchOpen.join(', ')})`] : []),
    ...(escapes.length > 0
      ? [`${inSandbox.join(', ')} are not kept in a sandbox (${escapes.map((e) => e.problem).join('; ')})`]
      : []),
  ];
  const fixes = [
    ...(denied.length > 0 ? [`deny ${few(denied)} in ${toolsAt}.deny`] : []),
    ...(facts.code.exposed
      ? [`set ${toolsAt}.codeMode to false${facts.code.byModel ? ` and drop ${facts.code.source}` : ''}`]
      : []),
    ...(facts.searchCode ? ['set tools.toolSearch to false or { mode: "tools" }'] : []),
    ...(fetchOpen.length > 0 ? [`for web_fetch, remove ${fetchOpen.join(', ')}`] : []),
    ...(escapes.length > 0 ? [`to keep ${inSandbox.join(', ')} in a sandbox, ${fixList(escapes)}`] : []),
  ];
  return view(
    'host',
    `Agent ${name} reaches this machine: ${reasons(reaching)}.${why.length > 0 ? ` Not narrower because ${why.join('; ')}.` : ''} ${settings} For a narrower class, ${fixes.join('; ')}.`,
  );
}

/** The settings that let web_fetch reach private addresses, by key (the guard is on unless one is set). */
function webFetchOpenings(facts: EffectiveTools): string[] {
  const web = record(facts.global.web, 'tools.web') ?? {};
  const fetch = record(web.fetch, 'tools.web.fetch') ?? {};
  knownKeys(fetch, FETCH_KEYS, 'tools.web.fetch');
  const at = 'tools.web.fetch.ssrfPolicy';
  const ssrf = record(fetch.ssrfPolicy, at) ?? {};
  knownKeys(ssrf, SSRF_KEYS, at);
  const headers = record(fetch.headers, 'tools.web.fetch.headers') ?? {};
  return [
    ...(ssrf.dangerouslyAllowPrivateNetwork === true ? [`${at}.dangerouslyAllowPrivateNetwork`] : []),
    ...((names(ssrf.allowedHostnames, `${at}.allowedHostnames`) ?? []).length > 0
      ? [`${at}.allowedHostnames`]
      : []),
    ...(ssrf.allowRfc2544BenchmarkRange === true ? [`${at}.allowRfc2544BenchmarkRange`] : []),
    ...(ssrf.allowIpv6UniqueLocalRange === true ? [`${at}.allowIpv6UniqueLocalRange`] : []),
    // A proxy that resolves names itself decides what "private" is (the docs: only one you control).
    ...(fetch.useTrustedEnvProxy === true ? ['tools.web.fetch.useTrustedEnvProxy'] : []),
    // Sent to every URL the model picks: the operator's credentials would go to a caller's server.
    ...(Object.keys(headers).length > 0 ? ['tools.web.fetch.headers'] : []),
  ];
}

interface Escape {
  problem: string;
  fix: string;
}

/** Why the sandbox tools the agent has are not contained, each with the change that would contain them. */
function sandboxEscapes(facts: EffectiveTools, inSandbox: string[], options: ToolClassOptions): Escape[] {
  const { sandbox: s, agent, toolsAt } = facts;
  const own = `${agent.path}.sandbox`;
  const found: Escape[] = [];
  const add = (problem: string, fix: string) => found.push({ problem, fix });
  const where = (setting: { at: string }) => (setting.at === 'default' ? 'by default' : `in ${setting.at}`);

  if (s.mode.value !== 'all') {
    add(`sandbox mode is "${s.mode.value}" ${where(s.mode)}`, `set ${own}.mode to "all"`);
  }
  if (!LOCAL_BACKENDS.includes(s.backend.value)) {
    add(
      `the sandbox backend "${s.backend.value}" (${s.backend.at}) runs elsewhere, under that host's rules`,
      `set ${own}.backend to "docker" or "podman"`,
    );
  }
  if (s.scope.value === 'shared') {
    add(
      `scope "shared" ${where(s.scope)} shares one container with every other sandboxed agent and ignores this agent's docker settings`,
      `set ${own}.scope to "agent" or "session"`,
    );
  }
  if (!['none', 'ro'].includes(s.workspaceAccess.value)) {
    add(
      `workspace access "${s.workspaceAccess.value}" ${where(s.workspaceAccess)} lets it change the agent's folder on this machine`,
      `set ${own}.workspaceAccess to "none" or "ro"`,
    );
  }
  const network = s.network.value;
  if (network.startsWith('container:') || network === 'host') {
    add(
      `network "${network}" (${s.network.at}) joins another network namespace`,
      `set ${own}.docker.network to "none"`,
    );
  } else if (network !== 'none' && !options.sandboxNetwork) {
    add(
      `network "${network}" (${s.network.at}) reaches the network, which this skill does not allow`,
      `set ${own}.docker.network to "none", or allow the network for this skill`,
    );
  }
  if (s.binds.value.length > 0) {
    add(
      `folders of this machine are mounted in (${s.binds.at.join(', ')})`,
      `remove ${s.binds.at.join(' and ')}`,
    );
  }
  for (const flag of s.dangerous) add(`${flag} is on`, `remove ${flag}`);

  if (inSandbox.includes('exec')) {
    const global = record(facts.global.elevated, 'tools.elevated') ?? {};
    const mine = record(facts.own.elevated, `${toolsAt}.elevated`) ?? {};
    // Elevated mode is on unless either gate says false; who may use it is a sender allowlist this bridge
    // cannot judge for its callers, so only off counts.
    if (global.enabled !== false && mine.enabled !== false) {
      add(
        'elevated exec can run commands outside the sandbox (tools.elevated.enabled is not false)',
        `set ${toolsAt}.elevated.enabled to false`,
      );
    }
    const globalExec = record(facts.global.exec, 'tools.exec') ?? {};
    const ownExec = record(facts.own.exec, `${toolsAt}.exec`) ?? {};
    const host = ownExec.host ?? globalExec.host ?? 'auto';
    if (typeof host !== 'string' || !SANDBOX_EXEC_HOSTS.includes(host)) {
      const at = ownExec.host !== undefined ? `${toolsAt}.exec.host` : 'tools.exec.host';
      add(`exec runs on "${String(host)}" (${at}), outside the sandbox`, `set ${at} to "sandbox"`);
    }
  }
  // OpenClaw lists these among its dangerous flags: file tools allowed outside their workspace.
  const fs = ['ls', 'read', 'write', 'edit', 'apply_patch'].some((tool) => inSandbox.includes(tool));
  if (fs) {
    const ownFs = record(facts.own.fs, `${toolsAt}.fs`) ?? {};
    const globalFs = record(facts.global.fs, 'tools.fs') ?? {};
    if ((ownFs.workspaceOnly ?? globalFs.workspaceOnly) === false) {
      const at = ownFs.workspaceOnly !== undefined ? `${toolsAt}.fs.workspaceOnly` : 'tools.fs.workspaceOnly';
      add(`${at} is false`, `remove ${at}`);
    }
  }
  if (inSandbox.includes('apply_patch')) {
    const patch = (exec: unknown, at: string) =>
      record(record(exec, at)?.applyPatch, `${at}.applyPatch`)?.workspaceOnly;
    const ownPatch = patch(facts.own.exec, `${toolsAt}.exec`);
    if ((ownPatch ?? patch(facts.global.exec, 'tools.exec')) === false) {
      const at = ownPatch !== undefined ? `${toolsAt}.exec.applyPatch` : 'tools.exec.applyPatch';
      add(`${at}.workspaceOnly is false`, `remove ${at}.workspaceOnly`);
    }
  }
  return found;
}

function sandboxView(facts: EffectiveTools): ToolClassView['sandbox'] {
  const s = facts.sandbox;
  return { mode: s.mode.value, workspaceAccess: s.workspaceAccess.value, network: s.network.value };
}

function fixList(escapes: Escape[]): string {
  return [...new Set(escapes.map((escape) => escape.fix))].join(', ');
}

/** The tools grouped by why they matter: `a, b (why); c (why)`, a few names per group. */
export function reasons(tools: string[]): string {
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

/** A list for a sentence: all of it when short, else the first few and how many more (all are in `tools`). */
function few(tools: string[]): string {
  return tools.length > 8
    ? `${tools.slice(0, 6).join(', ')} and ${tools.length - 6} more of its tools`
    : tools.join(', ');
}
