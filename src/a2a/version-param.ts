import type { IncomingMessage } from 'node:http';

/**
 * The `A2A-Version` a request names: its header, or else its query parameter ("Clients MAY provide the
 * `A2A-Version` as a request parameter instead of a header", §3.6.1); undefined when it names none.
 */
export function requestedVersion(req: IncomingMessage): string | undefined {
  const raw = req.headers['a2a-version'];
  const header = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (header) return header;
  const query = new URL(req.url ?? '/', 'http://agent.invalid').searchParams;
  return (query.get('A2A-Version') ?? query.get('a2a-version'))?.trim() || undefined;
}
