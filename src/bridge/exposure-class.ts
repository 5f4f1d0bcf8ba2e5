// Until the classifier of tool classes (bridge/tool-class.ts, issue 27 item 2) is merged, a skill's class
// comes from today's exposure check (tool-policy.ts): restricted is `none`, anything that reaches the host
// or cannot be told is `host`. Never wider than the truth: a restricted agent has no host tool, and every
// doubt is `host`, which serves only named callers the operator accepted it for.
import type { ToolExposureView } from '../protocol/console-api.js';
import type { ToolClassView } from '../protocol/skills.js';
import { classifyToolPolicy } from './tool-policy.js';

/**
 * A classifier of an agent's tools, as `classifyAgentTools(config, agentId, { sandboxNetwork })` in
 * tool-class.ts: the parsed OpenClaw config, the agent, whether the operator lets its sandbox reach the
 * network. It never throws for a config it cannot read: that is `host`.
 */
export type ClassifyAgentTools = (
  config: unknown,
  agentId: string,
  options: { sandboxNetwork: boolean },
) => ToolClassView;

/** The class today's exposure verdict stands for: restricted is none, exposing and unknown are host. */
export function toolClassOfExposure(view: ToolExposureView): ToolClassView {
  switch (view.verdict) {
    case 'restricted':
      return { class: 'none', tools: [], detail: view.detail };
    case 'exposes-host-tools':
      return { class: 'host', tools: [...new Set(view.tools)].sort(), detail: view.detail };
    case 'unknown':
      return { class: 'host', tools: [], detail: `${view.detail} Until it can be told, it counts as host.` };
  }
}

/** The stand-in classifier: today's tool-policy check, as a class (the sandbox is not looked at). */
export const classifyByExposure: ClassifyAgentTools = (config, agentId) =>
  toolClassOfExposure(classifyToolPolicy(config, agentId));
