import type { ErrorCode, Mode, RefusalStep } from '../protocol/index.js';

export type SignatureFormUsed = 'headers' | 'envelope' | 'both' | 'unsigned' | 'none';

/** One entry per envelope handled: what the operator's log shows. Never secrets, never payloads. */
export interface EnvelopeEvent {
  time: string;
  endpoint: string;
  sender?: string;
  skill?: string;
  mode?: Mode;
  signatureForm: SignatureFormUsed;
  verdict: 'accepted' | RefusalStep;
  code?: ErrorCode;
  status: number;
  message?: string;
  durationMs: number;
  bytesIn: number;
  bytesOut: number;
  traceId?: string;
  /** From X-Forwarded-For when the request came through a tunnel: shown, never trusted. */
  forwardedFor?: string;
  /** Operator-facing detail of a handler failure (e.g. the gateway diagnosis); never sent to callers. */
  diagnosis?: string;
  taskId?: string;
  /** Only when the operator keeps message contents: truncated previews. */
  preview?: { payload?: string; reply?: string };
}

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
