import { PROTOCOL_VERSION } from '../protocol/index.js';
import type { PublicAddressHealth } from '../protocol/console-api.js';

export interface HealthInput {
  /** False while shared state (Redis) does not answer: every call is refused then. */
  stateUp?: boolean;
  agentId: string;
  agentVersion: string;
  startedAt: number;
  /** `configured`, `missing GATEWAY_URL` or `missing GATEWAY_TOKEN`: never the URL or token themselves. */
  gateway: string;
  /** False while the gateway is down, refuses the token or lacks the agent for callers (never why: public). */
  gatewayServing?: boolean;
  /**
   * What the last check through the public address found (`reachable`, `unreachable`, `checking`), or `none`
   * without a checked public address: a connected tunnel client is not a reachable agent.
   */
  publicAddress?: PublicAddressHealth;
  activeRequests: number;
  queuedTasks: number;
  draining: boolean;
}

/** `GET /agent/health` (PROTOCOL.md §8). Public: no URLs, tokens or local paths. */
export function healthBody(input: HealthInput) {
  return {
    status:
      input.gateway === 'configured' &&
      input.gatewayServing !== false &&
      !input.draining &&
      input.stateUp !== false &&
      input.publicAddress !== 'unreachable'
        ? 'ok'
        : 'degraded',
    agent: input.agentId,
    protocolVersion: PROTOCOL_VERSION,
    agentVersion: input.agentVersion,
    uptime: Math.round((Date.now() - input.startedAt) / 1000),
    gateway: input.gateway,
    publicAddress: input.publicAddress ?? 'none',
    load: { activeRequests: input.activeRequests, queuedTasks: input.queuedTasks },
  };
}
