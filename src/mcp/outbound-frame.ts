/**
 * What every call the operator's agent makes through the MCP tools shares, whichever protocol it speaks
 * (SAMVAD through src/client, A2A through the A2A SDK's client): the operator's settings read per call, one
 * per-minute window over every HTTP request to any agent, the call's deadline, the failures any HTTP call
 * can meet, and one traffic entry per tool call (direction `out`).
 */
import type { EnvelopeEvent } from '../agent/events.js';
import { newChain, type HopGuard } from '../calls/hop-guard.js';
import { oneLine } from '../lib/text.js';
import type { CallChain, ErrorCode } from '../protocol/index.js';
import { tokensFor, type OutboundBudget } from './outbound-budget.js';
import { OutboundError, OutboundRateWindow, type OutboundSettings } from './outbound-policy.js';
import { oneLineJson, type UntrustedPart } from './untrusted.js';

export interface FrameOptions {
  /** Our agent:// id (the log's `sender` for calls out), read per call: it follows the tunnel. */
  ownId: () => string;
  settings: () => OutboundSettings;
  /** One traffic entry per tool call, refusals included. */
  onEvent: (event: EnvelopeEvent) => void;
  /**
   * Where a call's chain comes from (calls/hop-guard.ts): the inbound call the operator's agent is serving,
   * one hop further, or a new chain. None: a new chain every call.
   */
  chains?: Pick<HopGuard, 'next'>;
  /** Each agent's daily budget of calls and tokens (outbound-budget.ts); none: no budget. */
  budget?: OutboundBudget;
  now?: () => number;
}

/** What the log says of a call beyond its verdict: why it failed, or what a successful call found. */
export interface LogNote {
  code?: ErrorCode;
  message: string;
  parts?: UntrustedPart[];
}

/** What one tool call gathers for its traffic entry as it goes. */
export interface CallLog {
  /** The callee as the bridge names it once parsed; before that, what the model passed. */
  callee: string;
  started: number;
  status: number;
  bytesIn: number;
  bytesOut: number;
  /** A task id that passed its shape (the model's, or one the callee sent). */
  taskId?: string;
  note?: LogNote;
  preview: { payload?: string; reply?: string };
  signal?: AbortSignal;
  timeoutMs?: number;
  /** The chain the call carried (`sending`). */
  chain?: CallChain;
  /** The agent (its agent:// id) whose daily token budget what the call sent and read counts against. */
  budgetKey?: string;
}

/** The entry's fields that depend on the protocol and the tool (endpoint, skill, mode, signature...). */
export type EntryFields = Pick<EnvelopeEvent, 'endpoint' | 'signatureForm'> &
  Partial<Omit<EnvelopeEvent, 'time' | 'sender' | 'callee' | 'direction'>>;

export const PREVIEW_CHARS = 500;
// The log's message (the operator's console and logs/traffic.jsonl): one line, whatever the callee sent.
const LOG_MESSAGE_CHARS = 1000;
const LOG_PART_CHARS = 300;

export class OutboundFrame {
  private readonly window: OutboundRateWindow;
  readonly now: () => number;

  constructor(private readonly options: FrameOptions) {
    this.now = options.now ?? Date.now;
    this.window = new OutboundRateWindow(this.now);
  }

  get ownId(): string {
    return this.options.ownId();
  }

  /** The operator's settings now: every call reads them afresh, so a change applies to the next one. */
  settings(): OutboundSettings {
    return this.options.settings();
  }

  begin(callee: string): CallLog {
    return { callee, started: this.now(), status: 200, bytesIn: 0, bytesOut: 0, preview: {} };
  }

  /** A call to the agent `key` (its agent:// id) may go out: refused (429) once its daily budget is spent. */
  checkBudget(key: string): void {
    this.options.budget?.check(key);
  }

  /**
   * The call goes out now: one more against the agent's daily calls, and what it sends and reads against
   * its tokens; returns the chain it carries, one hop past the inbound call the operator's agent serves.
   */
  sending(call: CallLog, key: string): CallChain {
    this.options.budget?.countCall(key);
    call.budgetKey = key;
    call.chain = this.options.chains?.next() ?? newChain();
    return call.chain;
  }

  /** What a look at a task reads from the agent `key` counts against its daily tokens too. */
  budgeted(call: CallLog, key: string): void {
    call.budgetKey = key;
  }

  /** One HTTP request to another agent, any of them, any protocol: refused (429) past outboundPerMinute. */
  takeRequest(): void {
    this.window.take(this.options.settings().outboundPerMinute);
  }

