import { ServerCallContext, type User } from '@a2a-js/sdk/server';
import type { TurnContent } from '../calls/attachments.js';
import type { ProtocolError } from '../protocol/index.js';
import type { A2ATaskRecord } from '../state/a2a-records.js';
import type { PushConfigEntry } from '../state/tasks.js';
import type { A2ACallRecord } from './call-record.js';
import type { A2ACaller } from './chat-core.js';

/**
 * The caller as the SDK sees it: its stores and event buses scope everything by `userName`
 * (resolveUserScope), so a caller's tasks, streams and push configs are out of every other caller's reach.
 */
export class CallerUser<C extends A2ACaller> implements User {
  constructor(readonly caller: C) {}

  get isAuthenticated(): boolean {
    return true;
  }

  get userName(): string {
    return this.caller.id;
  }
}

/** What one request carries past the SDK, for the transport to answer in its own terms. */
export interface RequestScope {
  /** The gate's refusal (the SDK would keep only its text). */
  refusal?: ProtocolError;
  /**
   * Set once the SDK's transport decoded the request and called the handler: an error before that is
   * the caller's malformed request (the SDK's decoders throw TypeErrors on it), not the agent's failure.
   */
  decoded?: boolean;
  /**
   * The push config a message was sent with: the SDK stores it before the task exists, so it waits here
   * and is written with the task.
   */
  push?: { taskId: string; entries: PushConfigEntry[] };
  /**
   * A blocking send without push configs: nobody can see its task before it ends (the caller learns the
   * id with the reply), so the reply is asked of the gateway whole and the task is written once, finished.
   */
  quiet?: boolean;
  /**
   * Gives back the place the caps hold for this request's task until it is written (A2ATaskStore.admit);
   * called once it is, and when the request ends (a refused or failed one never writes it).
   */
  slot?: () => void;
  /**
   * Gives back the place this request's stream holds among its caller's open streams (OpenStreams):
   * called when the caller leaves, before the stream itself ends (at its task's next event).
   */
  leave?: () => void;
  /** The task this request wrote as it ended (a quiet one), which the SDK reads back at once. */
  ended?: A2ATaskRecord;
  /** What the traffic log will show of this request (filled in as it goes). */
  call?: A2ACallRecord;
  /**
   * The message as admitted (message-text.ts), its images sent by URL fetched by the gate: the turn the
   * executor runs, so the message is parsed and its images fetched once.
   */
  content?: TurnContent;
}

const SCOPE_KEY = 'agent-bridge.request';

/** The SDK's per-request context for an authenticated caller speaking `version` ('1.0' or '0.3'). */
export function callContext<C extends A2ACaller>(
  caller: C,
  version: '1.0' | '0.3',
  call?: A2ACallRecord,
): ServerCallContext {
  const scope: RequestScope = {};
  if (call) {
    call.version = version;
    scope.call = call;
  }
  return new ServerCallContext({
    user: new CallerUser(caller),
    requestedVersion: version,
    state: new Map([[SCOPE_KEY, scope]]),
  });
}

export function callerOf<C extends A2ACaller>(context: ServerCallContext): C {
  const user = context.user;
  if (!(user instanceof CallerUser)) throw new Error('An A2A call reached the core without a caller.');
  return user.caller as C;
}

export function scopeOf(context: ServerCallContext): RequestScope {
  return (context.state.get(SCOPE_KEY) as RequestScope | undefined) ?? {};
}
