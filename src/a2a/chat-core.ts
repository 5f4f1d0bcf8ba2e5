import type { IncomingHttpHeaders } from 'node:http';
import type { TurnContent, TurnImage } from '../calls/attachments.js';
import { ProtocolError, type CallChain } from '../protocol/index.js';

/**
 * The narrow seam between the A2A front door and the caller-admission core that SAMVAD's pipeline also
 * calls (access, limits, budget, screen, framing, the gateway, traffic, metrics). Everything in this folder
 * is A2A's own: the wire (JSON-RPC, HTTP+JSON, v0.3 compatibility), the card, tasks as A2A sees them. Who a
 * caller is and whether a turn may run is decided behind these interfaces, once, for both protocols.
 *
 * Refusals are thrown as the project's `ProtocolError` (src/protocol/errors.ts): its message is safe to send
 * and says what to do; its `httpStatus`, `code` and `retryAfterSeconds` become the A2A error of each
 * transport (a2a-errors.ts). Anything else thrown is a bug: callers get a generic message, never its text.
 */

/** Who is calling, as the gate established it. */
export interface A2ACaller {
  /**
   * Stable and unique per identity, never a secret: tasks, push configs and gateway sessions are keyed on
   * it, so one caller never reads, cancels or continues another's work (e.g. `a2a-key:<key id>`, or
   * `a2a-anon:<address>` for keyless callers under the `open` policy, whom an address does not tell apart:
   * their task ids and minted contextIds are what only each of them holds).
   */
  readonly id: string;
  /** How the operator knows the caller (the key's name), for traffic and framing. */
  readonly name: string;
  /**
   * A keyless caller under the `pairing` policy (knock.ts): its messages knock (they wait for the operator as
   * tasks in TASK_STATE_AUTH_REQUIRED) and it follows its own tasks; it runs no turn. `address`: where it
   * called from as the per-address caps count it (agent/client-address.ts), for the knock's bounds; `skill`:
   * the published skill whose door it knocked at (absent: the agent's own).
   */
  readonly knock?: { readonly address: string; readonly skill?: string };
}

/**
 * `authenticate`'s refusal of a caller that proved who it is but may not call now: its key was revoked or
 * has expired. The caller reads only the message; the operator's traffic log names the key, so the operator
 * sees who still uses it.
 */
export class KnownCallerRefused extends ProtocolError {
  constructor(
    message: string,
    readonly caller: A2ACaller,
    readonly keyStatus: 'revoked' | 'expired',
  ) {
    super('AUTH_FAILED', 401, message, { step: 'access' });
  }
}

/** What the gate sees of a request: its headers (`Authorization: Bearer <A2A key>`) and address. */
export interface A2ARequestInfo {
  headers: IncomingHttpHeaders;
  remoteAddress: string | undefined;
  /** `POST /a2a/jsonrpc SendMessage` style, for traffic and refusal logs. */
  method: string;
  /** The published skill whose door it came through (`/a2a/skills/<id>`); absent: the default skill's. */
  skill?: string;
}

/** One chat turn: the caller's text in a conversation. */
export interface ChatTurn {
  /** The caller's text parts, joined, with its text files and data parts inlined (message-text.ts). */
  message: string;
  /** The images its file parts carried, in order: sent inline, or by URL and fetched by `admit`. */
  images?: readonly TurnImage[];
  /**
   * The A2A conversation (a key holder's choice, or minted by the SDK when absent; a keyless caller's is
   * always minted here: conversations.ts). The gateway session is (caller.id, contextId), never contextId
   * alone: two callers using the same contextId never share one.
   */
  contextId: string;
  /** The A2A task this turn runs as (server-generated UUIDv4). */
  taskId: string;
  /**
   * The chain of calls the message said it belongs to (its metadata under the call-chain extension,
   * chain-metadata.ts); absent: it said none.
   */
  chain?: CallChain;
}

/**
 * A turn as the gate sees it, before a task exists: the contextId is the caller's own, when it sent one.
 * (Each task takes one message: a follow-up is a new task in the same context, so there is no taskId.)
 */
export type ChatTurnRequest = Pick<ChatTurn, 'message'> &
  Partial<Pick<ChatTurn, 'contextId' | 'chain'>> & {
    /**
     * The message's parts as the caller core takes them (`message` is its text): `admit` counts its images
     * against the budget and fetches those sent by URL, once the limits let the turn through.
     */
    content?: TurnContent;
  };

export interface ChatControl {
  /** Aborted by a CancelTask, or when the agent shuts down: stop the gateway call (an honest cancel). */
  signal: AbortSignal;
  /**
   * Each piece of reply text as the gateway streams it; the front door sends it as an artifact update.
   * Absent when nobody would see the pieces (a blocking send): the gateway is asked for the whole reply.
   */
  onDelta?(text: string): void;
}

export interface ChatReply {
  /** The whole reply text (the deltas joined, or the gateway's reply when it did not stream). */
  reply: string;
  usage?: { promptTokens: number; completionTokens: number; totalTokens: number };
}

/** Runs an admitted turn through the shared core: framing, the gateway call, usage, traffic, metrics. */
export interface ChatCore<C extends A2ACaller = A2ACaller> {
  /**
   * Resolves with the reply, or rejects: with `signal.reason` once aborted, with a ProtocolError whose
   * message the caller may read (the gateway is down: AGENT_UNAVAILABLE), or with anything else (a bug).
   * What the turn holds (its budget reservation, taken by `admit`) is released when this settles.
   */
  run(caller: C, turn: ChatTurn, control: ChatControl): Promise<ChatReply>;
}

/** What `admit` tells of its checks as they run, for the traffic log. */
export interface AdmitNotes {
  /** A check passed: the limits, or the injection screen (it read the message: it is not off). */
  passed(step: 'limits' | 'screen'): void;
  /** The injection screen matched this rule: the turn goes on (`flag`) or is refused (`refuse`). */
  matched(match: { rule: string }): void;
}

/** The consent and limits in front of the core. Both methods refuse by throwing a ProtocolError. */
export interface A2AGate<C extends A2ACaller = A2ACaller> {
  /**
   * Who calls. Runs first for every A2A request but the card: before the body is parsed, a task looked up
   * or anything stored. Without a key: AUTH_FAILED 401 with a message that says how to get one (or, under
   * the `open` policy, a keyless caller). A wrong, revoked or expired key: AUTH_FAILED 401.
   */
  authenticate(request: A2ARequestInfo): Promise<C>;
  /**
   * Whether this turn may run now: access lists, the restricted-agent rule, rate limits, the daily token
   * budget, the injection screen, the task caps. Runs before the SDK creates a task, so a refusal stores
   * nothing and the caller gets an A2A error (429 with Retry-After, 403, ...), not a failed task. What it
   * holds for the turn (a budget reservation, taken atomically with the limits' check as SAMVAD's step 5
   * does) goes to that turn's `run` through the caller object (one per request); the SDK may still refuse
   * the turn afterwards (a store that does not answer, the task cap) and never call `run`, so a hold not
   * claimed soon must be given back by the gate itself. `notes` hears of the checks as they run.
   */
  admit(caller: C, turn: ChatTurnRequest, notes?: AdmitNotes): Promise<void>;
  /**
   * Whether a request that runs no turn but holds something of the agent may go on now: a push config
   * written or deleted (kept with its task, written to disk or Redis), a task subscribed to (a stream held
   * open). The operator's denial and the request limits, as for a turn, counted as a request; no token
   * budget is checked or reserved (it spends none). Reads (get, list) are not counted, as SAMVAD's polls
   * are not.
   */
  admitRequest(caller: C): Promise<void>;
}
