/** The first-run walk-through: what is left to do before the agent is public and listed, in order. */
import type { StatusResponse } from '../api/contract';

export interface SetupStep {
  id: 'gateway' | 'tunnel' | 'registry';
  title: string;
  done: boolean;
  /** What to do next (or what is happening), when not done. */
  next?: string;
}

export function setupSteps(status: StatusResponse): SetupStep[] {
  return [gatewayStep(status.gateway), tunnelStep(status.tunnel), registryStep(status.registry)];
}

function gatewayStep(gateway: StatusResponse['gateway']): SetupStep {
  const title = 'Connect your gateway';
  if (gateway.status !== 'configured') {
    return {
      id: 'gateway',
      title,
      done: false,
      next: `The gateway is ${gateway.status.replace('missing', 'missing its')}: set its URL and token in Settings → Gateway. Next to OpenClaw, both are read from ~/.openclaw/openclaw.json.`,
    };
  }
  if (gateway.problem)
    return { id: 'gateway', title, done: false, next: `${gateway.problem.diagnosis} ${gateway.problem.fix}` };
  if (gateway.live === false)
    return {
      id: 'gateway',
      title,
      done: false,
      next: 'The gateway does not answer: start it and check its URL.',
    };
  if (gateway.live === undefined) return { id: 'gateway', title, done: false, next: 'Checking the gateway…' };
  return { id: 'gateway', title, done: true };
}

function tunnelStep(tunnel: StatusResponse['tunnel']): SetupStep {
  const title = 'Get a public address';
  switch (tunnel.status) {
    case 'online':
      return { id: 'tunnel', title, done: true };
    case 'connecting':
      return { id: 'tunnel', title, done: false, next: 'The tunnel is connecting…' };
    case 'reconnecting':
      return { id: 'tunnel', title, done: false, next: `The tunnel is reconnecting (${tunnel.lastError}).` };
    case 'failed':
      return {
        id: 'tunnel',
        title,
        done: false,
        next: `The tunnel failed: ${tunnel.reason}. Check Settings → Tunnel.`,
      };
    case 'off':
      return tunnel.provider === 'none'
        ? { id: 'tunnel', title, done: true }
        : { id: 'tunnel', title, done: false, next: 'The tunnel is off: start it in the Tunnel card.' };
  }
}

function registryStep(registry: StatusResponse['registry']): SetupStep {
  const title = 'List the agent in the registry';
  if (registry.status === 'registered') return { id: 'registry', title, done: true };
  if (registry.status === 'registering') return { id: 'registry', title, done: false, next: 'Registering…' };
  const failed = registry.lastError
    ? ` The last attempt failed: ${registry.lastError.message} ${registry.lastError.fix}`
    : '';
  return {
    id: 'registry',
    title,
    done: false,
    next: `Register on the Registry page once the public address works.${failed}`,
  };
}
