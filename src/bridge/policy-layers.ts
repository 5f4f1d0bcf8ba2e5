// How OpenClaw 2026.9.6 matches one tool-policy layer (an allow and a deny list) against a tool, as the
// bridge mirrors it: names normalized and aliased, core groups expanded, globs, `group:plugins` and
// `bundle-mcp` (dist/tool-policy-shared, tool-policy-match). Shared by the agent's own policy
// (effective-tools.ts) and the sandbox tool policy (sandbox-settings.ts); also the config readers they use.
import { ALIASES, CORE, GROUPS, META_TOOLS } from './tool-catalog.js';

/** A config the gateway would reject, or one these checks cannot follow: the answer is "cannot tell". */
export class ConfigProblem extends Error {}

/** One filtering layer, entries normalized and expanded; `allow` undefined means no allowlist. */
export interface Layer {
  allow?: string[];
  deny: string[];
  /** Whether `allow` is the scope's own `allow` (not `*` plus its `alsoAllow`), for the operator. */
  ownAllow?: boolean;
  /** A profile: plugins add their own tools to it (manifest `toolMetadata.<tool>.profiles`). */
  pluginsJoin?: boolean;
}

/** A core catalog tool, any plugin tool, any MCP server tool, or a name an allowlist gives. */
export interface Candidate {
  kind: 'core' | 'plugins' | 'mcp' | 'named';
  name: string;
}

/** One scope's allow/deny. An empty allow restricts nothing; alsoAllow alone means "*" plus those names. */
export function scope(tools: Record<string, unknown>, at: string): Layer {
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

export function listsIn(layer: Layer, at: string): string[] {
  return [...(layer.ownAllow ? [`${at}.allow`] : []), ...(layer.deny.length > 0 ? [`${at}.deny`] : [])];
}

export function permits(layer: Layer, candidate: Candidate): boolean {
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
export function covers(pattern: string, candidate: Candidate): boolean {
  if (/^\*+$/.test(pattern)) return true;
  if (candidate.kind !== 'core' && pattern === 'group:plugins') return true;
  if (candidate.kind === 'plugins') return false;
  if (candidate.kind === 'mcp') return pattern === 'bundle-mcp';
  if (candidate.kind === 'named' && pattern === 'bundle-mcp' && candidate.name.includes('__')) return true;
  return glob(pattern, candidate.name);
}

export function glob(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  return new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`).test(name);
}

/** A name an allowlist gives that is neither a core tool nor one of the catalog-wide entries. */
export function isOtherName(name: string): boolean {
  return (
    !CORE.has(name) &&
    !/^\*+$/.test(name) &&
    name !== 'group:plugins' &&
    name !== 'bundle-mcp' &&
    !META_TOOLS.has(name)
  );
}

/** Policy ids, as OpenClaw matches them: aliases and renames applied, core groups expanded. */
export function expand(entries: readonly string[]): string[] {
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
export function record(value: unknown, at: string): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new ConfigProblem(`${at} is not an object`);
  if (Object.hasOwn(value, '$include'))
    throw new ConfigProblem(`${at} uses $include, which this check does not follow`);
  return value as Record<string, unknown>;
}

/**
 * Refuses a key OpenClaw's strict schema for that section does not have: the gateway refuses such a file
 * (and keeps running the last one it accepted), so nothing read from it says what runs.
 */
export function knownKeys(value: Record<string, unknown>, keys: readonly string[], at: string): void {
  const unknown = Object.keys(value).find((key) => !keys.includes(key));
  if (unknown !== undefined) {
    throw new ConfigProblem(`${at}.${unknown} is not an OpenClaw 2026.9 setting, so the gateway refuses it`);
  }
}

export function names(value: unknown, at: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((entry) => typeof entry === 'string')) {
    throw new ConfigProblem(`${at} is not a list of tool names`);
  }
  return value.map((entry) => entry.trim()).filter(Boolean);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
