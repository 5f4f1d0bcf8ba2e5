/**
 * An A2A agent's card (`/.well-known/agent-card.json` of its origin), read with care: fetched through the
 * guarded fetch (64 KiB, same-origin redirects only), normalised by the A2A SDK's own card resolver (a v0.3
 * card translated), its JWS signatures checked against the key set its own origin publishes (signed and
 * verified, or unsigned; signed but not verified is refused), and cached for its max-age.
 */
import { AgentCard as AgentCardJson, canonicalizeAgentCard, type AgentCard } from '@a2a-js/sdk';
import { DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { isLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { createLocalJWKSet, decodeProtectedHeader, flattenedVerify, type JSONWebKeySet } from 'jose';
import { CARD_CACHE_MAX_ENTRIES, CARD_MAX_TTL_S, CARD_MIN_TTL_S } from '../client/index.js';
import { canonicalJson } from '../protocol/index.js';
import { originKey } from './a2a-credentials.js';
import { OutboundError, type A2AAgentRef } from './outbound-policy.js';

export const A2A_CARD_PATH = '/.well-known/agent-card.json';
const MAX_REDIRECTS = 3;
const MAX_SIGNATURES = 8;
// Asymmetric JWS algorithms only: an HMAC "signature" proves nothing to a reader who has the key too.
const ALGORITHMS = [
  'EdDSA',
  'Ed25519',
  'ES256',
  'ES384',
  'ES512',
  'PS256',
  'PS384',
  'PS512',
  'RS256',
  'RS384',
  'RS512',
];

/**
 * `verified`: a signature checks over the whole card; `partial`: only over the A2A SDK's own form of it,
 * which leaves its securitySchemes out (a2aproject/a2a-js#663): everything else is covered.
 */
export type CardSignature = 'verified' | 'partial' | 'unsigned';

export interface CheckedCard {
  /** The card as served (ProtoJSON, or v0.3 JSON): what the SDK's client factory is given. */
  raw: Record<string, unknown>;
  /** As the SDK's resolver reads it (v1.0 shapes; a v0.3 card translated). */
  card: AgentCard;
  /** Served in A2A v0.3's shape. */
  legacy: boolean;
  signature: CardSignature;
  /** The key that verified it (its `kid`, in the key set at `jku` on the agent's own origin), when signed. */
  signedBy?: { kid: string; jku: string };
  /** How long it may be used: its max-age, within bounds. */
  lifetimeMs: number;
}

/** Fetches a URL of the agent's through the call's guarded fetch (a2a-fetch.ts). */
export type CardFetch = (url: string, init?: RequestInit) => Promise<Response>;

/** GET the card, follow same-origin redirects, check it; an OutboundError in the bridge's words otherwise. */
export async function fetchCheckedCard(agent: A2AAgentRef, fetchUrl: CardFetch): Promise<CheckedCard> {
  const cardUrl = `${agent.origin}${A2A_CARD_PATH}`;
  const fail = (message: string) => new OutboundError('handler', 502, message);
  let url = cardUrl;
  for (let hop = 0; ; hop++) {
    const response = await fetchUrl(url, { headers: { 'A2A-Version': '1.0', Accept: 'application/json' } });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => undefined);
      let next: URL | undefined;
      try {
        next = new URL(response.headers.get('location') ?? '', url);
      } catch {
        next = undefined;
      }
      // Another origin could be anyone's: a card must come from the agent's own (SSRF, impersonation).
      if (!next || originKey(next) !== agent.origin) {
        throw fail(`${cardUrl} redirects elsewhere: a card must be served by the agent's own origin.`);
      }
      if (hop >= MAX_REDIRECTS) throw fail(`${cardUrl}: more than ${MAX_REDIRECTS} redirects.`);
      url = next.href;
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw fail(`${cardUrl} answered HTTP ${response.status}: is ${agent.origin} an A2A agent?`);
    }
    const raw = parseCard(await response.text(), cardUrl);
    const card = readCard(raw, cardUrl);
    const { signature, signedBy } = await checkSignatures(raw, agent, fetchUrl);
    const lifetimeMs = cardLifetimeMs(response.headers.get('cache-control'));
    return {
      raw,
      card,
      legacy: isLegacyAgentCard(raw),
      signature,
      ...(signedBy ? { signedBy } : {}),
      lifetimeMs,
    };
  }
}

