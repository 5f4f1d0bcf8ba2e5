import type { AgentBridgeApp, GatewayState } from '../app.js';
import type {
  GatewayView,
  McpStatusView,
  RegistryRecordView,
  RegistryStatus,
  StatusResponse,
  TunnelStatus,
} from '../protocol/console-api.js';
import type { RegistryState } from '../registry/registration.js';
import type { TrafficLog } from './traffic-log.js';

export interface StatusInput {
  app: AgentBridgeApp;
  log: TrafficLog;
  tunnel: TunnelStatus;
  restartNeeded: string[];
  /** When the console started (right after the agent): the base of `uptimeSeconds`. */
  startedAt: number;
  now: number;
  mcp: McpStatusView;
}

/** GET /api/status: everything the Overview shows, from the running app. */
export function buildStatus({
  app,
  log,
  tunnel,
  restartNeeded,
  startedAt,
  now,
  mcp,
}: StatusInput): StatusResponse {
  const card = app.card();
  const gateway = gatewayView(app, now);
  const tunnelTrouble = tunnel.status === 'failed' || tunnel.status === 'reconnecting';
  // Callers reach no agent, or one with the operator's shell and files: not healthy, whatever else works.
  const unsafeTarget =
    gateway.agent.check === 'missing' || gateway.agent.tools.verdict === 'exposes-host-tools';
  const state = app.stateHealth();
  return {
    agent: {
      id: card.id,
      url: app.agentUrl,
      localUrl: app.localUrl,
      version: card.version,
      protocolVersion: card.protocolVersion,
      uptimeSeconds: Math.max(0, Math.round((now - startedAt) / 1000)),
      health:
        gateway.status === 'configured' && !gateway.problem && !tunnelTrouble && !unsafeTarget && state.up
          ? 'ok'
          : 'degraded',
      activeRequests: app.server.activeRequests,
      queuedTasks: app.server.tasks.activeCount,
      card,
    },
    gateway,
    tunnel: tunnelView(app, tunnel),
    registry: registryView(app.registrar.current),
    keys: app.keys.list(),
    traffic: log.counters(),
    restartNeeded,
    access: app.access.summary(),
    mcp,
    state,
  };
}

/** The tunnel as the console shows it: its state, its provider, and a change of address not dismissed. */
export function tunnelView(app: AgentBridgeApp, tunnel: TunnelStatus): StatusResponse['tunnel'] {
  const addressChange = app.tunnelAddress.lastChange;
  return { ...tunnel, provider: app.currentSettings.tunnel, ...(addressChange ? { addressChange } : {}) };
}

function gatewayView(app: AgentBridgeApp, now: number): GatewayView {
  const state = app.gatewayStatus();
  const config = app.gatewayConfig();
  const view: GatewayView = {
    status: state.status,
    url: withoutPassword(config.url),
    model: config.model,
    agent: app.gatewayTarget.view,
  };
  if (state.probe) Object.assign(view, { live: state.probe.live, checkedAt: state.probe.checkedAt });
  if (state.lastCall) view.lastCallOk = state.lastCall.ok;
  const problem = currentProblem(state, now);
  if (problem) view.problem = problem;
  return view;
}

/**
 * The problem to show: the most recent of the probe's and the last call's. A live probe does not clear a
 * failed call (GET /health answers even when the chat endpoint is disabled), but a successful call newer
 * than a failed probe does: the gateway evidently answers.
 */
function currentProblem(state: GatewayState, now: number): GatewayView['problem'] {
  if (state.status !== 'configured') {
    return {
      kind: 'not-configured',
      diagnosis: `The gateway is not configured (${state.status}).`,
      fix: 'Set the gateway URL and token in Settings > Gateway (or pass --gateway-url and --gateway-token), or install OpenClaw locally so its config is read.',
      at: new Date(now).toISOString(),
    };
  }
  const { probe, lastCall } = state;
  const problems: NonNullable<GatewayView['problem']>[] = [];
  const callOkSince = lastCall?.ok ? Date.parse(lastCall.at) : -Infinity;
  if (probe && !probe.live && Date.parse(probe.checkedAt) > callOkSince) {
    problems.push({
      kind: probe.problem ?? 'unreachable',
      diagnosis: probe.diagnosis ?? 'The gateway does not answer its health check.',
      fix: probe.fix ?? 'Start the gateway (openclaw gateway) and check the gateway URL in Settings.',
      at: probe.checkedAt,
    });
  }
  if (lastCall && !lastCall.ok) {
    const { problem: kind, diagnosis, fix, at } = lastCall;
    problems.push({ kind, diagnosis, fix, at });
  }
  return problems.sort((a, b) => Date.parse(b.at) - Date.parse(a.at))[0];
}

function registryView(state: RegistryState): RegistryStatus {
  if (state.status !== 'registered') return state;
  return { ...state, record: recordView(state.record) };
}

/** Only the record's documented fields, whatever else the saved registration file holds. */
export function recordView(record: RegistryRecordView): RegistryRecordView {
  const { registry, url, id, name, registeredAt } = record;
  return { registry, url, id, name, registeredAt };
}

// A URL may carry credentials (http://user:secret@host): the console shows the address, never the secret.
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}
