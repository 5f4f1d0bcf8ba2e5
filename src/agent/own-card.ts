import { buildCard, type AgentCard, type PublicKeyEntry, type SkillDef } from '../protocol/index.js';
import type { SkillAudience } from '../protocol/skills.js';

/** The settings the card shows. */
export interface CardSettings {
  agentName: string;
  agentDescription: string;
  specializations: string[];
  rpm: number;
  perSender: number;
  tokensPerDay: number;
  cardTTL: number;
}

export interface OwnCardOptions {
  /** Where the agent is reached from outside: the card's `url`, and its id. */
  url(): string;
  settings(): CardSettings;
  /** The gateway model callers reach. */
  model(): string;
  skills: { definitions(): (SkillDef & { audience?: SkillAudience })[] };
  /** The signing keys, newest first; a change of them rebuilds the card. */
  keys: { publicKeys(): PublicKeyEntry[]; onChange(listener: () => void): unknown };
  version: string;
  now?: () => number;
  /** The card served changed (keys, URL, settings): told once per change. */
  onChange?(card: AgentCard): void;
}

/** Peers accept at most 32 keys on a card: the oldest retired keys drop off. */
const MAX_CARD_KEYS = 16;

/**
 * The agent's own SAMVAD card: built from settings, keys, skills and the public address, and kept for a
 * second (it is read on every envelope); `invalidate` rebuilds it at once after a change.
 */
export class OwnCard {
  private cached: { card: AgentCard; until: number } | undefined;
  private readonly now: () => number;

  constructor(private readonly options: OwnCardOptions) {
    this.now = options.now ?? Date.now;
    options.keys.onChange(() => this.invalidate());
  }

  /** The card as served now; rebuilt when invalidated, and each second for key expiry. */
  card(): AgentCard {
    const now = this.now();
    if (this.cached && this.cached.until > now) return this.cached.card;
    const settings = this.options.settings();
    const card = buildCard({
      url: this.options.url(),
      name: settings.agentName,
      version: this.options.version,
      description: settings.agentDescription,
      specializations: settings.specializations,
      models: [{ provider: 'openclaw', model: this.options.model() }],
      skills: this.options.skills.definitions().map(cardSkill),
      publicKeys: this.options.keys.publicKeys().slice(0, MAX_CARD_KEYS),
      rateLimit: {
        requestsPerMinute: settings.rpm,
        requestsPerSender: settings.perSender,
        tokensPerSenderPerDay: settings.tokensPerDay,
      },
      cardTTL: settings.cardTTL,
    });
    const changed = JSON.stringify(card) !== JSON.stringify(this.cached?.card);
    this.cached = { card, until: now + 1000 };
    if (changed) this.options.onChange?.(card);
    return card;
  }

  invalidate(): void {
    this.cached = undefined;
  }
}

/**
 * A skill as the card shows it. SAMVAD's trust tiers have no word for "senders the operator approved": a
 * skill open to approved or named callers only is `trusted-peers`, with no peers listed (who the operator
 * approved is theirs to know, not the card's); the pipeline checks its audience (calls/skill-access.ts).
 */
function cardSkill(skill: SkillDef & { audience?: SkillAudience }): SkillDef {
  if (skill.audience === undefined || skill.audience === 'public') return skill;
  return { ...skill, trust: 'trusted-peers', allowedPeers: [] };
}
