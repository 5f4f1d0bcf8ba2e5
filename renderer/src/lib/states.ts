/** How each part's state reads at a glance: a tone for the badge and a short label. */
import type { Tone } from '../components/Badge';
import type { GatewayView, RegistryStatus, StatusResponse } from '../api/contract';

export interface Glance {
  tone: Tone;
  label: string;
}

export function tunnelGlance(tunnel: StatusResponse['tunnel']): Glance {
  switch (tunnel.status) {
    case 'online':
      return { tone: 'ok', label: 'Online' };
    case 'connecting':
      return { tone: 'warn', label: 'Connecting' };
    case 'reconnecting':
      return { tone: 'warn', label: 'Reconnecting' };
    case 'failed':
      return { tone: 'bad', label: 'Failed' };
    case 'off':
      return { tone: 'neutral', label: tunnel.provider === 'none' ? 'No tunnel' : 'Off' };
  }
}

export function gatewayGlance(gateway: GatewayView): Glance {
  if (gateway.status !== 'configured') return { tone: 'bad', label: 'Not configured' };
  if (gateway.problem) return { tone: 'bad', label: 'Problem' };
  if (gateway.live === false) return { tone: 'bad', label: 'Unreachable' };
  if (gateway.agent.check === 'missing') return { tone: 'bad', label: 'Agent missing' };
  if (gateway.agent.tools.verdict === 'exposes-host-tools')
    return { tone: 'bad', label: 'Exposes host tools' };
  if (gateway.live === true) return { tone: 'ok', label: 'Reachable' };
  return { tone: 'neutral', label: 'Not checked yet' };
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
