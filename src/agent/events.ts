import type { WebhookEvent } from '../lib/webhook.js';
import type { TrafficEntry } from '../protocol/index.js';

export type SignatureFormUsed = TrafficEntry['signatureForm'];

/**
 * One event per call handled (a SAMVAD envelope, an A2A request, a call out): the operator's log entry
 * (src/protocol/console-api.ts) before the log numbers it, with the steps of its protocol it passed. Never
 * secrets, never payloads unless the operator keeps message contents.
 */
export type EnvelopeEvent = Omit<TrafficEntry, 'id'>;

/** One callback delivery attempt (the shared webhook delivery's event). */
export type CallbackEvent = WebhookEvent;

export interface AgentEventSink {
  envelope?(event: EnvelopeEvent): void;
  callback?(event: CallbackEvent): void;
}