function parseCard(text: string, cardUrl: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new OutboundError('handler', 502, `${cardUrl} is not JSON, so it is not an A2A agent card.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new OutboundError(
      'handler',
      502,
      `${cardUrl} is not a JSON object, so it is not an A2A agent card.`,
    );
  }
  return value as Record<string, unknown>;
}

const BINDINGS = new Set(['JSONRPC', 'HTTP+JSON']);

/** The card as the SDK's resolver reads it, with an interface the bridge can call. */
function readCard(raw: Record<string, unknown>, cardUrl: string): AgentCard {
  let card: AgentCard;
  try {
    card = new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }).normalizeAgentCard(raw);
  } catch {
    throw new OutboundError('handler', 502, `${cardUrl} is not an A2A agent card the A2A client can read.`);
  }
  const interfaces: unknown = card?.supportedInterfaces;
  const usable =
    Array.isArray(interfaces) &&
    interfaces.some((item: { protocolBinding?: unknown; url?: unknown } | null) => {
      const binding = typeof item?.protocolBinding === 'string' ? item.protocolBinding.toUpperCase() : '';
      return BINDINGS.has(binding) && typeof item?.url === 'string' && URL.canParse(item.url);
    });
  if (!usable) {
    throw new OutboundError(
      'handler',
      502,
      `${cardUrl} lists no interface the bridge can call (JSON-RPC or HTTP+JSON, A2A 1.0 or 0.3).`,
    );
  }
  return card;
}

interface SignatureEntry {
  protected: string;
  signature: string;
  header?: Record<string, unknown>;
}

/**
 * §8.4: a card may carry JWS signatures over its canonical form. The key comes from the key set (`jku`)
 * its own origin publishes: a key set elsewhere would let anyone sign anything. Canonical forms tried: the
 * spec's (ProtoJSON through the SDK's canonicalizeAgentCard), the card as served (v0.3 signers), and the
 * SDK's own object form (its #663: the one the SDK's signer makes when the card has security schemes).
 */
async function checkSignatures(
  raw: Record<string, unknown>,
  agent: A2AAgentRef,
  fetchUrl: CardFetch,
): Promise<Pick<CheckedCard, 'signature' | 'signedBy'>> {
  const list = Array.isArray(raw.signatures) ? (raw.signatures as unknown[]) : [];
  if (list.length === 0) return { signature: 'unsigned' };
  const forms = canonicalForms(raw);
  const keySets = new Map<string, Promise<ReturnType<typeof createLocalJWKSet> | undefined>>();
  let why = 'they are malformed';
  let partial: CheckedCard['signedBy'];
  for (const item of list.slice(0, MAX_SIGNATURES)) {
    const entry = signatureEntry(item);
    if (!entry) continue;
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(entry);
    } catch {
      continue;
    }
    const jku = typeof header.jku === 'string' && URL.canParse(header.jku) ? new URL(header.jku) : undefined;
    if (!jku || originKey(jku) !== agent.origin || typeof header.kid !== 'string') {
      why = `they name no key set (jku) on ${agent.origin} itself`;
      continue;
    }
    if (!keySets.has(jku.href)) keySets.set(jku.href, readKeySet(jku.href, fetchUrl));
    const keys = await keySets.get(jku.href);
    if (!keys) {
      why = `the key set its origin names could not be read as a JWKS`;
      continue;
    }
    why = `the key set ${agent.origin} publishes holds no key they verify with`;
    for (const form of forms) {
      if (form.partial && partial) continue;
      try {
        await flattenedVerify({ ...entry, payload: Buffer.from(form.payload).toString('base64url') }, keys, {
          algorithms: ALGORITHMS,
        });
      } catch {
        continue;
      }
      const signedBy = { kid: header.kid, jku: jku.href };
      if (!form.partial) return { signature: 'verified', signedBy };
      partial = signedBy;
    }
  }
  if (partial) return { signature: 'partial', signedBy: partial };
  throw new OutboundError(
    'handler',
    502,
    `The card of ${agent.origin} is signed, but none of its signatures verifies: ${why}. It was refused, ` +
      'nothing it says is shown, and nothing was sent to that agent.',
  );
}

function canonicalForms(raw: Record<string, unknown>): { payload: string; partial: boolean }[] {
  const forms: { payload: string; partial: boolean }[] = [];
  const add = (make: () => string, partial: boolean) => {
    try {
      forms.push({ payload: make(), partial });
    } catch {
      // A card the codec or JSON cannot write back (nested too deeply): that form cannot be checked.
    }
  };
  add(() => canonicalizeAgentCard(raw as unknown as AgentCard), false);
  add(() => {
    const { signatures: _signatures, ...rest } = raw;
    return canonicalJson(withoutEmpty(rest) ?? {});
  }, false);
  if (raw.securitySchemes !== undefined) add(() => canonicalizeAgentCard(AgentCardJson.fromJSON(raw)), true);
  return forms;
}

function signatureEntry(item: unknown): SignatureEntry | undefined {
  const entry = item as Partial<SignatureEntry> | null;
  if (typeof entry?.protected !== 'string' || typeof entry.signature !== 'string') return undefined;
  const header = entry.header;
  const ok =
    header === undefined || (typeof header === 'object' && header !== null && !Array.isArray(header));
  if (!ok) return undefined;
  return header
    ? { protected: entry.protected, signature: entry.signature, header }
    : { protected: entry.protected, signature: entry.signature };
}

async function readKeySet(url: string, fetchUrl: CardFetch) {
  const response = await fetchUrl(url, { headers: { Accept: 'application/json' } });
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  try {
    return createLocalJWKSet(JSON.parse(await response.text()) as JSONWebKeySet);
  } catch {
    return undefined;
  }
}

/** Empty strings, lists and objects left out at every depth, as A2A's canonical form does. */
function withoutEmpty(value: unknown): unknown {
  if (value === '' || value === null || value === undefined) return undefined;
  if (Array.isArray(value)) {
    const items = value.map(withoutEmpty).filter((item) => item !== undefined);
    return items.length ? items : undefined;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value)
      .map(([key, item]) => [key, withoutEmpty(item)] as const)
      .filter(([, item]) => item !== undefined);
    return entries.length ? Object.fromEntries(entries) : undefined;
  }
  return value;
}

/** The card's max-age within the SAMVAD cards' bounds: 0 would fetch on every call, a day miss new keys. */
function cardLifetimeMs(cacheControl: string | null): number {
  const maxAge = Number(/(?:^|,)\s*max-age=(\d{1,9})/i.exec(cacheControl ?? '')?.[1] ?? CARD_DEFAULT_TTL_S);
  return Math.min(Math.max(maxAge, CARD_MIN_TTL_S), CARD_MAX_TTL_S) * 1000;
}

const CARD_DEFAULT_TTL_S = 300;

/**
 * Checked cards by origin, each for its lifetime, at most CARD_CACHE_MAX_ENTRIES (the least recently used
 * goes first): a cached card costs no request. Only checked cards are kept; a failed fetch is tried again.
 */
export class A2ACardCache {
  private readonly entries = new Map<string, { card: CheckedCard; expires: number }>();

  constructor(private readonly now: () => number) {}

  get(origin: string): CheckedCard | undefined {
    const entry = this.entries.get(origin);
    if (!entry) return undefined;
    this.entries.delete(origin);
    if (entry.expires <= this.now()) return undefined;
    this.entries.set(origin, entry);
    return entry.card;
  }

  set(origin: string, card: CheckedCard): void {
    this.entries.delete(origin);
    while (this.entries.size >= CARD_CACHE_MAX_ENTRIES)
      this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(origin, { card, expires: this.now() + card.lifetimeMs });
  }
}
