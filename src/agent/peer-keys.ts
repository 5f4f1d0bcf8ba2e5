import { addressBucketOf } from './client-address.js';
import type { KeyObject } from 'node:crypto';
import {
  ProtocolError,
  authFailed,
  normalizeAgentId,
  publicKeyFromRaw,
  type AgentCard,
} from '../protocol/index.js';
import { oneLine } from '../lib/text.js';
import {
  CARD_FETCH_DEFAULTS,
  fetchPeerCard,
  unfetchableReason,
  type CardFetchOptions,
} from './card-fetch.js';
import { ExpiringLru } from '../lib/expiring-lru.js';
import { RateLimiter } from '../state/rate-limits.js';

export interface ResolvedKey {
  key: KeyObject;
  /** Where the key came from, for the operator's log. */
  source: 'pinned' | 'self' | 'card';
  /** The raw public key (base64), as a card lists it: what an approval is bound to. Absent for our own. */
  raw?: string;
}

/** Every active key of an agent, for a signature that names no kid (a delegation token, PROTOCOL.md §9). */
export interface ActiveKeys {
  /** A pinned key has no kid: it stands for whatever kid a signature names. */
  keys: { kid?: string; key: KeyObject }[];
  source: ResolvedKey['source'];
  /** The keys come from a card cached before this call: it may predate a rotation. */
  cached: boolean;
}

/** What a sender's card (or pinned key) says of it: its self-declared text and the keys it signs with. */
export interface SenderCard {
  name?: string;
  description?: string;
  /** The raw public keys (base64) it lists as active: the ones a call signed by an approved key announces. */
  activeKeys: string[];
}

/** Where a request came from, for the per-address card-fetch budget. */
export interface CallerAddress {
  address: string;
  /** The first X-Forwarded-For hop: behind a loopback tunnel every caller shares the socket's address. */
  forwardedFor?: string;
}

export interface PeerKeyOptions extends Partial<CardFetchOptions> {
  /** Operator-pinned keys (`--trust-peer agent://x=KEY`): no card is fetched for these senders. */
  pinned?: Record<string, string>;
  /** Our own id(s) resolve to our own keystore. */
  self?: {
    isOwnId(id: string): boolean;
    key(kid: string): { key: KeyObject; active: boolean } | undefined;
    /** Every kid of our keystore (active or not), for signatures that name no kid. */
    kids?(): string[];
  };
  now?: () => number;
  /** How long a failed card fetch is remembered, so a dead peer does not cost a fetch per request. */
  negativeTtlMs?: number;
  /** Clamp of the sender's cardTTL, so a zero TTL cannot force a fetch per request. */
  minTtlMs?: number;
  maxTtlMs?: number;
  /** Senders remembered at most (cards, failed fetches, re-fetch times, senders fetched before). */
  maxEntries?: number;
  /** What the cached cards may weigh together, estimated (cardWeight); least recently used out first. */
  maxCardBytes?: number;
  /** Card fetches per minute, all senders: requests are unauthenticated until their card is known. */
  fetchesPerMinute?: number;
  /**
   * The share of that budget new senders may use; the rest is kept for senders whose card was fetched
   * before (a refresh after its TTL, a rotated key), so a flood of new ids cannot lock them out.
   */
  newSenderShare?: number;
  /** Card fetches per minute caused by one caller address (new senders and refreshes alike). */
  fetchesPerAddressPerMinute?: number;
  /**
   * Senders the operator approved or allows (allowedPeers): their expired cards are fetched from a reserve
   * of their own, which strangers cannot spend, before the budgets everyone shares.
   */
  trusted?: (sender: string) => boolean;
  /** That reserve: fetches of trusted senders' cards per minute, on top of `fetchesPerMinute`. */
  trustedFetchesPerMinute?: number;
  /** A sender's card is fetched again for an unknown kid at most this often. */
  refetchIntervalMs?: number;
  fetchCard?: (agentId: string, options: CardFetchOptions) => Promise<AgentCard>;
}

interface CacheEntry {
  /** Raw keys as the card lists them; key objects are made only for kids that are used (memory). */
  keys: Map<string, { raw: string; active: boolean; object?: KeyObject | null }>;
  /** The card's own words about itself (unverified), cut to one short line each. */
  name?: string;
  description?: string;
  /** The card as `describe` gives it, made once per fetch (the access check asks on every call). */
  described?: SenderCard;
}

