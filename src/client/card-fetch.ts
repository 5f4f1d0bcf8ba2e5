import type { KeyObject } from 'node:crypto';
import { Ajv } from 'ajv';
import type { Dispatcher } from 'undici';
import addFormatsModule from 'ajv-formats';
import { cardSchema, normalizeAgentId, publicKeyFromRaw, type AgentCard } from '../protocol/index.js';
import { baseUrlFor, type BaseUrlOptions } from './base-url.js';
import { CardFetchError } from './errors.js';
import { BodyTooLargeError, readCapped } from '../lib/http.js';
import { fetchOrExplain } from './http.js';

// ajv-formats ships CommonJS: its default export arrives wrapped under ESM.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const validateCard = addFormats(new Ajv({ allErrors: true, strict: false })).compile<AgentCard>(cardSchema);

/** The same limits the agent applies to the cards it fetches: a hostile host cannot hang or flood us. */
export const CARD_TIMEOUT_MS = 5000;
export const CARD_MAX_BYTES = 64 * 1024;
const MAX_REDIRECTS = 3;
const DEFAULT_TTL_S = 300;

export interface CardFetchOptions extends BaseUrlOptions {
  /** The connection pool to fetch through, e.g. one that refuses private addresses. */
  dispatcher?: Dispatcher;
  /** Called before each request is sent (each redirect too); what it throws stops the fetch. */
  beforeRequest?: BeforeRequest;
}

/** Hears every HTTP request before it leaves (a per-minute cap counts them); throwing stops it. */
export type BeforeRequest = (request: { method: string; url: string }) => void;

/**
 * GET {base}/.well-known/agent.json with a 5 s timeout and a 64 KiB cap, following only redirects that
 * stay on the same origin (a redirect elsewhere would let a card fetch probe other hosts: SSRF), then
 * validates the card and checks it describes the agent that was asked for. Messages name the card's URL as
 * derived from the id asked for, never a URL, path, host or id the other host sent (a redirect's target is
 * on `redirectedTo`).
 */
export async function fetchCardFrom(agentId: string, options: CardFetchOptions = {}): Promise<AgentCard> {
  const fail = (message: string, cause?: unknown) => new CardFetchError(message, agentId, { cause });
  let base: string;
  try {
    base = baseUrlFor(agentId, options);
  } catch (error) {
    throw fail((error as Error).message);
  }
  const cardUrl = `${base}/.well-known/agent.json`;
  let url = cardUrl;
  const signal = AbortSignal.timeout(CARD_TIMEOUT_MS);
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    options.beforeRequest?.({ method: 'GET', url });
    let response: Response;
    try {
      const init = {
        redirect: 'manual',
        signal,
        headers: { accept: 'application/json' },
        ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
      } as RequestInit;
      // After a redirect the URL is the other host's choice (its path may be words): named as the card's URL.
      const shown = hop === 0 ? cardUrl : `${cardUrl} (after its redirect)`;
      response = await fetchOrExplain(url, init, CARD_TIMEOUT_MS, shown);
    } catch (error) {
      throw fail(`Could not fetch the card of ${agentId}: ${(error as Error).message}`, error);
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => undefined);
      let next: URL;
      try {
        next = new URL(response.headers.get('location') ?? '', url);
      } catch {
        throw fail(`${cardUrl} redirects to something that is not a URL`);
      }
      if (next.origin !== new URL(url).origin) {
        // Its host name is the other host's choice, words included: on the error, not in its message.
        throw new CardFetchError(
          `${cardUrl} redirects to another origin: a card must be served by the agent's own origin`,
          agentId,
          undefined,
          next.origin,
        );
      }
      url = next.href;
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw fail(`${cardUrl} answered HTTP ${response.status}: is ${agentId} a SAMVAD agent?`);
    }
    return parseCard(agentId, cardUrl, await readCard(response, cardUrl, fail));
  }
  throw fail(`${cardUrl}: more than ${MAX_REDIRECTS} redirects`);
}

async function readCard(
  response: Response,
  url: string,
  fail: (message: string, cause?: unknown) => CardFetchError,
): Promise<string> {
  try {
    return Buffer.from(await readCapped(response, CARD_MAX_BYTES)).toString('utf8');
  } catch (error) {
    const reason = error instanceof BodyTooLargeError ? error.message : 'reading it failed';
    throw fail(`Card at ${url} refused: ${reason}`, error);
  }
}

