import { A2A_PATHS, skillPaths } from '../a2a/agent-card.js';
import type { Skill } from '../agent/skill.js';
import type { SkillRegistry } from '../agent/skill-registry.js';
import type { SkillDirectory, SkillRuntime } from '../calls/skill-runtime.js';
import { createAgentSkill } from '../bridge/chat-skill.js';
import { attachmentRules } from '../calls/image-fetch.js';
import { gatewayError, type GatewayError } from '../bridge/diagnosis.js';
import { toolClassOfExposure } from '../bridge/exposure-class.js';
import type { GatewayLink } from '../bridge/gateway-link.js';
import { refusalOf } from '../bridge/gateway-target.js';
import { skillAcceptance, skillServing } from '../bridge/skill-rule.js';
import type { SkillView, SkillServing, SkillsResponse, StatusResponse } from '../protocol/console-api.js';
import { DEFAULT_SKILL } from '../protocol/skill-ids.js';
import { WIDEST_CLASS, type SkillSetting } from '../protocol/skills.js';
import type { Settings } from '../settings/schema.js';
import { SkillUsage } from './skill-usage.js';

export interface PublishedSkillsOptions {
  settings(): Settings;
  gateway: GatewayLink;
  /** SAMVAD's skills: `chat` is registered here, and the published ones kept in step with the setting. */
  registry: SkillRegistry;
  /** The agent's public address, when it has one (the skills' A2A cards are under it). */
  publicUrl(): string | undefined;
  /** Skills registered beside chat in code (tests cover the generic core with their own). */
  extra?: Skill[];
  now?: () => number;
}

/**
 * The skills the operator published (issue 27): `chat` on the restricted agent, and each skill of the
 * `skills` setting on its own agent. Kept in step with the setting (`sync`): SAMVAD's registry lists the
 * published ones (a paused or removed one is an unknown skill), the A2A door finds each by id (`get`), and
 * the console sees each one whole, served or not and why (`views`).
 */
export class PublishedSkills implements SkillDirectory {
  readonly usage: SkillUsage;
  private runtimes = new Map<string, { setting: SkillSetting; runtime: SkillRuntime }>();
  private readonly chat: SkillRuntime;

  constructor(private readonly options: PublishedSkillsOptions) {
    this.usage = new SkillUsage(options.now);
    const chat = options.gateway.chatSkill(options.settings, this.usage);
    options.registry.register(chat);
    for (const skill of options.extra ?? []) options.registry.register(skill);
    this.chat = {
      id: DEFAULT_SKILL,
      name: chat.name,
      description: chat.description,
      examples: [],
      audience: 'public',
      gateway: options.gateway.turn,
    };
    this.sync();
  }

  /**
   * Settings changed: each published skill registered as it is now, the others not at all; chat's trust
   * tier follows `chatTrust` (and `allowedPeers` under `trusted-peers`).
   */
  sync(): void {
    const { registry } = this.options;
    const { chatTrust, allowedPeers } = this.options.settings();
    registry.update(DEFAULT_SKILL, {
      trust: chatTrust,
      allowedPeers: chatTrust === 'trusted-peers' ? allowedPeers : undefined,
    });
    const next = new Map<string, { setting: SkillSetting; runtime: SkillRuntime }>();
    for (const setting of this.options.settings().skills) {
      if (setting.paused) continue;
      const kept = this.runtimes.get(setting.id);
      next.set(
        setting.id,
        kept && JSON.stringify(kept.setting) === JSON.stringify(setting) ? kept : this.build(setting),
      );
    }
    for (const [id, entry] of this.runtimes) {
      if (next.get(id) !== entry) registry.unregister(id);
    }
    for (const [id, entry] of next) {
      if (this.runtimes.get(id) !== entry) registry.register(this.samvadSkill(entry));
    }
    this.runtimes = next;
  }

  /** A skill's agent as it is now, its config file read afresh: what an edit is judged on (skill-edits.ts). */
  readonly targetNow = (setting: SkillSetting) => this.options.gateway.skillTargets.fresh(setting);

  /** Every skill there is, paused ones too: what a key's or an approval's scope may name. */
  ids(): string[] {
    return [DEFAULT_SKILL, ...this.options.settings().skills.map((skill) => skill.id)];
  }

  get(id: string): SkillRuntime | undefined {
    return id === DEFAULT_SKILL ? this.chat : this.runtimes.get(id)?.runtime;
  }

  published(): SkillRuntime[] {
    return [this.chat, ...[...this.runtimes.values()].map((entry) => entry.runtime)];
  }

  /** GET /api/skills: chat, then every skill of the setting (paused ones too), as it is now. */
  response(): SkillsResponse {
    const { perSender, tokensPerDay } = this.options.settings();
    return {
      skills: [this.chatView(), ...this.options.settings().skills.map((setting) => this.view(setting))],
      defaults: { requestsPerMinute: perSender, tokensPerDay },
    };
  }

