import type { RegistryStatus, TunnelStatus } from '../../src/protocol/console-api.js';

/** What the desktop shell knows about the core: enough to draw the tray, the menu and notifications. */
export interface ShellState {
  /** The core could not start (e.g. the agent port is taken): the app is in error. */
  coreError?: string;
  tunnel: TunnelStatus;
  gateway: {
    /** `configured`, `missing GATEWAY_URL` or `missing GATEWAY_TOKEN`. */
    status: string;
    /** From the health probe; undefined before the first. */
    live?: boolean;
    problem?: { diagnosis: string; fix: string };
  };
  registry: RegistryStatus;
  /** Where callers reach the agent now (the public URL while the tunnel is online). */
  agentUrl?: string;
  startAtLogin: boolean;
}

export type Health = 'online' | 'degraded' | 'offline' | 'error';

/** The one-word health and the reason in a sentence, in order of what the operator must fix first. */
export function healthOf(state: ShellState): { health: Health; reason: string } {
  if (state.coreError) return { health: 'error', reason: state.coreError };
  if (state.tunnel.status === 'failed')
    return { health: 'error', reason: `Tunnel failed: ${state.tunnel.reason}` };
  if (state.gateway.status !== 'configured')
    return { health: 'degraded', reason: `Gateway ${state.gateway.status}` };
  if (state.gateway.problem) return { health: 'degraded', reason: state.gateway.problem.diagnosis };
  if (state.gateway.live === false) return { health: 'degraded', reason: 'The gateway is not answering' };
  switch (state.tunnel.status) {
    case 'off':
      return { health: 'offline', reason: 'Tunnel off: the agent is reachable on this machine only' };
    case 'connecting':
      return { health: 'degraded', reason: 'Tunnel connecting' };
    case 'reconnecting':
      return { health: 'degraded', reason: `Tunnel reconnecting: ${state.tunnel.lastError}` };
    case 'online':
      return { health: 'online', reason: `Online at ${state.tunnel.url}` };
  }
}

export function publicUrlOf(state: ShellState): string | undefined {
  return state.tunnel.status === 'online' ? state.tunnel.url : undefined;
}
