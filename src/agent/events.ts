import type { TrafficEntry } from '../protocol/index.js';

export type SignatureFormUsed = TrafficEntry['signatureForm'];

/**
 * One event per envelope handled: the operator's log entry (src/protocol/console-api.ts) before the log
 * numbers it. Never secrets, never payloads unless the operator keeps message contents.
 */
export type EnvelopeEvent = Omit<TrafficEntry, 'id'>;

export interface CallbackEvent {
  time: string;
  taskId: string;
  url: string;
  attempt: number;
  outcome: 'delivered' | 'retrying' | 'gave-up' | 'refused';
  status?: number;
  message?: string;
}

export interface AgentEventSink {
  envelope?(event: EnvelopeEvent): void;
  callback?(event: CallbackEvent): void;
}
