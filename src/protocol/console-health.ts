/**
 * "Is it working?" in one line, from the checks that actually ran: the tray (electron/decisions/shell-state.ts)
 * and the console's Overview both call `healthSummary`, so they never disagree (issue 26, item 15). Pure: it
 * reads the console status's types only, so the renderer may import it (DESIGN.md: src/protocol only).
 */
import type { GatewayAgentView, StatusResponse, ToolExposureView, TunnelStatus } from './console-api.js';

export type Health = 'online' | 'degraded' | 'offline' | 'error';

/** The word for each health, in the tray's menu and on the Overview. */
export const HEALTH_TITLES: Record<Health, string> = {
  online: 'Online',
  degraded: 'Degraded',
  offline: 'Offline',
  error: 'Error',
};

/** What the summary is made of: the shell's state and the console's status both give it. */
export interface HealthFacts {
  /** The core could not start (the desktop app only). */
  coreError?: string;
  tunnel: TunnelStatus;
  gateway: {
    /** `configured`, `missing GATEWAY_URL` or `missing GATEWAY_TOKEN`. */
    status: string;
    /** From the health probe; undefined before the first. */
    live?: boolean;
    problem?: { diagnosis: string };
    /** The agent callers reach; undefined when the status does not carry it. */
    agent?: {
      id?: string;
      check: GatewayAgentView['check'];
      /** Its tool policy, when known; `exposes` lists host tools it is offered. */
      tools?: ToolExposureView['verdict'];
      exposes?: string[];
    };
  };
  /** Senders waiting for the operator's approval: SAMVAD's, and A2A callers that knocked. */
  pending: number;
}

export type CheckState = 'ok' | 'attention' | 'problem' | 'unknown';

/** One check that ran (or says it has not): reachable from outside, gateway, callers' agent, approvals. */
export interface HealthCheck {
  id: 'reachable' | 'gateway' | 'agent' | 'approvals';
  state: CheckState;
  text: string;
}

export interface HealthSummary {
  health: Health;
  /** The first thing to fix, or what works, in a sentence. */
  reason: string;
  checks: HealthCheck[];
}

/** The summary: the health and its reason in order of what the operator must fix first, and each check. */
export function healthSummary(facts: HealthFacts): HealthSummary {
  return { ...headline(facts), checks: checksOf(facts) };
}

/** The parts of the console's status (GET /api/status) the summary reads. */
export interface HealthStatus {
  tunnel: TunnelStatus;
  gateway: {
    status: string;
    live?: boolean;
    problem?: { diagnosis: string };
    agent?: Pick<GatewayAgentView, 'id' | 'check' | 'tools'>;
  };
  /** `knocks`: A2A callers without a key waiting too (absent from a core before them). */
  access?: Pick<StatusResponse['access'], 'pending'> & { knocks?: { waiting: number } };
}

/** The facts of the console's status. */
export function healthFactsOf(status: HealthStatus): HealthFacts {
  const { agent, problem } = status.gateway;
  return {
    tunnel: status.tunnel,
    gateway: {
      status: status.gateway.status,
      ...(status.gateway.live !== undefined ? { live: status.gateway.live } : {}),
      ...(problem ? { problem: { diagnosis: problem.diagnosis } } : {}),
      ...(agent
        ? {
            agent: {
              ...(agent.id !== undefined ? { id: agent.id } : {}),
              check: agent.check,
              tools: agent.tools.verdict,
              ...(agent.tools.verdict === 'exposes-host-tools' ? { exposes: agent.tools.tools } : {}),
            },
          }
        : {}),
    },
    pending: (status.access?.pending ?? 0) + (status.access?.knocks?.waiting ?? 0),
  };
}