/**
 * A card fetch costs a stranger nothing but the shared budget: new senders may cause 480 of its 600 fetches a
 * minute, and a card may list 32 keys with 256-character kids (about 16 KB in memory, 10,000 such cards 160
 * MB). So the cache is bounded by weight: 8 MiB holds about 5,000 ordinary cards, or about 340 of the largest.
 * A flood of those at the whole budget replaces them in about 40 s: a sender called less often than that may
 * be evicted, and then pays one re-fetch from the share kept for senders fetched before, never a refusal.
 */
export const PEER_CARD_BYTES = 8 * 1024 * 1024;

/** Sender key resolution of PROTOCOL.md §3: pinned keys, our own keystore, then cached peer cards. */
export class PeerKeyResolver {
  /** Cards until their cardTTL (clamped), least recently used out first (issue 16: they outlived it). */
  private readonly cards: ExpiringLru<CacheEntry>;
  private readonly failures = new Map<string, { reason: string; until: number }>();
  private readonly inflight = new Map<string, Promise<CacheEntry>>();
  private readonly refetchedAt = new Map<string, number>();
  private readonly fetchBudget: RateLimiter;
  private readonly newSenderBudget: RateLimiter;
  private readonly addressBudget: RateLimiter;
  private readonly trustedBudget: RateLimiter;
  /** Senders whose card was fetched before (bounded, oldest first out): they draw on the reserved share. */
  private readonly known = new Map<string, true>();
  private pinned = new Map<string, KeyObject>();
  private pinnedRaw = new Map<string, string>();
  /** What `describe` gives for a pinned sender, made once per setting (the access check asks every call). */
  private pinnedCards = new Map<string, SenderCard>();
  private readonly options: Required<Omit<PeerKeyOptions, 'pinned' | 'self' | 'trusted'>> &
    Pick<PeerKeyOptions, 'self' | 'trusted'>;

  constructor(options: PeerKeyOptions = {}) {
    this.options = {
      ...CARD_FETCH_DEFAULTS,
      now: Date.now,
      negativeTtlMs: 30_000,
      minTtlMs: 10_000,
      maxTtlMs: 24 * 3600_000,
      maxEntries: 10_000,
      maxCardBytes: PEER_CARD_BYTES,
      fetchesPerMinute: 600,
      newSenderShare: 0.8,
      fetchesPerAddressPerMinute: 60,
      trustedFetchesPerMinute: 120,
      refetchIntervalMs: 10_000,
      fetchCard: fetchPeerCard,
      ...stripUndefined(options),
    };
    const { fetchesPerMinute, newSenderShare, now, maxEntries, maxCardBytes } = this.options;
    this.cards = new ExpiringLru({ maxEntries, maxWeight: maxCardBytes, now });
    this.fetchBudget = new RateLimiter(fetchesPerMinute, now);
    this.newSenderBudget = new RateLimiter(Math.max(1, Math.floor(fetchesPerMinute * newSenderShare)), now);
    this.addressBudget = new RateLimiter(this.options.fetchesPerAddressPerMinute, now);
    this.trustedBudget = new RateLimiter(this.options.trustedFetchesPerMinute, now);
    this.setPinned(options.pinned ?? {});
  }

  /**
   * Senders are looked up in their one spelling (normalizeAgentId), so the pinned ids are too: a pin written
   * agent://LocalHost:PORT must not be silently skipped for agent://localhost:PORT (issue 15, finding 8).
   */
  setPinned(pinned: Record<string, string>): void {
    const keys = new Map<string, KeyObject>();
    const raws = new Map<string, string>();
    for (const [written, raw] of Object.entries(pinned)) {
      const id = normalizeAgentId(written);
      const key = publicKeyFromRaw(raw);
      if (!key) throw new Error(`Pinned key for ${written} is not a base64 32-byte Ed25519 public key`);
      if (raws.has(id) && raws.get(id) !== raw)
        throw new Error(
          `${id} is pinned twice with different keys (as ${written} too): keep the one you mean`,
        );
      keys.set(id, key);
      raws.set(id, raw);
    }
    this.pinned = keys;
    this.pinnedRaw = raws;
    this.pinnedCards = new Map([...raws].map(([id, raw]) => [id, { activeKeys: [raw] }]));
  }

  setDevHttpPeers(on: boolean): void {
    this.options.devHttpPeers = on;
  }

