/** What the rest of the app watches: every change is an event. */
export type TunnelState =
  | { status: 'off' }
  | { status: 'connecting'; attempt: number }
  | { status: 'online'; url: string; since: string }
  | { status: 'reconnecting'; attempt: number; nextTryAt: string; lastError: string }
  | { status: 'failed'; reason: string };

/** Exponential backoff with jitter: 1 s, 2 s, 4 s ... capped at 30 s, each scaled by 0.5-1.0. */
export function backoffDelay(
  attempt: number,
  random: () => number = Math.random,
  initialMs = 1000,
  maxMs = 30_000,
): number {
  const base = Math.min(maxMs, initialMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.5 + random() / 2));
}
