import type { AcceptedExposedAgent, GatewayAgentView } from '../protocol/console-api.js';
import { createChatSkill, type ChatResult, type GatewayOutcome } from './chat-skill.js';
import type { Skill } from '../agent/skill.js';
import type { GatewayProblem } from './diagnosis.js';
import { openclawConfigPath, resolveGatewayConfig, type ResolvedGateway } from './gateway-config.js';
import type { GatewayTransition } from './gateway-state.js';
import { GatewayTarget, agentModel } from './gateway-target.js';
import type { GatewayTurnOptions } from './gateway-turn.js';
import { GatewayWatch } from './gateway-watch.js';

/** The settings that say which gateway, and which agent on it, callers reach. */
export interface GatewaySettings {
  gatewayUrl?: string;
  gatewayToken?: string;
  gatewayModel?: string;
  gatewayAgent: string;
  gatewayTimeoutMs?: number;
  acceptedExposedAgent?: AcceptedExposedAgent;
}

/** The settings the chat skill reads. */
export interface ChatSkillSettings {
  defaultChannel: string;
  callerInstructions: string;
  chatTrust: Skill['trust'];
  allowedPeers: string[];
}

/** One chat call's outcome at the gateway, for metrics; `durationMs` when the gateway was reached. */
export interface GatewayCallEvent {
  ok: boolean;
  problem?: GatewayProblem;
  durationMs?: number;
}

export interface GatewayLinkOptions {
  settings(): GatewaySettings;
  env: NodeJS.ProcessEnv;
  now?: () => number;
  /** The gateway's condition changed (gateway-state.ts): each transition once. */
  onTransition(transition: GatewayTransition): void;
  /** The agent callers reach: existence and tool policy. */
  onAgent(view: GatewayAgentView): void;
  /** Every chat call's outcome. */
  onCall(event: GatewayCallEvent): void;
}

/**
 * The operator's gateway as the bridge uses it: where it is and with which token (settings, the
 * environment, OpenClaw's config), the agent callers reach on it (GatewayTarget), and its one state
 * (GatewayWatch), fed by probes and by every chat call.
 */
export class GatewayLink {
  readonly target: GatewayTarget;
  readonly watch: GatewayWatch;
  /** One gateway turn for both front doors: the restricted-agent rule, the call, its outcome. */
  readonly turn: GatewayTurnOptions;
  private resolved: ResolvedGateway;

  constructor(private readonly options: GatewayLinkOptions) {
    this.resolved = this.resolve();
    this.target = new GatewayTarget({
      gateway: () => this.resolved,
      agentId: () => options.settings().gatewayAgent,
      explicitModel: () => options.settings().gatewayModel,
      configPath: () => openclawConfigPath(options.env),
      accepted: () => options.settings().acceptedExposedAgent,
      now: options.now,
      onChange: options.onAgent,
    });
    this.watch = new GatewayWatch({
      gateway: () => this.resolved,
      target: this.target,
      now: options.now,
      onTransition: options.onTransition,
    });
    this.turn = {
      gateway: () => this.resolved,
      targetProblem: () => this.target.problem(),
      onGatewayOutcome: (outcome) => this.called(outcome),
    };
  }

  /** The `chat` skill SAMVAD callers reach, on this gateway's turn (A2A's core runs the same turn). */
  chatSkill(settings: () => ChatSkillSettings): Skill<ChatResult> {
    const { chatTrust, allowedPeers } = settings();
    return createChatSkill({
      ...this.turn,
      defaultChannel: () => settings().defaultChannel,
      callerInstructions: () => settings().callerInstructions,
      trust: chatTrust,
      allowedPeers,
    });
  }

  /** The gateway as the settings resolve now. */
  get current(): ResolvedGateway {
    return this.resolved;
  }

  /** Where the local OpenClaw config is (`OPENCLAW_CONFIG_PATH` or ~/.openclaw/openclaw.json), and the env it reads. */
  openclawConfig(): { path: string; env: NodeJS.ProcessEnv } {
    return { path: openclawConfigPath(this.options.env), env: this.options.env };
  }

  /** Settings changed: resolved again; a new URL, token, model or agent makes what was known stale. */
  settingsChanged(change: Partial<GatewaySettings>, before: GatewaySettings): void {
    this.resolved = this.resolve();
    const names = ['gatewayUrl', 'gatewayToken', 'gatewayModel', 'gatewayAgent'] as const;
    if (names.some((name) => name in change && change[name] !== before[name])) this.watch.configure();
    if ('acceptedExposedAgent' in change) this.target.acceptanceChanged();
  }

  /** A chat call's outcome: the state follows it, and metrics count it. */
  called(outcome: GatewayOutcome): void {
    const { durationMs } = outcome;
    this.options.onCall({
      ok: outcome.ok,
      ...(outcome.ok ? {} : { problem: outcome.error.problem }),
      ...(durationMs === undefined ? {} : { durationMs }),
    });
    this.watch.called(outcome);
  }

  private resolve(): ResolvedGateway {
    const { gatewayUrl, gatewayToken, gatewayModel, gatewayAgent, gatewayTimeoutMs } =
      this.options.settings();
    // An explicit model wins (gateways that are not OpenClaw); else the agent for callers.
    const model = gatewayModel ?? agentModel(gatewayAgent);
    return resolveGatewayConfig(
      { url: gatewayUrl, token: gatewayToken, model, timeoutMs: gatewayTimeoutMs },
      this.options.env,
    );
  }
}
