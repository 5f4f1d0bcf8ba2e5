import type { EnvelopeEvent } from '../agent/events.js';
import { PIPELINE_STEPS, type TunnelStatus } from '../protocol/console-api.js';

// Label values come only from these fixed sets, never from what a caller sent (sender, skill, path): every
// new value is a new time series in Prometheus, so a caller-controlled label would be unbounded memory.

export const MODES = ['sync', 'async', 'stream'] as const;
export const PROTOCOLS = ['samvad', 'a2a'] as const;
export const CALLBACK_OUTCOMES = ['delivered', 'retrying', 'gave-up', 'refused'] as const;
export const TUNNEL_STATUSES = [
  'off',
  'connecting',
  'online',
  'reconnecting',
  'failed',
] as const satisfies readonly TunnelStatus['status'][];

/** Anything outside a label's known set. */
export const OTHER = 'other';

/** `value` when it is one of `known`, else "other". */
export function bounded(value: string | undefined, known: readonly string[], absent = OTHER): string {
  if (value === undefined) return absent;
  return known.includes(value) ? value : OTHER;
}

/**
 * An envelope's labels: its protocol (SAMVAD unless it says otherwise), its mode ("none" for outbound lookups
 * and A2A reads that have none), its verdict (a task held for the operator's approval is "held"), and the
 * pipeline step that refused it ("none" unless refused).
 */
export function envelopeLabels(event: EnvelopeEvent): {
  protocol: string;
  mode: string;
  verdict: string;
  step: string;
} {
  const protocol = bounded(event.protocol, PROTOCOLS, 'samvad');
  const mode = bounded(event.mode, MODES, 'none');
  if (event.verdict === 'accepted')
    return { protocol, mode, verdict: event.held ? 'held' : 'accepted', step: 'none' };
  return { protocol, mode, verdict: 'refused', step: bounded(event.verdict, PIPELINE_STEPS) };
}
