// `agent-bridge call --a2a`: one text message with the A2A SDK's client (its client factory and transports,
// as src/mcp calls A2A agents), blocking or streamed, with the key the agent's operator issued. A2A replies
// carry no signature; what can be checked is the agent's card, signed with its key (its JWKS on its origin).
import { randomUUID } from 'node:crypto';
import { Role, type AgentCard, type SendMessageRequest } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { A2AError } from '@a2a-js/sdk/errors';
import { appFetch } from '../lib/http.js';
import { printable } from '../lib/text.js';
import { readResult, StreamAnswer, type A2AAnswer } from '../mcp/a2a-answers.js';
import { fetchCheckedCard, type CheckedCard } from '../mcp/a2a-card.js';
import { originKey } from '../mcp/a2a-credentials.js';
import { OutboundError, parseA2AAgent, type A2AAgentRef } from '../mcp/outbound-policy.js';
import { agentBaseUrl, agentHost, normalizeAgentId } from '../protocol/index.js';
import type { CallOutput } from './call-samvad.js';

export interface A2ACall {
  /** The agent's base URL (https://host; http://127.0.0.1:PORT on this machine), or its agent:// id. */
  target: string;
  message: string;
  stream: boolean;
  /** The A2A key its operator issued (`Authorization: Bearer`); none: a keyless call. */
  key?: string;
  timeoutMs: number;
  out: CallOutput;
}

/** A failure in this command's own words (never the agent's text unescaped). */
class CallFailure extends Error {}

/** What the requests of one call saw: the last HTTP status, or the network error's code. */
interface Seen {
  status?: number;
  unreachable?: string;
}

export async function callA2A(call: A2ACall): Promise<void> {
  const ref = agentRef(call.target);
  const seen: Seen = {};
  const signal = AbortSignal.timeout(call.timeoutMs);
  const fetchImpl = agentFetch(ref, call.key, seen, signal);
  try {
    const card = await fetchCheckedCard(ref, fetchImpl);
    const legacyCompat = { enabled: true };
    const client = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [
          new JsonRpcTransportFactory({ fetchImpl, legacyCompat }),
          new RestTransportFactory({ fetchImpl, legacyCompat }),
        ],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat }),
      }),
    ).createFromAgentCard(card.raw as unknown as AgentCard);
    const request = messageRequest(call.message);
    let answer: A2AAnswer | undefined;
    if (call.stream) {
      const gathered = new StreamAnswer();
      let shown = '';
      for await (const event of client.sendMessageStream(request, { signal })) {
        const settled = gathered.add(event);
        // The reply so far: what it adds to what is shown is printed as it comes.
        const reply = gathered.answer()?.reply;
        if (typeof reply === 'string' && reply.startsWith(shown) && reply.length > shown.length) {
          call.out.reply(reply.slice(shown.length));
          shown = reply;
        }
        if (settled) break;
      }
      answer = gathered.answer();
      if (answer && typeof answer.reply === 'string' && answer.reply !== shown) {
        throw new CallFailure(
          `The stream from ${ref.origin} replaced text it had sent: call again without --stream.`,
        );
      }
    } else {
      answer = readResult(await client.sendMessage(request, { signal }));
      if (answer.reply !== undefined) call.out.reply(replyText(answer.reply));
    }
    if (!answer)
      throw new CallFailure(`The stream from ${ref.origin} ended without a task or a message: call again.`);
    if (answer.state === 'auth-required' && !call.key) {
      // A knock (an Agent Bridge under `pairing`): the message waits for that agent's operator.
      throw new CallFailure(
        `${ref.origin} takes A2A calls from callers its operator approved: your message now waits for the operator's decision${answer.taskId ? ` as task ${answer.taskId}` : ''}. Ask the agent's operator for a key (\`agent-bridge keys issue --name <you>\`), and pass it with AGENT_BRIDGE_A2A_KEY or --key.`,
      );
    }
    if (answer.state !== 'completed') {
      const status = typeof answer.status === 'string' ? `: "${printable(answer.status.slice(0, 300))}"` : '';
      throw new CallFailure(
        `${ref.origin} answered with a task that is ${answer.state}${answer.taskId ? ` (task ${answer.taskId})` : ''}${status}.`,
      );
    }
    call.out.note(checkedNote(ref, card, call.key));
  } catch (error) {
    throw new Error(failure(error, ref, seen, call.key, signal), { cause: error });
  }
}

