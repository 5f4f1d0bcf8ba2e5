// The sandbox an OpenClaw agent's tools run in, as OpenClaw 2026.9.6 resolves it from the config
// (dist/config-*.mjs resolveSandboxConfigForAgent, agents/sandbox/tool-policy resolveSandboxToolPolicyForAgent;
// docs/tools/multi-agent-sandbox-tools.md "Configuration precedence"): each setting from the agent's
// `sandbox`, else `agents.defaults.sandbox`, else OpenClaw's default. Under scope "shared" the agent's
// own `docker` block is ignored. Each value keeps the key that set it, so the operator knows what to change.
import { ConfigProblem, expand, glob, knownKeys, names, record, type Layer } from './policy-layers.js';
import { SANDBOX_DEFAULT_ALLOW, SANDBOX_DEFAULT_DENY } from './tool-catalog.js';

/** A resolved value and the config key it came from (`default` when OpenClaw's own default). */
export interface Setting {
  value: string;
  at: string;
}

export interface SandboxSettings {
  /** `off` | `non-main` | `all` (default `off`). */
  mode: Setting;
  /** `docker` | `podman` | `ssh` | `openshell` | a plugin's (default `docker`). */
  backend: Setting;
  /** `agent` | `session` | `shared` (default `agent`). */
  scope: Setting;
  /** `none` | `ro` | `rw` (default `none`). */
  workspaceAccess: Setting;
  /** The container network of the Docker and Podman backends (default `none`). */
  network: Setting;
  /** Host folders mounted into the container (`docker.binds`, the fleet's and the agent's), and where. */
  binds: { value: string[]; at: string[] };
  /** The `dangerouslyAllow*` docker flags that are on, by key. */
  dangerous: string[];
  /** The sandbox tool policy, a further filter on a sandboxed session's tools, and where it comes from (`default`). */
  tools: Layer;
  toolsAt: string;
}

const SANDBOX_KEYS = [
  'mode',
  'backend',
  'workspaceAccess',
  'sessionToolsVisibility',
  'scope',
  'workspaceRoot',
  'docker',
  'ssh',
  'browser',
  'prune',
];
const DOCKER_KEYS = [
  'image',
  'containerPrefix',
  'workdir',
  'readOnlyRoot',
  'tmpfs',
  'network',
  'user',
  'capDrop',
  'env',
  'setupCommand',
  'pidsLimit',
  'memory',
  'memorySwap',
  'cpus',
  'gpus',
  'ulimits',
  'seccompProfile',
  'apparmorProfile',
  'dns',
  'extraHosts',
  'binds',
  'dangerouslyAllowReservedContainerTargets',
  'dangerouslyAllowExternalBindSources',
  'dangerouslyAllowContainerNamespaceJoin',
];
const DANGEROUS_DOCKER_FLAGS = [
  'dangerouslyAllowReservedContainerTargets',
  'dangerouslyAllowExternalBindSources',
  'dangerouslyAllowContainerNamespaceJoin',
] as const;

