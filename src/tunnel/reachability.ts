import { agentIdForUrl, type AgentCard } from '../protocol/index.js';
import { BodyTooLargeError, appFetch, readCapped } from '../lib/http.js';
import { escapedLine } from '../lib/text.js';

/** The same cap peers apply to the cards they fetch: a bigger body is not a card, and is not buffered. */
export const CARD_CHECK_MAX_BYTES = 64 * 1024;

/**
 * Fetches our own card through the public URL and compares it with the card we serve: the same id and the
 * same active keys. Anything else (an old tunnel, another agent on a recycled subdomain) is not us.
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
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(
      `${cardUrl} did not answer (${cause?.code ?? cause?.message ?? (error as Error).message})`,
    );
  }
  let text: string;
  try {
    text = Buffer.from(await readCapped(response, CARD_CHECK_MAX_BYTES)).toString('utf8');
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      throw new Error(
        `${cardUrl} sent more than ${CARD_CHECK_MAX_BYTES / 1024} KiB, which is not an agent card: reading stopped there. Is another server answering at this address?`,
      );
    }
    const timedOut = (error as Error).name === 'TimeoutError';
    throw new Error(
      timedOut
        ? `${cardUrl} did not finish sending the card within ${timeoutMs / 1000} s`
        : `${cardUrl} broke off sending the card (${(error as Error).message})`,
    );
  }
  if (!response.ok) throw new Error(`${cardUrl} answered HTTP ${response.status}`);
  let card: Partial<AgentCard>;
  try {
    card = JSON.parse(text) as Partial<AgentCard>;
  } catch {
    throw new Error(`${cardUrl} did not return JSON`);
  }
  const expectedId = agentIdForUrl(url);
  if (card.id !== expectedId) {
    // What the other server calls itself, quoted: one line, capped and escaped.
    const served =
      typeof card.id === 'string' ? `the card of ${escapedLine(card.id, 100)}` : 'a card without an id';
    throw new Error(`${cardUrl} serves ${served}, expected ${expectedId}`);
  }
  const active = (keys: AgentCard['publicKeys'] | undefined) =>
    (keys ?? [])
      .filter((k) => k.active)
      .map((k) => `${k.kid}=${k.key}`)
      .sort()
      .join(',');
  if (active(card.publicKeys) !== active(ours.publicKeys))
    throw new Error(`${cardUrl} lists other active keys than this agent`);
}
