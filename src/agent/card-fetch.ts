import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { agentHost, cardSchema, type AgentCard } from '../protocol/index.js';
import { appFetch, type Response } from '../lib/http.js';

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
  let url = `${base}/.well-known/agent.json`;
  const signal = AbortSignal.timeout(options.timeoutMs);
  for (let hop = 0; hop < 3; hop++) {
    let response: Response;
    try {
      response = await appFetch(url, { redirect: 'manual', signal, headers: { accept: 'application/json' } });
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
