import type { AcceptedExposedAgent, GatewayAgentView } from '../protocol/console-api.js';
import type { SkillSetting } from '../protocol/skills.js';
import { createChatSkill, type ChatResult, type GatewayOutcome, type SkillUsageSink } from './chat-skill.js';
import type { Skill } from '../agent/skill.js';
import type { GatewayError, GatewayProblem } from './diagnosis.js';
import type { ClassifyAgentTools } from './exposure-class.js';
import { SkillTargets } from './skill-targets.js';
import { openclawConfigPath, resolveGatewayConfig, type ResolvedGateway } from './gateway-config.js';
import type { GatewayTransition } from './gateway-state.js';
import { GatewayTarget, agentModel } from './gateway-target.js';
import type { GatewayTurnOptions } from './gateway-turn.js';
import { GatewayWatch } from './gateway-watch.js';
import { attachmentRules, type FileSettings } from '../calls/image-fetch.js';
import { OpenClawFileWatch } from './openclaw-file-watch.js';

/** A skill's own refusals: what they say is the skill's, not the gateway's (its state is not told). */
const SKILL_PROBLEMS: GatewayProblem[] = ['skill-unavailable', 'agent-missing', 'agent-unverified'];

/** The settings that say which gateway, and which agent on it, callers reach. */
export interface GatewaySettings {
  gatewayUrl?: string;
  gatewayToken?: string;
  gatewayModel?: string;
  gatewayAgent: string;
  gatewayTimeoutMs?: number;
  acceptedExposedAgent?: AcceptedExposedAgent;
  /** The skills published beside chat: their agents are checked too (skill-targets.ts). */
  skills?: SkillSetting[];
}

/** The settings the chat skill reads. */
export interface ChatSkillSettings extends FileSettings {
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
  /** The classifier of the skills' agents (tool-class.ts); until it is merged, the exposure check's class. */
  classify?: ClassifyAgentTools;
  /** What a skill's agent is seen to be changed. */
  onSkills?(): void;
}

/**
 * The operator's gateway as the bridge uses it: where it is and with which token (settings, the
 * environment, OpenClaw's config), the agent callers reach on it (GatewayTarget), and its one state
 * (GatewayWatch), fed by probes and by every chat call.
 */
export class GatewayLink {
  readonly target: GatewayTarget;
  /** The agents of the published skills, checked with the chat agent's. */
  readonly skillTargets: SkillTargets;
  readonly watch: GatewayWatch;
  /** One gateway turn for both front doors: the restricted-agent rule, the call, its outcome. */
  readonly turn: GatewayTurnOptions;
  /** OpenClaw's config file, watched once it is read: an edit counts from the next look, and is probed. */
  private readonly file: OpenClawFileWatch;
  private resolved: ResolvedGateway;

  constructor(private readonly options: GatewayLinkOptions) {
    this.resolved = this.resolve();
    this.file = new OpenClawFileWatch({
      path: openclawConfigPath(options.env),
      onEdit: () => this.watch.edited(),
    });
    const fileVersion = () => this.file.version();
    this.target = new GatewayTarget({
      gateway: () => this.resolved,
      agentId: () => options.settings().gatewayAgent,
      explicitModel: () => options.settings().gatewayModel,
      configPath: () => openclawConfigPath(options.env),
      accepted: () => options.settings().acceptedExposedAgent,
      fileVersion,
      now: options.now,
      onChange: options.onAgent,
    });
    this.skillTargets = new SkillTargets({
      gateway: () => this.resolved,
      configPath: () => openclawConfigPath(options.env),
      // The chat agent's check asks for the list anyway: one GET /v1/models serves both.
      listing: async () => {
        await this.target.refresh();
        return this.target.lastListing;
      },
      skills: () => options.settings().skills ?? [],
      fileVersion,
      classify: options.classify,
      now: options.now,
      onChange: () => options.onSkills?.(),
    });
    this.watch = new GatewayWatch({
      gateway: () => this.resolved,
      target: this.target,
      skills: this.skillTargets,
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
  chatSkill(settings: () => ChatSkillSettings, usage?: SkillUsageSink): Skill<ChatResult> {
    const { chatTrust, allowedPeers } = settings();
    return createChatSkill({
      ...this.turn,
      defaultChannel: () => settings().defaultChannel,
      callerInstructions: () => settings().callerInstructions,
      attachments: () => attachmentRules(settings()),
      trust: chatTrust,
      allowedPeers,
      ...(usage ? { usage } : {}),
    });
  }

  /**
   * The gateway turn of a skill on `agent`: the same gateway, `model: openclaw/<agent>`, refused while
   * `problem` says so (its serving rule). Its outcomes tell the gateway's state what they say of the gateway,
   * not of the skill: an agent it does not know makes the skills' check look again, not the chat agent's.
   */
  skillTurn(agent: string, problem: () => GatewayError | undefined): GatewayTurnOptions {
    const model = agentModel(agent);
    let from: ResolvedGateway | undefined;
    let resolved: ResolvedGateway | undefined;
    return {
      gateway: () => {
        if (from !== this.resolved || !resolved) {
          from = this.resolved;
          resolved = { ...from, config: { ...from.config, model } };
        }
        return resolved;
      },
      targetProblem: problem,
      onGatewayOutcome: (outcome) => {
        const kind = outcome.ok ? undefined : outcome.error.problem;
        if (kind === 'agent-unknown') this.skillTargets.noteUnknownAgent();
        else if (!kind || !SKILL_PROBLEMS.includes(kind)) this.called(outcome);
      },
    };
  }

  /** Stops probing and watching the config file. */
  stop(): void {
    this.watch.stop();
    this.file.close();
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
    if ('skills' in change) void this.skillTargets.refresh();
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
