import { agentIdForUrl } from '../protocol/index.js';
import type { AddressChange } from './supervisor.js';

/**
 * What the terminal says when the tunnel's address comes up: the URL and the agent's id (the start banner
 * could not name it yet), and when it is not the one the agent had before, that its id changed and what that breaks (approvals other agents gave the old id), what
 * follows by itself (the registry entry) and how to keep one address.
 */
export function addressLines(change: AddressChange, registered: boolean): string[] {
  if (!change.previous) return [`Public URL: ${change.url}`, `Agent id:   ${agentIdForUrl(change.url)}`];
  const [before, after] = [agentIdForUrl(change.previous), agentIdForUrl(change.url)];
  return [
    `WARNING: this agent's public address changed, and with it its id: ${before} is now ${after} (${change.url}).`,
    `  Breaks: agents that approved ${before} do not know ${after}: they must approve it again (tell them the new id).`,
    registered
      ? '  Follows: the registry entry moves to the new address by itself.'
      : '  Not registered: nothing to update in the registry.',
    ...(change.note ? [`  Why: ${change.note}.`] : []),
    '  To keep one address: a stable tunnel (console Settings > Tunnel: Tailscale Funnel, a Cloudflare named tunnel, or ngrok with a reserved domain).',
  ];
}
