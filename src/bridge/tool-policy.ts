// Can the gateway agent that strangers reach touch the operator's machine, or act for the operator? The
// chat skill's check and the console's verdict, derived from the agent's tool class (tool-class.ts): an
// agent is `restricted` only when its class is `none` (nothing beyond a small known-safe set); anything it
// is offered beyond that, web search included, is listed for the operator to accept or remove.
import type { ToolExposureView } from '../protocol/console-api.js';
import { declaredAgents } from './effective-tools.js';
import { readOpenClawFile, type OpenClawFile } from './openclaw-file.js';
import { assessAgentTools, reasons } from './tool-class.js';

export { declaredAgents } from './effective-tools.js';
export { normalizeAgentId } from './policy-layers.js';
export { CODE_MODE_EXEC, CORE_TOOLS, SAFE_TOOLS } from './tool-catalog.js';

/** The target agent's effective tool exposure, from a parsed `openclaw.json`. */
export function classifyToolPolicy(config: unknown, agentId: string): ToolExposureView {
  const assessed = assessAgentTools(config, agentId);
  if (!assessed.known) return { verdict: 'unknown', detail: assessed.detail };
  const { view, facts } = assessed;
  const { name, toolsAt, tools, code } = facts;
  const settings = facts.settings.join(', ');
  if (view.class === 'none' && facts.ownerless) {
    // The gateway keeps the last config it accepted: a restriction in one it refuses is not what runs.
    const notLoaded = 'the file lists several agents and none owns the fleet';
    return {
      verdict: 'unknown',
      notLoaded,
      detail: `The OpenClaw config lists several agents without agents.ownership: "explicit" (or one of them marked default: true), which OpenClaw refuses, so it is not what the gateway runs and the restriction of agent ${name} in it may not be either. Run openclaw config validate where the gateway runs and fix what it reports: the gateway reloads a valid file by itself.`,
    };
  }
  if (view.class === 'none') {
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
