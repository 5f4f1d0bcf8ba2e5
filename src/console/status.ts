import { A2A_PATHS } from '../a2a/agent-card.js';
import { A2AKeyError } from '../access/a2a-keys.js';
import type { AgentBridgeApp } from '../app.js';
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

/** GET /api/status but its `a2a` part (status.ts `a2aStatus`, which reads the key store). */
export type StatusCore = Omit<StatusResponse, 'a2a'>;

/** GET /api/status: everything the Overview shows, from the running app. */
export function buildStatus({
  app,
  log,
  tunnel,
  restartNeeded,
  startedAt,
  now,
  mcp,
}: StatusInput): StatusCore {
  const card = app.card();
  const gateway = gatewayView(app, now);
  const tunnelTrouble =
    tunnel.status === 'failed' ||
    tunnel.status === 'reconnecting' ||
    (tunnel.status === 'online' && tunnel.reachability?.state === 'unreachable');
  // Callers reach no agent, or one with the operator's shell and files (even accepted, a standing risk, as
  // the tray shows it), or one the bridge cannot check: not healthy, whatever else works.
  const unsafeTarget =
    app.gatewayTarget.problem() !== undefined || gateway.agent.tools.verdict === 'exposes-host-tools';
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
        (gateway.condition === 'up' || gateway.condition === 'unknown') &&
        !tunnelTrouble &&
        !unsafeTarget &&
        state.up
          ? 'ok'
          : 'degraded',
      activeRequests: app.server.activeRequests,
      queuedTasks: app.server.tasks.activeCount,
      card,
    },
    gateway,
    tunnel: tunnelView(app, tunnel),
    registry: { ...registryView(app.registrar.current), registryUrl: app.currentSettings.registryUrl },
    keys: app.keys.list(),
    traffic: log.counters(),
    restartNeeded,
    access: { ...app.access.summary(), knocks: app.a2a.knocks?.summary() ?? { waiting: 0 } },
    mcp,
    state,
    ...(app.demo ? { demo: true as const } : {}),
    skills: app.published.summary(),
  };
}

/**
 * The Overview's A2A card: the agent card's address once the agent has a public one (the tunnel's, or the
 * public URL setting: the address the card names), and the keys callers may use now: unknown (null, and
 * why) while the key store cannot be read, not 0.
 */
export async function a2aStatus(app: AgentBridgeApp): Promise<StatusResponse['a2a']> {
  // Before the agent has a public address (the tunnel's, or publicUrl), no caller could use the card's.
  const url = app.publicAddress.publicUrl;
  const cardUrl = url === undefined ? null : `${url}${A2A_PATHS.card}`;
  try {
    return { cardUrl, keys: await app.a2aKeys.activeCount() };
  } catch (error) {
    // A2AKeyError messages name the store's trouble (a path, Redis), never a key.
    const problem = error instanceof A2AKeyError ? error.message : 'The A2A keys could not be counted.';
    return { cardUrl, keys: null, keysProblem: problem };
  }
}

/** The tunnel as the console shows it: its state, its provider, and a change of address not dismissed. */
export function tunnelView(app: AgentBridgeApp, tunnel: TunnelStatus): StatusResponse['tunnel'] {
  const addressChange = app.publicAddress.memory.lastChange;
  return { ...tunnel, provider: app.currentSettings.tunnel, ...(addressChange ? { addressChange } : {}) };
}

function gatewayView(app: AgentBridgeApp, now: number): GatewayView {
  const state = app.gatewayStatus();
  const config = app.gateway.current.config;
  const view: GatewayView = {
    status: state.status,
    condition: state.condition,
    since: state.since,
    url: withoutPassword(config.url),
    model: config.model,
    agent: app.gatewayTarget.view,
  };
  if (state.probe) Object.assign(view, { live: state.probe.live, checkedAt: state.probe.checkedAt });
  if (state.lastCall) view.lastCallOk = state.lastCall.ok;
  if (state.problem) {
    const { kind, diagnosis, fix, at } = state.problem;
    view.problem = { kind, diagnosis, fix, at };
  } else if (state.status !== 'configured') {
    view.problem = {
      kind: 'not-configured',
      diagnosis: `The gateway is not configured (${state.status}).`,
      fix: 'Set the gateway URL and token in Settings > Gateway (or pass --gateway-url and --gateway-token), or install OpenClaw locally so its config is read.',
      at: new Date(now).toISOString(),
    };
  }
  return view;
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
