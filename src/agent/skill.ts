import type { Envelope, Mode, SkillDef } from '../protocol/index.js';

/** What a skill handler gets for one verified call. */
export interface SkillContext {
  envelope: Envelope;
  /** The verified sender's agent:// id (or `unsigned:<address>` when unsigned calls are allowed). */
  sender: string;
  payload: Record<string, unknown>;
  mode: Mode;
  /** Aborted when the caller goes away (sync, stream) or the agent shuts down. */
  signal: AbortSignal;
  /** Streams a piece of the result to the caller (stream mode); a no-op in other modes. */
  emit(chunk: string): void;
  /** Progress of an async task, 0..1. */
  progress(fraction: number): void;
  /** Tokens this call cost, for the sender's daily budget. */
  reportUsage(tokens: number): void;
}

/**
 * A skill as registered in code: its public definition (what the card shows) plus a handler.
 * `streamStyle: 'named'` adds the named status/result/error/done events of PROTOCOL.md §7 (the chat skill);
 * 'generic' sends only the unnamed chunk/done blocks.
 */
export interface Skill<R = unknown> extends SkillDef {
  streamStyle?: 'generic' | 'named';
  handler(context: SkillContext): Promise<R>;
}