  /** The Overview's line: skills published (chat included), how many are public, how many do not serve. */
  summary(): StatusResponse['skills'] {
    const views = this.response().skills.filter((view) => !view.setting.paused);
    return {
      published: views.length,
      public: views.filter((view) => view.setting.audience === 'public').length,
      notServing: views.filter((view) => !view.serving.serving).length,
    };
  }

  private build(setting: SkillSetting): { setting: SkillSetting; runtime: SkillRuntime } {
    const problem = () => this.problem(setting);
    return {
      setting,
      runtime: {
        id: setting.id,
        name: setting.name,
        description: setting.description,
        examples: [...setting.examples],
        audience: setting.audience,
        limits: { ...setting.limits },
        gateway: this.options.gateway.skillTurn(setting.agent, problem),
        framing: { id: setting.id, name: setting.name, description: setting.description },
      },
    };
  }

  private samvadSkill({ setting, runtime }: { setting: SkillSetting; runtime: SkillRuntime }): Skill {
    const settings = () => this.options.settings();
    return createAgentSkill(setting, {
      ...runtime.gateway,
      defaultChannel: () => settings().defaultChannel,
      callerInstructions: () => settings().callerInstructions,
      attachments: () => attachmentRules(settings()),
      usage: this.usage,
    }) as Skill;
  }

  /** Why a call to this skill must not be forwarded now (its serving rule), for the caller and the log. */
  private problem(setting: SkillSetting): GatewayError | undefined {
    const serving = skillServing(setting, this.options.gateway.skillTargets.target(setting));
    if (serving.serving) return undefined;
    return gatewayError('skill-unavailable', { agentId: setting.agent, detail: serving.message });
  }

  private view(setting: SkillSetting): SkillView {
    const target = this.options.gateway.skillTargets.target(setting);
    const acceptance = skillAcceptance(setting, target.tools);
    return {
      setting: structuredClone(setting),
      builtIn: false,
      agent: target.agent,
      tools: target.tools,
      widest: WIDEST_CLASS[setting.audience],
      ...(acceptance ? { acceptance } : {}),
      serving: skillServing(setting, target),
      limits: this.limits(setting),
      today: this.usage.today(setting.id),
      a2aCardUrl: this.cardUrl(setting.paused ? undefined : skillPaths(setting.id).card),
    };
  }

  /** Chat as the Skills page shows it: its agent and rule are the Overview's (GatewayTarget). */
  private chatView(): SkillView {
    const { gateway } = this.options;
    const view = gateway.target.view;
    const agent = view.id ?? view.model;
    const setting: SkillSetting = {
      id: DEFAULT_SKILL,
      name: this.chat.name,
      description: this.chat.description,
      examples: [],
      agent,
      audience: 'public',
      limits: {},
      paused: false,
    };
    const accepted = this.options.settings().acceptedExposedAgent;
    if (accepted?.agent === agent) setting.accepted = { tools: [...accepted.tools], at: accepted.at };
    const notLoaded = view.tools.verdict === 'unknown' ? view.tools.notLoaded : undefined;
    return {
      setting,
      builtIn: true,
      agent: {
        agent,
        model: view.model,
        check: view.check === 'skipped' ? 'unknown' : view.check,
        ...(view.checkedAt ? { checkedAt: view.checkedAt } : {}),
        ...(view.available ? { available: view.available } : {}),
        ...(view.detail ? { detail: view.detail } : {}),
        ...(notLoaded ? { notLoaded } : {}),
      },
      tools: toolClassOfExposure(view.tools),
      widest: WIDEST_CLASS.public,
      ...(view.acceptance ? { acceptance: view.acceptance } : {}),
      serving: this.chatServing(),
      limits: this.limits(setting),
      today: this.usage.today(DEFAULT_SKILL),
      a2aCardUrl: this.cardUrl(A2A_PATHS.card),
    };
  }

  /**
   * Chat keeps the rule it always had (the Overview's): a restricted agent serves everyone the policy
   * admits, and an agent with host tools the operator accepted there serves too.
   */
  private chatServing(): SkillServing {
    const { target } = this.options.gateway;
    const refusal = refusalOf(target.view);
    const problem = target.problem();
    if (!refusal || !problem) return { serving: true };
    const reason =
      refusal.problem === 'agent-missing'
        ? 'agent-missing'
        : refusal.problem === 'agent-unverified'
          ? 'unverified'
          : target.view.acceptance?.state === 'changed'
            ? 'tools-changed'
            : 'acceptance-needed';
    return { serving: false, reason, message: problem.diagnosis, fix: problem.fix };
  }

  private limits(setting: SkillSetting): SkillView['limits'] {
    const { perSender, tokensPerDay } = this.options.settings();
    return {
      requestsPerMinute: setting.limits.requestsPerMinute ?? perSender,
      tokensPerDay: setting.limits.tokensPerDay ?? tokensPerDay,
    };
  }

  private cardUrl(path: string | undefined): string | null {
    const base = this.options.publicUrl();
    return base === undefined || path === undefined ? null : `${base}${path}`;
  }
}
