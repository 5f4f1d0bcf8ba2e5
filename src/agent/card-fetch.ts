import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import {
  agentBaseUrl,
  cardSchema,
  isLoopbackHost,
  normalizeAgentId,
  type AgentCard,
} from '../protocol/index.js';
import { guardedLookup, isPublicAddress } from '../lib/address-policy.js';
import { BodyTooLargeError, lookupWithLocalhost, readCapped } from '../lib/http.js';

// ajv-formats ships CommonJS: its default export arrives wrapped under ESM.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const ajv = addFormats(new Ajv({ allErrors: false, strict: false }));
const validateCard = ajv.compile<AgentCard>(cardSchema);

export interface CardFetchOptions {
  /** Let loopback ids (127.x, localhost, *.localhost, [::1]) resolve over plain http: local testing only. */
  devHttpPeers: boolean;
  timeoutMs: number;
  maxBytes: number;
}

export const CARD_FETCH_DEFAULTS: CardFetchOptions = {
  devHttpPeers: false,
  timeoutMs: 5000,
  maxBytes: 64 * 1024,
};

export class CardFetchError extends Error {}

// Card fetches happen for requests not yet verified, so they must not reach the operator's own network
// (SSRF: an attacker naming agent://10.0.0.5:8443 or a name resolving to it); loopback only for dev peers.
function addressAllowed(address: string, allowLoopback: boolean): boolean {
  return isPublicAddress(address) || (allowLoopback && isLoopbackHost(address));
}

const resolveWithLocalhost = (hostname: string, family: number | undefined) =>
  new Promise<LookupAddress[]>((resolve, reject) =>
    lookupWithLocalhost(hostname, { all: true, family: family ?? 0 }, (error, found) =>
      error ? reject(error) : resolve(found as unknown as LookupAddress[]),
    ),
  );

const dispatchers = new Map<boolean, Agent>();
function dispatcherFor(allowLoopback: boolean): Agent {
  let dispatcher = dispatchers.get(allowLoopback);
  if (!dispatcher) {
    const lookup = guardedLookup((address) => addressAllowed(address, allowLoopback), resolveWithLocalhost);
    dispatcher = new Agent({ connect: { lookup }, keepAliveTimeout: 10_000 });
    dispatchers.set(allowLoopback, dispatcher);
  }
  return dispatcher;
}

// Names that never resolve to a public host (RFC 6761, RFC 6762, RFC 8375, and common private suffixes).
const PRIVATE_SUFFIXES = /\.(?:local|localdomain|internal|intranet|lan|home|corp|home\.arpa|invalid|onion)$/i;

/**
 * Why no card can be fetched for this id, without any network: not an id, a private or loopback address,
 * a single-label or private name. Undefined when a fetch may be tried. Checked before a fetch is charged to
 * the budget every new sender shares, so made-up ids cost nothing.
 */
export function unfetchableReason(agentId: string, devHttpPeers: boolean): string | undefined {
  const base = agentBaseUrl(agentId, devHttpPeers);
  if (!base)
    return `"${agentId.slice(0, 100)}" is not an agent:// id (agent://host, or agent://host:port with a port from 1 to 65535)`;
  const host = new URL(base).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return addressAllowed(host, devHttpPeers) ? undefined : `${host} is not a public address`;
  if (isLoopbackHost(host)) return devHttpPeers ? undefined : `${host} is a loopback name`;
  if (!host.includes('.') || /\.\d+$/.test(host)) return `${host} is not a public host name`;
  if (PRIVATE_SUFFIXES.test(host)) return `${host} is not a public host name`;
  return undefined;
}

/**
 * Fetches and validates a peer's card with hard limits, so a hostile sender cannot make us hang, read
 * an unbounded body, or follow a redirect to another host (SSRF through the card fetch).
 */
export async function fetchPeerCard(agentId: string, options: CardFetchOptions): Promise<AgentCard> {
  const unfetchable = unfetchableReason(agentId, options.devHttpPeers);
  if (unfetchable) throw new CardFetchError(unfetchable);
  const base = agentBaseUrl(agentId, options.devHttpPeers) as string;
  let url = `${base}/.well-known/agent.json`;
  const signal = AbortSignal.timeout(options.timeoutMs);
  for (let hop = 0; hop < 3; hop++) {
    let response: Response;
    try {
      response = await undiciFetch(url, {
        redirect: 'manual',
        signal,
        headers: { accept: 'application/json' },
        dispatcher: dispatcherFor(options.devHttpPeers),
      });
    } catch (error) {
      const reason = signal.aborted ? `no answer within ${options.timeoutMs} ms` : describeFetchError(error);
      throw new CardFetchError(`could not fetch ${url}: ${reason}`);
    }
    if (response.status >= 300 && response.status < 400) {
      const next = new URL(response.headers.get('location') ?? '', url);
      if (next.host !== new URL(url).host || next.protocol !== new URL(url).protocol) {
        throw new CardFetchError(
          `${url} redirects to another host (${next.host}); cards must be served by the agent's own host`,
        );
      }
      url = next.toString();
      continue;
    }
    if (!response.ok) throw new CardFetchError(`${url} answered HTTP ${response.status}`);
    let text: string;
    try {
      text = Buffer.from(await readCapped(response, options.maxBytes)).toString('utf8');
    } catch (error) {
      throw new CardFetchError(
        error instanceof BodyTooLargeError ? `${url}: ${error.message}` : `${url}: reading failed`,
      );
    }
    let card: unknown;
    try {
      card = JSON.parse(text);
    } catch {
      throw new CardFetchError(`${url} is not JSON`);
    }
    if (!validateCard(card)) {
      const first = validateCard.errors?.[0];
      throw new CardFetchError(
        `${url} is not a valid agent card (${first?.instancePath || '/'} ${first?.message ?? ''})`,
      );
    }
    if (normalizeAgentId(card.id) !== normalizeAgentId(agentId)) {
      // The id it names is the other host's text: not repeated here.
      throw new CardFetchError(`${url} describes another agent id, not ${agentId}`);
    }
    return card;
  }
  throw new CardFetchError(`${url}: too many redirects`);
}

function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
