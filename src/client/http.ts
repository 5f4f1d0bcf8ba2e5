/** Small fetch helpers shared by the card fetch and the calls: bounded reads and readable failures. */
import { appFetch } from '../lib/http.js';
import { ClientError } from './errors.js';

/** Parses JSON when it is JSON; otherwise keeps the text so the caller can still show it. */
export function parseBody(bytes: Uint8Array): unknown {
  const text = Buffer.from(bytes).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A signal that fires after `ms` or when `outer` fires, whichever comes first. */
export function deadline(ms: number, outer?: AbortSignal): AbortSignal {
  const timeout = AbortSignal.timeout(ms);
  return outer ? AbortSignal.any([timeout, outer]) : timeout;
}

/**
 * fetch, with network failures reworded: `fetch failed` alone does not say what to check. The messages name
 * `shown`, by default the URL fetched: after a redirect, pass the URL derived from the id instead (the
 * redirected one is the other host's text).
 */
export async function fetchOrExplain(
  url: string,
  init: RequestInit,
  timeoutMs: number,
  shown = url,
): Promise<Response> {
  try {
    return (await appFetch(url, init as Parameters<typeof appFetch>[1])) as unknown as Response;
  } catch (error) {
    if (init.signal?.aborted) {
      const reason: unknown = init.signal.reason;
      if (reason instanceof Error && reason.name === 'TimeoutError') {
        throw new ClientError(`No answer from ${shown} within ${timeoutMs} ms`, { cause: error });
      }
      throw reason instanceof Error ? reason : error;
    }
    throw new ClientError(
      `Cannot reach ${shown} (${describeFetchError(error)}): is the agent running and the id right?`,
      { cause: error },
    );
  }
}

// A code, never a message: a TLS failure's message quotes the other host's certificate (its text).
function describeFetchError(error: unknown): string {
  const code = (error as { cause?: { code?: unknown } }).cause?.code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code) ? code : 'network error';
}
