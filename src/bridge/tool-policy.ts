// Can the gateway agent that strangers reach touch the operator's machine, or act for the operator? The
// verdict on what the agent is offered (effective-tools.ts). The logic is inverted on purpose: an agent is
// `restricted` only when everything it can be offered lies in a small known-safe set; any other tool,
// plugin or MCP tool, unknown name or wildcard counts against it.
import type { ToolExposureView } from '../protocol/console-api.js';
import { declaredAgents, effectiveTools } from './effective-tools.js';
import { readOpenClawFile, type OpenClawFile } from './openclaw-file.js';
import { ConfigProblem } from './policy-layers.js';
import { REASONS, UNKNOWN_REASON } from './tool-catalog.js';

export { declaredAgents } from './effective-tools.js';
export { normalizeAgentId } from './policy-layers.js';
export { CODE_MODE_EXEC, CORE_TOOLS, SAFE_TOOLS } from './tool-catalog.js';

/** The target agent's effective tool exposure, from a parsed `openclaw.json`. */
export function classifyToolPolicy(config: unknown, agentId: string): ToolExposureView {
  try {
    return classify(config, agentId);
  } catch (error) {
    if (!(error instanceof ConfigProblem)) throw error;
    return { verdict: 'unknown', detail: `Cannot tell what agent "${agentId}" may use: ${error.message}.` };
  }
}

function classify(config: unknown, agentId: string): ToolExposureView {
  const facts = effectiveTools(config, agentId);
  if (!facts.found) return { verdict: 'unknown', detail: facts.detail };
  const { name, toolsAt, tools, code } = facts;
  const settings = facts.settings.join(', ');
  if (tools.length === 0 && facts.ownerless) {
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
    ...(facts.offered.length > 0 ? [`deny them in ${toolsAt}.deny`] : []),
    ...(code.exposed
      ? [`set ${toolsAt}.codeMode to false${code.byModel ? ` and drop ${code.source}` : ''}`]
      : []),
    ...(facts.searchCode ? ['set tools.toolSearch to false or { mode: "tools" }'] : []),
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
