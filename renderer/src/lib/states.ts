/** How each part's state reads at a glance: a tone for the badge and a short label. */
import type { Tone } from '../components/Badge';
import type { GatewayView, RegistryStatus, StatusResponse } from '../api/contract';

export interface Glance {
  tone: Tone;
  label: string;
}

export function tunnelGlance(tunnel: StatusResponse['tunnel']): Glance {
  switch (tunnel.status) {
    case 'online': {
      // What a call through the public URL found, not that the tunnel client is connected.
      const reach = tunnel.reachability?.state;
      if (reach === 'unreachable') return { tone: 'bad', label: 'Not reachable' };
      if (reach === 'checking') return { tone: 'warn', label: 'Checking' };
      return { tone: 'ok', label: reach === 'reachable' ? 'Reachable' : 'Online' };
    }
    case 'connecting':
      return { tone: 'warn', label: 'Connecting' };
    case 'reconnecting':
      return { tone: 'warn', label: tunnel.keepingName ? 'Keeping its address' : 'Reconnecting' };
    case 'failed':
      return { tone: 'bad', label: 'Failed' };
    case 'off':
      return { tone: 'neutral', label: tunnel.provider === 'none' ? 'No tunnel' : 'Off' };
  }
}

export function gatewayGlance(gateway: GatewayView): Glance {
  switch (gateway.condition) {
    case 'not-configured':
      return { tone: 'bad', label: 'Not configured' };
    case 'down':
      return { tone: 'bad', label: 'Unreachable' };
    case 'token-wrong':
      return { tone: 'bad', label: 'Token refused' };
    case 'agent-missing':
      return { tone: 'bad', label: 'Agent missing' };
    case 'failing':
      return { tone: 'bad', label: 'Problem' };
    case 'unknown':
      return { tone: 'neutral', label: 'Not checked yet' };
    case 'up':
      return agentGlance(gateway.agent);
  }
}

/** The gateway answers: what callers reach through it. */
function agentGlance(agent: GatewayView['agent']): Glance {
  if (agent.check === 'missing') return { tone: 'bad', label: 'Agent missing' };
  if (agent.tools.verdict === 'unknown' && agent.tools.notLoaded)
    return { tone: 'bad', label: 'Config not loaded' };
  if (agent.tools.verdict === 'exposes-host-tools') {
    return agent.acceptance?.state === 'accepted'
      ? { tone: 'warn', label: 'Exposes host tools (accepted)' }
      : { tone: 'bad', label: 'Exposes host tools' };
  }
  return { tone: 'ok', label: 'Reachable' };
}

export function registryGlance(registry: RegistryStatus): Glance {
  switch (registry.status) {
    case 'registered':
      return registry.lastError
        ? { tone: 'warn', label: 'Registered, last attempt failed' }
        : { tone: 'ok', label: 'Registered' };
    case 'registering':
      return { tone: 'info', label: 'Registering…' };
    case 'unregistered':
      return registry.lastError
        ? { tone: 'bad', label: 'Not registered' }
        : { tone: 'neutral', label: 'Not registered' };
  }
}
