import type {
  AddressChangeView,
  GatewayAgentView,
  GatewayView,
  KnocksSummary,
  PendingSenderView,
  RegistryStatus,
  StatusResponse,
  TunnelStatus,
} from '../../src/protocol/console-api.js';
import { healthSummary, type Health } from '../../src/protocol/console-health.js';
import type { UpdateView } from './updates.js';

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
    /** What is wrong now: its kind (diagnosis.ts) names the notice, the diagnosis and fix are its body. */
    problem?: { kind: string; diagnosis: string; fix: string };
    /** The gateway agent callers reach; undefined when the console does not report it. */
    agent?: GatewayAgentFacts;
  };
  registry: RegistryStatus;
  /** Where callers reach the agent now (the public URL while the tunnel is online). */
  agentUrl?: string;
  /**
   * Senders that wait for the operator's approval (access policy `pairing`), and the newest of them; the A2A
   * callers without a key that knocked, and the newest of them.
   */
  access: { pending: number; newest?: NewestSender; knocks?: KnocksSummary };
  startAtLogin: boolean;
  /** The app's own updates; undefined where the shell has no updater. */
  update?: UpdateView;
  /** The public address (the agent's id) changed, in this run or since the last: not dismissed yet. */
  addressChange?: AddressChangeView;
}

/** The gateway agent as far as the tray cares: whether it exists and which host tools it exposes. */
export interface GatewayAgentFacts {
  /** Undefined when an explicit model is set instead of an agent id. */
  id?: string;
  check: GatewayAgentView['check'];
  /** Set only when the agent's tool policy exposes host tools (exec, file access, ...). */
  exposes?: string[];
}

export type NewestSender = Pick<PendingSenderView, 'sender' | 'name' | 'code' | 'firstAt'>;
export type NewestKnock = NonNullable<KnocksSummary['newest']>;

/**
 * The part of the console's `GET /api/status` the shell reads. The gateway agent and the access summary are
 * optional here though the console always sends them now: a core from before them still draws a tray.
 */
export interface StatusFacts {
  tunnel: TunnelStatus & { addressChange?: AddressChangeView };
  gateway: Pick<GatewayView, 'status' | 'live' | 'problem'> & {
    agent?: Pick<GatewayAgentView, 'id' | 'check' | 'tools'>;
  };
  registry: RegistryStatus;
  agent: { url: string };
  access?: Pick<StatusResponse['access'], 'pending' | 'newest'> & { knocks?: KnocksSummary };
}

/** The shell's state from the console's status, so the tray and the console always agree. */
export function shellStateFrom(status: StatusFacts, startAtLogin: boolean, update?: UpdateView): ShellState {
  const { problem, agent } = status.gateway;
  const access = status.access ?? { pending: 0 };
  return {
    tunnel: status.tunnel,
    gateway: {
      status: status.gateway.status,
      live: status.gateway.live,
      ...(problem ? { problem: { kind: problem.kind, diagnosis: problem.diagnosis, fix: problem.fix } } : {}),
      ...(agent
        ? {
            agent: {
              ...(agent.id !== undefined ? { id: agent.id } : {}),
              check: agent.check,
              ...(agent.tools.verdict === 'exposes-host-tools' ? { exposes: agent.tools.tools } : {}),
            },
          }
        : {}),
    },
    registry: status.registry,
    agentUrl: status.agent.url,
    access: {
      pending: access.pending,
      ...(access.newest ? { newest: access.newest } : {}),
      ...('knocks' in access && access.knocks ? { knocks: access.knocks } : {}),
    },
    startAtLogin,
    ...(update ? { update } : {}),
    ...(status.tunnel.addressChange ? { addressChange: status.tunnel.addressChange } : {}),
  };
}

export type { Health };

/**
 * The one-word health and the reason in a sentence, in order of what the operator must fix first: the same
 * function as the console's Overview summary (src/protocol/console-health.ts), so the two always agree.
 */
export function healthOf(state: ShellState): { health: Health; reason: string } {
  const { health, reason } = healthSummary({
    ...(state.coreError ? { coreError: state.coreError } : {}),
    tunnel: state.tunnel,
    gateway: state.gateway,
    pending: state.access.pending + (state.access.knocks?.waiting ?? 0),
  });
  return { health, reason };
}

export function publicUrlOf(state: ShellState): string | undefined {
  return state.tunnel.status === 'online' ? state.tunnel.url : undefined;
}
