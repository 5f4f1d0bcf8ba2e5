import { agentIdForUrl, type AgentCard } from '../protocol/index.js';
import { BodyTooLargeError, appFetch, readCapped } from '../lib/http.js';
import { escapedLine } from '../lib/text.js';
import {
  anotherAgent,
  httpStatusFailure,
  networkFailure,
  notACard,
  otherKeys,
  redirected,
  timedOut,
  type UnreachableError,
} from './unreachable.js';

/** The same cap peers apply to the cards they fetch: a bigger body is not a card, and is not buffered. */
export const CARD_CHECK_MAX_BYTES = 64 * 1024;

/**
 * Fetches our own card through the public URL and compares it with the card we serve: the same id and the
 * same active keys. Anything else (an old tunnel, another agent on a recycled subdomain) is not us. Every
 * failure is an UnreachableError that says what happened and what to do (unreachable.ts).
 */
export async function checkReachable(url: string, ours: AgentCard, timeoutMs = 10_000): Promise<void> {
  const cardUrl = `${url.replace(/\/+$/, '')}/.well-known/agent.json`;
  let response;
  try {
    response = await appFetch(cardUrl, {
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
      headers: { 'cache-control': 'no-cache' },
    });
  } catch (error) {
    throw fetchFailure(cardUrl, error, timeoutMs);
  }
  let text: string;
  try {
    text = Buffer.from(await readCapped(response, CARD_CHECK_MAX_BYTES)).toString('utf8');
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      throw notACard(
        `${cardUrl} sent more than ${CARD_CHECK_MAX_BYTES / 1024} KiB, which is not an agent card: reading stopped there`,
      );
    }
    if ((error as Error).name === 'TimeoutError') throw timedOut(cardUrl, timeoutMs / 1000);
    throw notACard(`${cardUrl} broke off sending the card (${codeOf(error) ?? 'connection closed'})`);
  }
  if (!response.ok) throw httpStatusFailure(cardUrl, response.status);
  let card: Partial<AgentCard>;
  try {
    card = JSON.parse(text) as Partial<AgentCard>;
  } catch {
    throw notACard(`${cardUrl} did not return JSON`);
  }
  const expectedId = agentIdForUrl(url);
  if (card.id !== expectedId) {
    // What the other server calls itself, quoted: one line, capped and escaped.
    const served =
      typeof card.id === 'string' ? `the card of ${escapedLine(card.id, 100)}` : 'a card without an id';
    throw anotherAgent(`${cardUrl} serves ${served}, expected ${expectedId}`);
  }
  const active = (keys: AgentCard['publicKeys'] | undefined) =>
    (keys ?? [])
      .filter((k) => k.active)
      .map((k) => `${k.kid}=${k.key}`)
      .sort()
      .join(',');
  if (active(card.publicKeys) !== active(ours.publicKeys))
    throw otherKeys(`${cardUrl} lists other active keys than this agent`);
}

/** A fetch that failed before an answer: a timeout, a refused redirect, or a connection by its code. */
function fetchFailure(cardUrl: string, error: unknown, timeoutMs: number): UnreachableError {
  if ((error as Error).name === 'TimeoutError') return timedOut(cardUrl, timeoutMs / 1000);
  const cause = (error as { cause?: { message?: unknown } }).cause;
  if (typeof cause?.message === 'string' && /redirect/i.test(cause.message)) return redirected(cardUrl);
  return networkFailure(cardUrl, codeOf(error));
}

/**
 * The error's code, from it or its cause (undici wraps the socket's error): a code, never a message, since
 * a TLS failure's message quotes the other host's certificate.
 */
export function codeOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