function headline(facts: HealthFacts): { health: Health; reason: string } {
  if (facts.coreError) return { health: 'error', reason: facts.coreError };
  const { tunnel, gateway } = facts;
  if (tunnel.status === 'failed') return { health: 'error', reason: `Tunnel failed: ${tunnel.reason}` };
  // Before any gateway trouble: every caller that gets through can reach this machine's tools.
  const agent = gateway.agent;
  if (agent?.exposes) {
    const tools = agent.exposes.length > 0 ? `: ${agent.exposes.join(', ')}` : '';
    return {
      health: 'degraded',
      reason: `${agentName(agent.id, 'The gateway agent')} exposes host tools${tools}`,
    };
  }
  if (gateway.status !== 'configured') return { health: 'degraded', reason: `Gateway ${gateway.status}` };
  // The gateway answered its agent list without it: every call would fail, whatever the last probe said.
  if (agent?.check === 'missing') {
    return {
      health: 'degraded',
      reason: `${agentName(agent.id, "Callers' agent")} is missing on the gateway: add it`,
    };
  }
  if (gateway.problem) return { health: 'degraded', reason: gateway.problem.diagnosis };
  if (gateway.live === false) return { health: 'degraded', reason: 'The gateway is not answering' };
  switch (tunnel.status) {
    case 'off':
      return { health: 'offline', reason: 'Tunnel off: the agent is reachable on this machine only' };
    case 'connecting':
      return { health: 'degraded', reason: 'Tunnel connecting' };
    case 'reconnecting':
      return { health: 'degraded', reason: `Tunnel reconnecting: ${tunnel.lastError}` };
    case 'online': {
      // What a call through the public URL found: a connected tunnel client is not a reachable agent.
      const reach = tunnel.reachability;
      if (reach?.state === 'unreachable')
        return { health: 'degraded', reason: `Not reachable at ${tunnel.url}: ${reach.problem ?? ''}` };
      if (reach?.state === 'checking')
        return { health: 'degraded', reason: `Checking ${tunnel.url} from outside` };
      const measured = reach?.state === 'reachable' ? ': reachable from outside' : '';
      return { health: 'online', reason: `Online at ${tunnel.url}${measured}` };
    }
  }
}

function checksOf({ tunnel, gateway, pending }: HealthFacts): HealthCheck[] {
  return [reachableCheck(tunnel), gatewayCheck(gateway), agentCheck(gateway.agent), approvalsCheck(pending)];
}

function reachableCheck(tunnel: TunnelStatus): HealthCheck {
  const check = (state: CheckState, text: string): HealthCheck => ({ id: 'reachable', state, text });
  switch (tunnel.status) {
    case 'online': {
      const reach = tunnel.reachability?.state;
      if (reach === 'reachable') return check('ok', 'Reachable from outside');
      if (reach === 'unreachable') return check('problem', 'Not reachable from outside');
      return check(
        'unknown',
        reach === 'checking' ? 'Checking from outside…' : 'Not checked from outside yet',
      );
    }
    case 'connecting':
      return check('unknown', 'Tunnel connecting');
    case 'reconnecting':
      return check('problem', 'Tunnel reconnecting');
    case 'failed':
      return check('problem', 'Tunnel failed');
    case 'off':
      return check('unknown', 'No tunnel: not checked from outside');
  }
}

function gatewayCheck(gateway: HealthFacts['gateway']): HealthCheck {
  const check = (state: CheckState, text: string): HealthCheck => ({ id: 'gateway', state, text });
  if (gateway.status !== 'configured') return check('problem', 'Gateway not configured');
  if (gateway.live === false) return check('problem', 'Gateway not answering');
  if (gateway.problem) return check('problem', 'Gateway answering, calls failing');
  if (gateway.live === true) return check('ok', 'Gateway answering');
  return check('unknown', 'Gateway not checked yet');
}

function agentCheck(agent: HealthFacts['gateway']['agent']): HealthCheck {
  const check = (state: CheckState, text: string): HealthCheck => ({ id: 'agent', state, text });
  if (agent?.exposes) return check('problem', "Callers' agent exposes host tools");
  if (agent?.check === 'missing') return check('problem', "Callers' agent missing");
  if (agent?.check === 'skipped') return check('unknown', "Callers' agent not checked (explicit model)");
  if (agent?.tools === 'restricted') return check('ok', "Callers' agent restricted");
  return check('unknown', "Callers' agent's tools unknown");
}

function approvalsCheck(pending: number): HealthCheck {
  if (pending === 0) return { id: 'approvals', state: 'ok', text: 'No approvals waiting' };
  const senders = pending === 1 ? '1 sender waits' : `${pending} senders wait`;
  return { id: 'approvals', state: 'attention', text: `${senders} for your approval` };
}

function agentName(id: string | undefined, noun: string): string {
  return id ? `${noun} "${id}"` : noun;
}