  /** Resolves the active key `kid` of `sender`, or throws AUTH_FAILED saying why. */
  async resolve(sender: string, kid: string, caller?: CallerAddress): Promise<ResolvedKey> {
    const pinned = this.pinned.get(sender);
    if (pinned) return { key: pinned, source: 'pinned', raw: this.pinnedRaw.get(sender) };

    const self = this.options.self;
    if (self?.isOwnId(sender)) {
      const own = self.key(kid);
      if (!own) throw authFailed(`Unknown key id "${kid}" for ${sender}.`);
      if (!own.active)
        throw authFailed(`Key "${kid}" of ${sender} is no longer active; sign with an active key.`);
      return { key: own.key, source: 'self' };
    }

    const cached = this.cards.get(sender);
    let entry = await this.card(sender, caller);
    // A card fetched just now for this very request is fresh: only a cached one may be out of date.
    if (!entry.keys.has(kid) && entry === cached && this.mayRefetch(sender)) {
      // The sender may have rotated since we cached its card: look once more. A failed look keeps the
      // card we had, so a forced re-fetch cannot lock a genuine sender out.
      entry = await this.refetch(sender, entry, caller);
    }
    const found = entry.keys.get(kid);
    if (!found) throw authFailed(`Unknown key id "${kid}": it is not in ${sender}'s card.`);
    if (found.object === undefined) found.object = publicKeyFromRaw(found.raw);
    if (!found.active || !found.object) {
      throw authFailed(`Key "${kid}" of ${sender} is inactive in its card; sign with an active key.`);
    }
    return { key: found.object, source: 'card', raw: found.raw };
  }

  /**
   * Every active key of `agentId`, resolved as a sender's key is (pinned, our own keystore, or its card,
   * with the same cache, failure memory and fetch budgets); throws AUTH_FAILED when the card cannot be had.
   * `refresh`: the cached card's keys did not verify, so fetch it again (rotation), as for an unknown kid.
   */
  async activeKeys(agentId: string, caller?: CallerAddress, refresh = false): Promise<ActiveKeys> {
    const pinned = this.pinned.get(agentId);
    if (pinned) return { keys: [{ key: pinned }], source: 'pinned', cached: false };

    const self = this.options.self;
    if (self?.isOwnId(agentId)) {
      const keys = (self.kids?.() ?? []).flatMap((kid) => {
        const own = self.key(kid);
        return own?.active ? [{ kid, key: own.key }] : [];
      });
      return { keys, source: 'self', cached: false };
    }

    const cached = this.cards.get(agentId);
    let entry = await this.card(agentId, caller);
    if (refresh && entry === cached && this.mayRefetch(agentId)) {
      entry = await this.refetch(agentId, entry, caller);
    }
    const keys: ActiveKeys['keys'] = [];
    for (const [kid, found] of entry.keys) {
      if (!found.active) continue;
      if (found.object === undefined) found.object = publicKeyFromRaw(found.raw);
      if (found.object) keys.push({ kid, key: found.object });
    }
    return { keys, source: 'card', cached: entry === cached };
  }

  /** Cards held now. */
  get cachedCards(): number {
    return this.cards.size;
  }

  /** What the sender's cached card says about itself (self-declared text), when its card was fetched. */
  describe(sender: string): SenderCard | undefined {
    const pinned = this.pinnedCards.get(sender);
    if (pinned) return pinned;
    // Asked right after the call's signature was checked against this card: not a second use.
    const entry = this.cards.peek(sender);
    if (!entry) return undefined;
    entry.described ??= {
      name: entry.name,
      description: entry.description,
      activeKeys: [...entry.keys.values()].filter((k) => k.active).map((k) => k.raw),
    };
    return entry.described;
  }

  // A forced re-fetch per sender at most every refetchIntervalMs.
  private mayRefetch(sender: string): boolean {
    const now = this.options.now();
    const last = this.refetchedAt.get(sender);
    if (last !== undefined && now - last < this.options.refetchIntervalMs) return false;
    this.remember(this.refetchedAt, sender, now);
    return true;
  }

  private async refetch(sender: string, previous: CacheEntry, caller?: CallerAddress): Promise<CacheEntry> {
    try {
      return await this.shared(sender, () => this.load(sender, false, caller));
    } catch {
      return previous;
    }
  }

  private async card(sender: string, caller?: CallerAddress): Promise<CacheEntry> {
    const cached = this.cards.get(sender);
    if (cached) return cached;
    const failure = this.failures.get(sender);
    if (failure && failure.until > this.options.now()) throw unknownSender(sender, failure.reason);
    return this.shared(sender, () => this.load(sender, true, caller));
  }

  /** One fetch per sender at a time; concurrent requests share it. */
  private shared(sender: string, load: () => Promise<CacheEntry>): Promise<CacheEntry> {
    let pending = this.inflight.get(sender);
    if (!pending) {
      pending = load().finally(() => this.inflight.delete(sender));
      this.inflight.set(sender, pending);
    }
    return pending;
  }