function parseCard(agentId: string, url: string, text: string): AgentCard {
  let card: unknown;
  try {
    card = JSON.parse(text);
  } catch {
    throw new CardFetchError(`${url} is not JSON`, agentId);
  }
  if (!validateCard(card)) {
    // Paths and rules of the project's own schema (never a value or a key the card holds).
    const reasons = (validateCard.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
    throw new CardFetchError(`${url} is not a valid agent card: ${reasons.slice(0, 3).join('; ')}`, agentId);
  }
  // A host may only speak for itself: a card naming another id is impersonation or a misconfiguration.
  if (normalizeAgentId(card.id) !== normalizeAgentId(agentId)) {
    throw new CardFetchError(`${url} describes another agent id, not ${agentId}`, agentId);
  }
  return card;
}

export interface CardCacheOptions extends CardFetchOptions {
  /** Cards kept at most; the least recently used goes first. Default CARD_CACHE_MAX_ENTRIES. */
  maxEntries?: number;
  now?: () => number;
}

/**
 * A card may weigh about three times its 64 KiB JSON once parsed (about 200 KB): 64 of them stay near
 * 13 MB, and the operator's agent calls a handful of agents within a card's lifetime, not dozens.
 */
export const CARD_CACHE_MAX_ENTRIES = 64;
/** The card's own cardTTL, within these bounds: 0 would fetch on every call, a day would miss a revocation. */
export const CARD_MIN_TTL_S = 10;
export const CARD_MAX_TTL_S = 3600;

interface CacheEntry {
  card: Promise<AgentCard>;
  /** Infinity while the fetch is in flight. */
  expires: number;
}

/**
 * Cards per agent id, kept for their cardTTL (clamped) and at most `maxEntries` of them, least recently used
 * out first: every id the operator's agent names would otherwise stay in memory for good (issue 15: the
 * process ran out of heap after about a thousand distinct lookups). Concurrent requests share one fetch.
 */
export class CardCache {
  private readonly entries = new Map<string, CacheEntry>();
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(private readonly options: CardCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? CARD_CACHE_MAX_ENTRIES;
    this.now = options.now ?? Date.now;
  }

  /** Cards held now, fetches in flight included. */
  get size(): number {
    return this.entries.size;
  }

  get(agentId: string, force = false): Promise<AgentCard> {
    const entry = this.entries.get(agentId);
    if (entry && !force && entry.expires > this.now()) {
      // Most recently used last: Map keeps insertion order, so the first key is the one to evict.
      this.entries.delete(agentId);
      this.entries.set(agentId, entry);
      return entry.card;
    }
    const card = fetchCardFrom(agentId, this.options);
    const fresh: CacheEntry = { card, expires: Number.POSITIVE_INFINITY };
    this.store(agentId, fresh);
    card.then(
      (c) => {
        const ttl = Math.min(Math.max(c.cardTTL ?? DEFAULT_TTL_S, CARD_MIN_TTL_S), CARD_MAX_TTL_S);
        fresh.expires = this.now() + ttl * 1000;
      },
      () => {
        // A failed fetch is not cached: the next call tries again.
        if (this.entries.get(agentId) === fresh) this.entries.delete(agentId);
      },
    );
    return card;
  }

  private store(agentId: string, entry: CacheEntry): void {
    this.entries.delete(agentId);
    const now = this.now();
    for (const [id, held] of this.entries) if (held.expires <= now) this.entries.delete(id);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    this.entries.set(agentId, entry);
  }

  /**
   * The public key a signature names, from the agent's card: re-fetched once when the kid is unknown
   * (the agent may have rotated keys since we cached its card). A string is the reason it failed.
   */
  async keyFor(agentId: string, kid: string): Promise<KeyObject | string> {
    let card = await this.get(agentId);
    if (!card.publicKeys.some((k) => k.kid === kid)) card = await this.get(agentId, true);
    const entry = card.publicKeys.find((k) => k.kid === kid);
    // The kid is the other agent's text: the reasons say "the key it names", never the kid itself.
    if (!entry) return `the key it names is not in the card of ${agentId}`;
    if (!entry.active) return `the key it names is inactive (revoked) in the card of ${agentId}`;
    return (
      publicKeyFromRaw(entry.key) ?? `the key it names in the card of ${agentId} is not a 32-byte Ed25519 key`
    );
  }
}
