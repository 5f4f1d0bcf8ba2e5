import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { agentHost, cardSchema, type AgentCard } from '../protocol/index.js';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, fetch as undiciFetch, type Response } from 'undici';
import { lookupWithLocalhost } from '../lib/http.js';
import { isPublicAddress } from './address-policy.js';

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

export function isLoopbackHost(host: string): boolean {
  const name = host.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return (
    name === 'localhost' || name.endsWith('.localhost') || name === '::1' || /^127\.\d+\.\d+\.\d+$/.test(name)
  );
}

/**
 * Card fetches happen for requests not yet verified, so they must not reach the operator's own network
 * (SSRF: an attacker naming agent://10.0.0.5:8443 or a name resolving to it). Every resolved address is
 * checked and the connection uses exactly the checked ones; loopback is allowed only for dev http peers.
 */
function guardedLookup(allowLoopback: boolean): LookupFunction {
  return (hostname, options, callback) => {
    lookupWithLocalhost(hostname, { ...options, all: true }, (error, found) => {
      if (error) return callback(error, '', 0);
      const addresses = found as unknown as { address: string; family: number }[];
      const refused = addresses.find((a) => !addressAllowed(a.address, allowLoopback));
      if (refused)
        return callback(
          Object.assign(new Error(`${hostname} resolves to a non-public address`), { code: 'ENOTPUBLIC' }),
          '',
          0,
        );
      if (options.all)
        return (callback as unknown as (e: null, a: typeof addresses) => void)(null, addresses);
      const first = addresses[0];
      return first
        ? callback(null, first.address, first.family)
        : callback(new Error(`${hostname} has no address`), '', 0);
    });
  };
}

function addressAllowed(address: string, allowLoopback: boolean): boolean {
  return isPublicAddress(address) || (allowLoopback && isLoopbackHost(address));
}

const dispatchers = new Map<boolean, Agent>();
function dispatcherFor(allowLoopback: boolean): Agent {
  let dispatcher = dispatchers.get(allowLoopback);
  if (!dispatcher) {
    dispatcher = new Agent({ connect: { lookup: guardedLookup(allowLoopback) }, keepAliveTimeout: 10_000 });
    dispatchers.set(allowLoopback, dispatcher);
  }
  return dispatcher;
}

/** The base URL an agent id maps to (PROTOCOL.md §1), or null when it is not an agent id. */
export function baseUrlFor(agentId: string, devHttpPeers: boolean): string | null {
  const host = agentHost(agentId);
  if (!host) return null;
  const scheme = devHttpPeers && isLoopbackHost(host) ? 'http' : 'https';
  return `${scheme}://${host}`;
}

/**
 * Fetches and validates a peer's card with hard limits, so a hostile sender cannot make us hang, read
 * an unbounded body, or follow a redirect to another host (SSRF through the card fetch).
 */
export async function fetchPeerCard(agentId: string, options: CardFetchOptions): Promise<AgentCard> {
  const base = baseUrlFor(agentId, options.devHttpPeers);
  if (!base) throw new CardFetchError(`"${agentId}" is not an agent:// id`);
  const literal = new URL(base).hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal) && !addressAllowed(literal, options.devHttpPeers)) {
    throw new CardFetchError(`${literal} is not a public address`);
  }
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
    const text = await readLimited(response, options.maxBytes, url);
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
    if (card.id !== agentId) throw new CardFetchError(`${url} describes ${card.id}, not ${agentId}`);
    return card;
  }
  throw new CardFetchError(`${url}: too many redirects`);
}

async function readLimited(response: Response, maxBytes: number, url: string): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    throw new CardFetchError(`${url} is larger than ${maxBytes} bytes`);
  }
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new CardFetchError(`${url} is larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