  private async load(sender: string, rememberFailure: boolean, caller?: CallerAddress): Promise<CacheEntry> {
    // An id no card can be fetched for costs nothing: refused before any budget is charged.
    const unfetchable = unfetchableReason(sender, this.options.devHttpPeers);
    if (unfetchable) throw unknownSender(sender, unfetchable);
    this.chargeFetch(sender, caller, !rememberFailure);
    let card: AgentCard;
    try {
      card = await this.options.fetchCard(sender, this.options);
    } catch (error) {
      const reason = (error as Error).message;
      if (rememberFailure) {
        this.remember(this.failures, sender, {
          reason,
          until: this.options.now() + this.options.negativeTtlMs,
        });
      }
      throw unknownSender(sender, reason);
    }
    this.failures.delete(sender);
    this.remember(this.known, sender, true);
    const ttl = Math.min(
      Math.max((card.cardTTL ?? 300) * 1000, this.options.minTtlMs),
      this.options.maxTtlMs,
    );
    const keys = new Map(card.publicKeys.map((k) => [k.kid, { raw: k.key, active: k.active }]));
    const entry: CacheEntry = {
      keys,
      name: oneLine(card.name, 100),
      description: oneLine(card.description, 300),
    };
    this.cards.set(sender, entry, this.options.now() + ttl, cardWeight(sender, card));
    return entry;
  }

  /**
   * Every fetch is on behalf of a request not yet verified, so budgets bound the work: all fetches, new
   * senders' share of them, and new senders per caller address. Both checked before either counts. A
   * trusted sender's expired card comes from its own reserve first (review of issue 15: strangers spent
   * the shared budgets, and an approved sender was refused); a forced re-fetch for an unknown kid does not,
   * since anyone may send one in a trusted sender's name (one per sender every refetchIntervalMs).
   */
  private chargeFetch(sender: string, caller: CallerAddress | undefined, refetch: boolean): void {
    if (!refetch && this.options.trusted?.(sender) && this.trustedBudget.wait('*') === 0) {
      this.trustedBudget.take('*');
      return;
    }
    const isNew = !this.known.has(sender);
    const address = caller ? addressBucketOf(caller.address, caller.forwardedFor) : undefined;
    const waits = [
      this.fetchBudget.wait('*'),
      isNew ? this.newSenderBudget.wait('*') : 0,
      address ? this.addressBudget.wait(address) : 0,
    ];
    const wait = Math.max(...waits);
    if (wait > 0) {
      throw new ProtocolError(
        'AGENT_UNAVAILABLE',
        503,
        `Too many unknown senders right now; retry in ${wait} s.`,
        { step: 'signature', retryAfterSeconds: wait },
      );
    }
    this.fetchBudget.take('*');
    if (isNew) this.newSenderBudget.take('*');
    // Refreshes of known senders too: many known ids behind one address cannot spend the reserved share.
    if (address) this.addressBudget.take(address);
  }

  /** Forgets expired cards, failures and re-fetch times, and old per-address counts (with the other sweeps). */
  sweep(): void {
    this.cards.sweep();
    const now = this.options.now();
    for (const [sender, failure] of this.failures) if (failure.until <= now) this.failures.delete(sender);
    for (const [sender, at] of this.refetchedAt)
      if (now - at >= this.options.refetchIntervalMs) this.refetchedAt.delete(sender);
    this.addressBudget.sweep();
  }

  // Bounded maps: the oldest entry goes first (Map keeps insertion order).
  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    if (map.size >= this.options.maxEntries) {
      const oldest = map.keys().next().value;
      if (oldest !== undefined) map.delete(oldest);
    }
    map.set(key, value);
  }
}

/**
 * What a cached card holds, in bytes, erring high: the strings it keeps at two bytes a character, and a
 * fixed cost per key and per card (measured: 32 keys with 256-character kids held about 16 KB; this says 24).
 */
function cardWeight(sender: string, card: AgentCard): number {
  let bytes = 1000 + 2 * (sender.length + card.name.length + card.description.length);
  for (const { kid, key } of card.publicKeys) bytes += 100 + 2 * (kid.length + key.length);
  return bytes;
}

/**
 * The caller learns that the card could not be fetched, not why: the low-level reason (refused, TLS error,
 * HTTP status) would make the agent a scanner of the operator's network. The reason goes to the log.
 */
function unknownSender(sender: string, reason: string) {
  return new ProtocolError(
    'AUTH_FAILED',
    401,
    `Cannot verify ${sender}: its card could not be fetched. Serve a valid card at ` +
      `https://<host>/.well-known/agent.json, or ask the operator to pin your key.`,
    { step: 'signature', cause: new Error(`card fetch for ${sender} failed: ${reason}`) },
  );
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
