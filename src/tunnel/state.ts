import type { TunnelStatus } from '../protocol/index.js';

/** What the rest of the app watches (the console shows it as is): every change is an event. */
export type TunnelState = TunnelStatus;

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
