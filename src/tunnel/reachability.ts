import { agentIdForUrl, type AgentCard } from '../protocol/index.js';
import { appFetch } from '../lib/http.js';

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
  const text = await response.text();
  if (!response.ok) throw new Error(`${cardUrl} answered HTTP ${response.status}`);
  let card: Partial<AgentCard>;
  try {
    card = JSON.parse(text) as Partial<AgentCard>;
  } catch {
    throw new Error(`${cardUrl} did not return JSON`);
  }
  const expectedId = agentIdForUrl(url);
  if (card.id !== expectedId)
    throw new Error(`${cardUrl} serves the card of ${String(card.id)}, expected ${expectedId}`);
  const active = (keys: AgentCard['publicKeys'] | undefined) =>
    (keys ?? [])
      .filter((k) => k.active)
      .map((k) => `${k.kid}=${k.key}`)
      .sort()
      .join(',');
  if (active(card.publicKeys) !== active(ours.publicKeys))
    throw new Error(`${cardUrl} lists other active keys than this agent`);
}
