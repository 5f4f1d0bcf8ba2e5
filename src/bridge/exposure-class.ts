// The chat skill's agent is checked by the exposure verdict (tool-policy.ts, GatewayTarget): as a class,
// restricted is `none`, anything that reaches the host or cannot be told is `host`. Never wider than the
// truth: a restricted agent has no host tool, and every doubt is `host`. The published skills' agents are
// classified in full (tool-class.ts).
import type { ToolExposureView } from '../protocol/console-api.js';
import type { ToolClassView } from '../protocol/skills.js';

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