  /** The call's overall bound: the tool call's own signal (the MCP request went away) and the timeout. */
  deadline(call: CallLog, outer: AbortSignal | undefined): AbortSignal {
    const { outboundTimeoutMs } = this.options.settings();
    const timeout = AbortSignal.timeout(outboundTimeoutMs);
    call.signal = outer ? AbortSignal.any([timeout, outer]) : timeout;
    call.timeoutMs = outboundTimeoutMs;
    return call.signal;
  }

  /**
   * The failures any HTTP call can meet, in the bridge's words: an address refused after DNS, out of time,
   * cancelled. Undefined for anything else (the protocol's own errors).
   */
  transportFailure(error: unknown, call: CallLog): OutboundError | undefined {
    if (refusedAddress(error)) {
      return new OutboundError(
        'access',
        403,
        `${call.callee} resolves to an address the bridge may not reach (private, link-local or loopback): agents are reached at public addresses only.`,
      );
    }
    if (call.signal?.aborted) {
      const reason: unknown = call.signal.reason;
      const timedOut = reason instanceof Error && reason.name === 'TimeoutError';
      const timeoutMs = call.timeoutMs ?? this.options.settings().outboundTimeoutMs;
      return new OutboundError(
        'handler',
        timedOut ? 504 : 499,
        timedOut
          ? `No complete answer from ${call.callee} within ${timeoutMs} ms (setting outboundTimeoutMs).`
          : `The call to ${call.callee} was cancelled.`,
      );
    }
    return undefined;
  }

  /**
   * The tool call's one traffic entry: the shared fields, the protocol's own, and the failure if any.
   * `hide` rewrites what the callee may have written (message, task id, previews): the entry goes to the
   * console, the log file and the terminal, and a callee may echo a credential it was sent.
   */
  record(
    call: CallLog,
    fields: EntryFields,
    failure: OutboundError | undefined,
    hide: (text: string) => string = (text) => text,
  ): void {
    const { keepMessageContents } = this.options.settings();
    const event: EnvelopeEvent = {
      ...fields,
      time: new Date(call.started).toISOString(),
      sender: this.options.ownId(),
      verdict: failure ? failure.verdict : 'accepted',
      status: failure ? failure.status : call.status,
      durationMs: Math.max(0, this.now() - call.started),
      bytesIn: call.bytesIn,
      bytesOut: call.bytesOut,
      direction: 'out',
      // Before parsing, what the model passed: one line for the console and the log file.
      callee: oneLine(call.callee, 300) ?? '',
    };
    const taskId = call.taskId ?? failure?.details.taskId;
    if (taskId) event.taskId = hide(taskId);
    if (call.chain) event.chain = call.chain;
    if (call.budgetKey)
      this.options.budget?.addTokens(call.budgetKey, tokensFor(call.bytesIn + call.bytesOut));
    const note = failure
      ? { code: failure.details.code, message: failure.message, parts: failure.details.untrusted }
      : call.note;
    if (note?.code) event.code = note.code;
    if (note) event.message = hide(logMessage(note.message, note.parts));
    if (keepMessageContents && (call.preview.payload || call.preview.reply)) {
      event.preview = {};
      if (call.preview.payload) event.preview.payload = hide(call.preview.payload.slice(0, PREVIEW_CHARS));
      if (call.preview.reply) event.preview.reply = hide(call.preview.reply);
    }
    this.options.onEvent(event);
  }
}

/** A callee value's size as JSON, for the log; 0 when it cannot be written (nested too deeply for the stack). */
export function jsonSize(value: unknown): number {
  try {
    return JSON.stringify(value ?? null).length;
  } catch {
    return 0;
  }
}

/**
 * The operator's log line: the bridge's message, then what the callee said (quoted, one line, short), so
 * the console and logs/traffic.jsonl show why without a line a callee could forge.
 */
function logMessage(message: string, parts: UntrustedPart[] = []): string {
  const quoted = parts.map((part) => `${part.what}: ${oneLineJson(part.value, LOG_PART_CHARS).text}`);
  return oneLine([message, ...quoted].join(' '), LOG_MESSAGE_CHARS) ?? message;
}

function refusedAddress(error: unknown): boolean {
  for (let cause: unknown = error, depth = 0; cause && depth < 5; depth++) {
    if ((cause as { code?: unknown }).code === 'ENOTPUBLIC') return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}