/** The agent's sandbox; `path` is where its entry lives (`agents.entries.<key>`). */
export function sandboxOf(
  root: Record<string, unknown>,
  path: string,
  entry: Record<string, unknown>,
  tools: { global: Record<string, unknown>; own: Record<string, unknown> },
): SandboxSettings {
  const agents = record(root.agents, 'agents') ?? {};
  const defaults =
    record(record(agents.defaults, 'agents.defaults')?.sandbox, 'agents.defaults.sandbox') ?? {};
  const own = record(entry.sandbox, `${path}.sandbox`) ?? {};
  const at = { own: `${path}.sandbox`, defaults: 'agents.defaults.sandbox' };
  const pick = (key: string, fallback: string): Setting => {
    const mine = text(own[key], `${at.own}.${key}`);
    if (mine !== undefined) return { value: mine, at: `${at.own}.${key}` };
    const fleet = text(defaults[key], `${at.defaults}.${key}`);
    if (fleet !== undefined) return { value: fleet, at: `${at.defaults}.${key}` };
    return { value: fallback, at: 'default' };
  };

  // Both blocks are strict in OpenClaw's schema (AgentSandboxSchema, SandboxDockerSchema); the retired
  // `perSession` among the refused keys (`openclaw doctor` migrates it to `scope`).
  knownKeys(defaults, SANDBOX_KEYS, at.defaults);
  knownKeys(own, SANDBOX_KEYS, at.own);
  const scope = pick('scope', 'agent');
  const shared = scope.value === 'shared';
  const fleetDocker = record(defaults.docker, `${at.defaults}.docker`) ?? {};
  knownKeys(fleetDocker, DOCKER_KEYS, `${at.defaults}.docker`);
  const ownDockerBlock = record(own.docker, `${at.own}.docker`) ?? {};
  knownKeys(ownDockerBlock, DOCKER_KEYS, `${at.own}.docker`);
  const ownDocker = shared ? {} : ownDockerBlock;
  const docker = (key: string): { value: unknown; at: string } | undefined =>
    ownDocker[key] !== undefined
      ? { value: ownDocker[key], at: `${at.own}.docker.${key}` }
      : fleetDocker[key] !== undefined
        ? { value: fleetDocker[key], at: `${at.defaults}.docker.${key}` }
        : undefined;

  const network = docker('network');
  const fleetBinds = names(fleetDocker.binds, `${at.defaults}.docker.binds`) ?? [];
  const ownBinds = names(ownDocker.binds, `${at.own}.docker.binds`) ?? [];
  const { layer, at: toolsAt } = sandboxToolPolicy(tools.global, tools.own, path);
  return {
    mode: pick('mode', 'off'),
    backend: pick('backend', 'docker'),
    scope,
    workspaceAccess: pick('workspaceAccess', 'none'),
    network: network
      ? { value: text(network.value, network.at) ?? 'none', at: network.at }
      : { value: 'none', at: 'default' },
    binds: {
      value: [...fleetBinds, ...ownBinds],
      at: [
        ...(fleetBinds.length > 0 ? [`${at.defaults}.docker.binds`] : []),
        ...(ownBinds.length > 0 ? [`${at.own}.docker.binds`] : []),
      ],
    },
    dangerous: DANGEROUS_DOCKER_FLAGS.flatMap((flag) => {
      const set = docker(flag);
      return set?.value === true ? [set.at] : [];
    }),
    tools: layer,
    toolsAt,
  };
}

/**
 * The sandbox tool policy: each of allow, alsoAllow and deny from the agent's `tools.sandbox.tools`, else
 * `tools.sandbox.tools`, else the default. An explicit allow replaces the default one (alsoAllow adds to
 * either); without an explicit deny, the default deny minus whatever the explicit allows name. `view_image`
 * joins any allowlist it is not denied from, and denying the old `image` denies it.
 */
function sandboxToolPolicy(
  global: Record<string, unknown>,
  own: Record<string, unknown>,
  path: string,
): { layer: Layer; at: string } {
  const ownAt = `${path}.tools.sandbox.tools`;
  const mine = record(record(own.sandbox, `${path}.tools.sandbox`)?.tools, ownAt) ?? {};
  const fleet = record(record(global.sandbox, 'tools.sandbox')?.tools, 'tools.sandbox.tools') ?? {};
  const list = (key: string) => {
    const value = names(mine[key], `${ownAt}.${key}`);
    if (value) return { value, at: ownAt };
    const fallback = names(fleet[key], `tools.sandbox.tools.${key}`);
    return fallback ? { value: fallback, at: 'tools.sandbox.tools' } : undefined;
  };
  const allow = list('allow');
  const alsoAllow = list('alsoAllow');
  const deny = list('deny');
  const explicit = [...(allow?.value ?? []), ...(alsoAllow?.value ?? [])];

  let allowed: string[];
  if (allow) allowed = allow.value.length === 0 ? [] : [...allow.value, ...(alsoAllow?.value ?? [])];
  else allowed = [...SANDBOX_DEFAULT_ALLOW, ...(alsoAllow?.value ?? [])];
  const reAllowed = expand(explicit);
  const denied = deny
    ? deny.value
    : SANDBOX_DEFAULT_DENY.filter((tool) => !reAllowed.some((pattern) => glob(pattern, tool)));

  let denyList = expand(denied);
  let allowList = expand(allowed);
  if (denyList.some((p) => glob(p, 'image')) && !denyList.some((p) => glob(p, 'view_image'))) {
    denyList = [...denyList, 'view_image'];
  }
  if (allowList.length > 0 && !denyList.includes('view_image') && !allowList.includes('view_image')) {
    allowList = [...allowList, 'view_image'];
  }
  const sources = [...new Set([allow?.at, alsoAllow?.at, deny?.at].filter((x) => x !== undefined))];
  return {
    layer: { ...(allowList.length > 0 ? { allow: allowList } : {}), deny: denyList },
    at: sources.length > 0 ? sources.join(' and ') : 'default',
  };
}

function text(value: unknown, at: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ConfigProblem(`${at} is not a string`);
  return value.trim() || undefined;
}
