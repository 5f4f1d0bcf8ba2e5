import type { AccessChange } from './access/access-control.js';
import type { CallbackOptions } from './agent/callbacks.js';
import type { CallbackEvent, EnvelopeEvent } from './agent/events.js';
import type { IntakeOptions } from './agent/intake.js';
import type { ListenerLimits } from './agent/listener.js';
import type { Skill } from './agent/skill.js';
import type { ClassifyAgentTools } from './bridge/exposure-class.js';
import type { GatewayCallEvent } from './bridge/gateway-link.js';
import type { GatewayTransition } from './bridge/gateway-state.js';
import type { AgentCard } from './protocol/index.js';
import type { GatewayAgentView } from './protocol/console-api.js';
import type { RegistryState } from './registry/registration.js';
import type { Settings } from './settings/schema.js';
import type { StateHealth } from './state/redis-connection.js';
import type { TunnelTiming } from './tunnel/public-address.js';
import type { TunnelState } from './tunnel/state.js';
import type { AddressChange } from './tunnel/supervisor.js';

// The app's contract with its shells (console, cli, electron, metrics, tests): what it is built with, and
// what it tells.

export interface AppOptions {
  dataDir: string;
  /** Effective settings for this run: the store's values with flags and env applied. */
  settings: Settings;
  /** `serve --demo`: a stand-in gateway answers; the cards and the console say so (src/demo/demo-mode.ts). */
  demo?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Extra skills registered beside `chat` (tests use their own to cover the generic core). */
  extraSkills?: Skill[];
  /**
   * The classifier of the published skills' agents (bridge/tool-class.ts, `classifyAgentTools`); none: the
   * stand-in on today's exposure check (bridge/exposure-class.ts). Tests pass their own.
   */
  classifyAgentTools?: ClassifyAgentTools;
  /** Test seams for callbacks (e.g. loopback targets); production uses the defaults. */
  callbacks?: Partial<CallbackOptions>;
  /** How often the gateway's health is probed (GET /health); 0 turns the periodic probe off. */
  gatewayProbeMs?: number;
  /** Tunnel supervision timing (tests shorten the backoff and the reachability interval). */
  tunnel?: TunnelTiming;
  keepAliveMs?: number;
  /** The pending list's bounds (tests use small ones; production: 100 senders, 3 held tasks each). */
  accessLimits?: { maxPending?: number; maxHeldPerSender?: number };
  /** The A2A knocks' bounds (tests use small ones; production: 100 waiting, 3 from one address). */
  knockLimits?: { maxWaiting?: number; maxPerAddress?: number };
  /** Tasks kept per sender and in all (tests use small ones; production: 200 and 5,000). */
  taskLimits?: { maxPerSender?: number; maxTotal?: number };
  /** How long calls stay refused after Redis comes back without its data (tests shorten the 5 min). */
  stateWipeHoldMs?: number;
  /** Body budget, read/verify slots and body deadlines (tests use short ones; defaults in agent/intake.ts). */
  intake?: Partial<IntakeOptions>;
  /** The agent port's deadlines (tests shorten them; defaults in agent/listener.ts). */
  listener?: Partial<ListenerLimits>;
  now?: () => number;
}

export interface AppEvents {
  envelope: [EnvelopeEvent];
  /** A call the operator's own agent made through the bridge (MCP): direction `out`, refusals included. */
  outbound: [EnvelopeEvent];
  callback: [CallbackEvent];
  /** The gateway's condition changed (gateway-state.ts): each transition once. */
  gateway: [GatewayTransition];
  /** Every chat call's gateway outcome (`gateway` only says when the state changes). */
  gatewayCall: [GatewayCallEvent];
  card: [AgentCard];
  tunnel: [TunnelState];
  address: [AddressChange];
  registry: [RegistryState];
  access: [AccessChange];
  /** The agent callers reach on the gateway: existence and tool policy (GatewayTarget). */
  gatewayAgent: [GatewayAgentView];
  /** What a published skill's agent is seen to be changed (skill-targets.ts): the Skills page reloads. */
  skills: [];
  /** Shared state's health (Redis up or down); never emitted with the data dir. */
  state: [StateHealth];
}