/** The agent named: an https base URL, a loopback one over http, or an agent:// id for its host. */
function agentRef(target: string): A2AAgentRef {
  const text = target.trim();
  try {
    if (text.toLowerCase().startsWith('agent://')) {
      // Agent Bridge serves both protocols on one host: its agent:// id names its A2A origin too.
      const base = agentBaseUrl(text, true);
      if (!base || !agentHost(text))
        throw new Error(`"${printable(text)}" is not an agent id: use agent://host.`);
      return { origin: base, agentId: normalizeAgentId(text) };
    }
    return parseA2AAgent(text, true);
  } catch (error) {
    if (error instanceof OutboundError) throw new Error(error.message, { cause: error });
    throw error;
  }
}

/**
 * The SDK's fetch for this call: requests to the agent's own origin only (its card could name another host,
 * which would then get the key), never redirected, the key added there alone, within the call's time.
 */
function agentFetch(ref: A2AAgentRef, key: string | undefined, seen: Seen, signal: AbortSignal) {
  const send = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (originKey(url) !== ref.origin) {
      throw new CallFailure(
        `The card of ${ref.origin} sends this call to another address (${printable(url.origin)}): nothing was sent there.`,
      );
    }
    // Names in lower case (Headers writes them so), so the key replaces any header of its name.
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    if (key) headers.authorization = `Bearer ${key}`;
    try {
      const response = (await appFetch(url, {
        ...(init as Parameters<typeof appFetch>[1]),
        headers,
        redirect: 'manual',
        signal: init.signal ? AbortSignal.any([init.signal, signal]) : signal,
      })) as unknown as Response;
      seen.status = response.status;
      return response;
    } catch (error) {
      const code = (error as { cause?: { code?: unknown } }).cause?.code;
      if (!signal.aborted) seen.unreachable = typeof code === 'string' ? code : 'network error';
      throw error;
    }
  };
  return send as typeof fetch;
}

function messageRequest(message: string): SendMessageRequest {
  return {
    tenant: '',
    message: {
      messageId: randomUUID(),
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: [
        {
          content: { $case: 'text', value: message },
          mediaType: 'text/plain',
          filename: '',
          metadata: undefined,
        },
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately: false,
    },
    metadata: undefined,
  };
}

function replyText(reply: unknown): string {
  return typeof reply === 'string' ? reply : JSON.stringify(reply);
}

function checkedNote(ref: A2AAgentRef, card: CheckedCard, key: string | undefined): string {
  const sent = key ? 'Sent with your A2A key.' : 'Sent without a key.';
  const carrier = ref.origin.startsWith('https:')
    ? `TLS to ${new URL(ref.origin).host}`
    : 'this machine (loopback)';
  const replies = `A2A replies carry no signature: this one is as authentic as ${carrier}`;
  if (card.signature === 'unsigned') return `${sent}\n${replies}, and its card is not signed.`;
  const by = card.signedBy
    ? ` with key ${printable(card.signedBy.kid)} of ${printable(card.signedBy.jku)}`
    : '';
  const whole = card.signature === 'partial' ? ' (all but its security schemes)' : '';
  return `${sent}\n${replies}; its card${whole} is signed, and the signature verified${by}.`;
}

/** A failed call in the CLI's words: what happened, and what to do. */
function failure(
  error: unknown,
  ref: A2AAgentRef,
  seen: Seen,
  key: string | undefined,
  signal: AbortSignal,
): string {
  if (signal.aborted)
    return `${ref.origin} did not answer in time: call again, or give it longer with --timeout.`;
  if (seen.unreachable)
    return `Cannot reach ${ref.origin} (${seen.unreachable}): is the agent running, and is its address right?`;
  if (seen.status === 401 || seen.status === 403) {
    return key
      ? `${ref.origin} refused your A2A key (HTTP ${seen.status}): it is wrong, revoked or expired. Ask the agent's ` +
          'operator for a new one (they issue it with `agent-bridge keys issue --name <you>`), and pass it with ' +
          'AGENT_BRIDGE_A2A_KEY or --key.'
      : `${ref.origin} takes calls with an A2A key only (HTTP ${seen.status}): ask the agent's operator for one ` +
          '(`agent-bridge keys issue --name <you>`), and pass it with AGENT_BRIDGE_A2A_KEY or --key.';
  }
  if (seen.status === 429)
    return `${ref.origin} is busy or your key's limit is spent (HTTP 429): call again later.`;
  if (error instanceof OutboundError) return error.message;
  if (error instanceof A2AError) {
    return `${ref.origin} refused the message (${error.name}${seen.status ? `, HTTP ${seen.status}` : ''}). It said: "${printable(error.message.slice(0, 300))}".`;
  }
  if (error instanceof CallFailure) return error.message;
  // The A2A client's own message may quote the answer: escaped, after ours.
  const said =
    error instanceof Error ? ` The A2A client said: "${printable(error.message.slice(0, 300))}".` : '';
  return `${ref.origin} answered in a way the A2A client could not use${seen.status ? ` (HTTP ${seen.status})` : ''}: is it an A2A agent?${said}`;
}
