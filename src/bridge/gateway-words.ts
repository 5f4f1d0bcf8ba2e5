// What the terminal says about the gateway (`serve`): the start banner's line, each transition of its state
// once, and the agent for callers when the operator must act on it. The console shows the same facts.
import type { GatewayAgentView } from '../protocol/console-api.js';
import type { GatewaySnapshot, GatewayTransition } from './gateway-state.js';

/** The banner's `Gateway:` lines, from the state after the first check. */
export function bannerLines(snapshot: GatewaySnapshot, agent: GatewayAgentView): string[] {
  const label = '  Gateway:    ';
  const { condition, problem } = snapshot;
  if (condition === 'not-configured') {
    return [
      `${label}${snapshot.status}: pass --gateway-url and --gateway-token (or set GATEWAY_URL / GATEWAY_TOKEN).`,
    ];
  }
  if (problem) return [`${label}${problem.diagnosis}`, `              Fix: ${problem.fix}`];
  if (condition === 'unknown') return [`${label}configured; not checked yet`];
  return [`${label}answering; callers reach ${agent.id ? `agent "${agent.id}"` : `model "${agent.model}"`}`];
}

/** The lines for one transition of the gateway's state (none for a settings change: the next check says). */
export function transitionLines({ from, to, snapshot }: GatewayTransition): string[] {
  const { problem } = snapshot;
  const withFix = (lead: string) => (problem ? [`${lead}${problem.diagnosis}`, `  Fix: ${problem.fix}`] : []);
  switch (to) {
    case 'down':
      return withFix('Gateway down: ');
    case 'token-wrong':
      return withFix("Gateway refuses the bridge's token: ");
    case 'agent-missing':
      return withFix('Gateway agent for callers missing: ');
    case 'failing':
      return withFix('Gateway problem: ');
    case 'not-configured':
      return [`Gateway not configured (${snapshot.status}): set its URL and token.`];
    case 'unknown':
      return [];
    case 'up':
      return [BACK[from]];
  }
}

const BACK: Record<GatewayTransition['from'], string> = {
  down: 'Gateway back: answering again.',
  'token-wrong': "Gateway back: it accepts the bridge's token again.",
  'agent-missing': 'Gateway agent for callers added: calls are forwarded again.',
  failing: 'Gateway back: chat calls succeed again.',
  unknown: 'Gateway answering.',
  'not-configured': 'Gateway answering.',
  up: 'Gateway answering.',
};

/** The agent for callers, when its tools need the operator: refused until accepted, or accepted. */
export function targetLine(view: GatewayAgentView): string {
  const name = `"${view.id ?? view.model}"`;
  const { tools, acceptance } = view;
  if (tools.verdict === 'unknown' && tools.notLoaded) return `Callers are refused: ${tools.detail}`;
  if (tools.verdict !== 'exposes-host-tools') return '';
  if (acceptance?.state === 'accepted') {
    return `WARNING: callers reach agent ${name}, which you accepted on ${acceptance.at.slice(0, 10)} with host tools: ${tools.tools.join(', ')}.`;
  }
  const changed =
    acceptance?.state === 'changed'
      ? ` Its tools changed since you accepted it (then: ${acceptance.tools.join(', ') || 'none'}).`
      : '';
  return (
    `Callers are refused: ${tools.detail}${changed} To let them in anyway, accept this agent with these ` +
    "tools on the console's Overview (Gateway card); or give them a restricted agent (the Overview shows the config)."
  );
}
