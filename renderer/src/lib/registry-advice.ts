/**
 * What to do about a registration that failed because the public URL did not reach this agent: the advice
 * follows what the tunnel's reachability check has measured since, so the Registry never says "wait until
 * the tunnel is online" beside a Tunnel card that says it is reachable (issue 26, item 9).
 */
import type { ProblemView, StatusResponse } from '../api/contract';
import { formatTime } from './format';

export function registryFix(lastError: ProblemView, tunnel: StatusResponse['tunnel']): string {
  // A refusal by the registry itself, or a public URL set by hand (nothing measures it): the registrar's fix.
  if (lastError.cause !== 'unreachable' || tunnel.provider === 'none') return lastError.fix;
  switch (tunnel.status) {
    case 'online': {
      const reach = tunnel.reachability;
      if (!reach?.checkedAt || reach.state === 'checking') {
        return 'The tunnel is checking its address now: register again once the Tunnel card says Reachable.';
      }
      // The registration's own check is newer than the tunnel's: its finding (and fix) stands.
      if (Date.parse(reach.checkedAt) < Date.parse(lastError.at)) return lastError.fix;
      if (reach.state === 'reachable') {
        return `The public address reaches this agent now (checked at ${formatTime(reach.checkedAt)}): register again.`;
      }
      return `Still not reachable: ${reach.problem ?? 'the last call through the public URL failed'}. Then register again.`;
    }
    case 'connecting':
    case 'reconnecting':
      return 'The tunnel is connecting: register again once the Tunnel card says Reachable.';
    case 'off':
    case 'failed':
      return 'Start the tunnel (Overview → Tunnel), then register again once its card says Reachable.';
  }
}
