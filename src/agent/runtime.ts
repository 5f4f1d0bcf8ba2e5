import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentCard, Signer } from '../protocol/index.js';
import type { CallbackSender } from './callbacks.js';
import type { AgentEventSink } from './events.js';
import type { PipelineDeps } from './pipeline.js';
import type { SseOptions } from './sse.js';
import type { TaskState } from '../state/tasks.js';

/** What the endpoint handlers share: built once by the server, read on every request. */
export interface AgentRuntime {
  pipeline: PipelineDeps;
  tasks: TaskState;
  callbacks: CallbackSender;
  events: AgentEventSink;
  signer(): Signer;
  card(): AgentCard;
  bodyLimitBytes(): number;
  /** How long finished task results are kept. */
  retentionMs(): number;
  keepContents(): boolean;
  sse: SseOptions;
  /** A stream is about to open: counted against the port's caps on open streams (throws the 429). */
  openStream?(req: IncomingMessage, res: ServerResponse): void;
  /** Every in-flight call's abort controller: shutdown aborts what has not finished in time. */
  inflight: Set<AbortController>;
  draining: boolean;
}
