/**
 * Calls the operator's own agent makes to A2A agents through the bridge (the a2a_* MCP tools), with the A2A
 * SDK's client (its client factory, JSON-RPC and HTTP+JSON transports, v0.3 compatibility on, its card
 * resolver): under the same outbound policy, per-minute cap, deadline, reply limit and traffic log as the
 * SAMVAD tools (outbound-frame.ts), every request through the guarded fetch (a2a-fetch.ts), the operator's
 * credential for the agent added there and nowhere else.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Role, type AgentCard, type SendMessageRequest } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  ServiceParameters,
  withA2AExtensions,
  type Client,
} from '@a2a-js/sdk/client';
import { CARD_MAX_BYTES, CARD_TIMEOUT_MS } from '../client/index.js';
import { CHAIN_EXTENSION_URI, type CallChain, type Mode } from '../protocol/index.js';
import {
  a2aFailure,
  isFinal,
  isWaiting,
  readResult,
  readTask,
  StreamAnswer,
  type A2AAnswer,
} from './a2a-answers.js';
import { A2ACardCache, fetchCheckedCard, type CheckedCard } from './a2a-card.js';
import type { A2ACredentials } from './a2a-credentials.js';
import { mask } from './tool-guard.js';
import { guardedFetch, type A2ACallLog } from './a2a-fetch.js';
import { PREVIEW_CHARS, type EntryFields, type OutboundFrame } from './outbound-frame.js';
import {
  OutboundError,
  checkOutboundPolicy,
  parseA2AAgent,
  type A2AAgentRef,
  type OutboundSettings,
} from './outbound-policy.js';
import { oneLineJson } from './untrusted.js';

export type SendMode = 'blocking' | 'stream' | 'submit';

export interface A2ACallsOptions {
  /** Shared with the SAMVAD tools: one cap over every request to any agent, one traffic log. */
  frame: OutboundFrame;
  credentials: A2ACredentials;
}

export interface SendInput {
  agent: string;
  message: string;
  /** Continues a conversation: the contextId an earlier answer gave. */
  contextId?: string;
  /** Answers a task that waits for more input (input-required). */
  taskId?: string;
  mode?: SendMode;
  signal?: AbortSignal;
}

/** The agent's card as checked, and what the operator keeps for it (never the value). */
export interface CardOutcome {
  agent: A2AAgentRef;
  checked: CheckedCard;
  credential: ReturnType<A2ACredentials['schemeFor']>;
}

export interface SendOutcome {
  agent: A2AAgentRef;
  mode: SendMode;
  answer: A2AAnswer;
  /** A message, a task over, or one waiting for the caller; otherwise it goes on at the agent. */
  settled: boolean;
  /** The task was not followed to the end because the per-minute cap ran out (outboundPerMinute). */
  capReached?: true;
  card: CheckedCard;
  durationMs: number;
}

export interface TaskOutcome {
  agent: A2AAgentRef;
  answer: A2AAnswer;
  card: CheckedCard;
}

/** How the traffic log names the modes (its `mode` column). */
const LOG_MODE: Record<SendMode, Mode> = { blocking: 'sync', stream: 'stream', submit: 'async' };
const POLL_FIRST_MS = 250;
const POLL_MAX_MS = 2000;

/** One tool call once the agent is parsed. */
type Call = A2ACallLog & { ref: A2AAgentRef };

export class A2ACalls {
  private readonly frame: OutboundFrame;
  private readonly cards: A2ACardCache;

  constructor(private readonly options: A2ACallsOptions) {
    this.frame = options.frame;
    this.cards = new A2ACardCache(this.frame.now);
  }

  /** The most characters of a reply a tool shows: the reply limit, so a whole reply fits. */
  get replyChars(): number {
    return this.frame.settings().outboundMaxReplyBytes;
  }

  /** Every credential value kept: no tool result may hold one (a callee may echo what it was sent). */
  secrets(): string[] {
    return this.options.credentials.secrets();
  }

  /** Nor may the traffic entry: the console, the log file and the terminal show it. */
  private readonly hide = (text: string): string => mask(text, this.secrets());

  /** The agent's card (GET /.well-known/agent-card.json), checked, and the credential kept for it. */
  async card(agent: string, outer?: AbortSignal): Promise<CardOutcome> {
    return this.run(agent, { endpoint: '/.well-known/agent-card.json' }, async (call, settings) => {
      const checked = await this.checkedCard(call, settings, this.frame.deadline(call, outer));
      return { agent: call.ref, checked, credential: this.credentialFor(call.ref) };
    });
  }

  /** Sends one text message: blocking, streamed (collected), or submitted and followed for a while. */
  async send(input: SendInput): Promise<SendOutcome> {
    const mode = input.mode ?? 'blocking';
    const endpoint = mode === 'stream' ? 'SendStreamingMessage' : 'SendMessage';
    return this.run(input.agent, { endpoint, mode: LOG_MODE[mode] }, async (call, settings) => {
      this.frame.checkBudget(call.ref.agentId);
      call.preview.payload = input.message;
      const signal = this.frame.deadline(call, input.signal);
      const card = await this.checkedCard(call, settings, signal);
      const client = await this.client(call, settings, card, signal);
      const request = messageRequest(input, mode, this.frame.sending(call, call.ref.agentId));
      // The chain's extension is activated (A2A-Extensions): an agent that knows it reads the metadata.
      const options = { signal, serviceParameters: CHAIN_PARAMETERS };
      const followed: { answer: A2AAnswer; capReached?: true } =
        mode === 'stream'
          ? await this.stream(call, client, request, options)
          : mode === 'blocking'
            ? { answer: readResult(await client.sendMessage(request, options)) }
            : await this.submit(call, client, request, options, settings);
      const { answer } = followed;
      this.note(call, answer);
      const settled = answer.kind === 'message' || isFinal(answer.state) || isWaiting(answer.state);
      const outcome: SendOutcome = {
        agent: call.ref,
        mode,
        answer,
        settled,
        card,
        durationMs: this.frame.now() - call.started,
      };
      if (followed.capReached) outcome.capReached = true;
      return outcome;
    });
  }

  /** A task's state (get), or a request to stop it (cancel). */
  async task(input: {
    agent: string;
    taskId: string;
    action: 'get' | 'cancel';
    signal?: AbortSignal;
  }): Promise<TaskOutcome> {
    const endpoint = input.action === 'cancel' ? 'CancelTask' : 'GetTask';
    return this.run(input.agent, { endpoint }, async (call, settings) => {
      call.taskId = input.taskId;
      this.frame.budgeted(call, call.ref.agentId);
      const signal = this.frame.deadline(call, input.signal);
      const card = await this.checkedCard(call, settings, signal);
      const client = await this.client(call, settings, card, signal);
      const id = input.taskId;
      const task =
        input.action === 'cancel'
          ? await client.cancelTask({ tenant: '', id, metadata: undefined }, { signal })
          : await client.getTask({ tenant: '', id }, { signal });
      const answer = sameTask(call, id, readTask(task));
      this.note(call, answer);
      return { agent: call.ref, answer, card };
    });
  }

  /** Streams the answer and gathers it; out of time with a task known, the task is handed back. */
  private async stream(
    call: Call,
    client: Client,
    request: SendMessageRequest,
    options: SendOptions,
  ): Promise<{ answer: A2AAnswer }> {
    const { signal } = options;
    const gathered = new StreamAnswer();
    try {
      for await (const event of client.sendMessageStream(request, options)) {
        // Settled: stop reading (leaving the loop closes the stream).
        if (gathered.add(event)) break;
      }
    } catch (error) {
      const answer = gathered.answer();
      if (!timedOut(signal) || !answer?.taskId) throw error;
      return { answer };
    }
    const answer = gathered.answer();
    if (!answer) {
      throw new OutboundError(
        'handler',
        502,
        `The stream from ${call.callee} ended without a task or a message.`,
      );
    }
    return { answer };
  }

  /**
   * Submits the message (returnImmediately), then follows the task for most of the time allowed, keeping
   * the rest to hand its id back in any case; each poll counts against the per-minute cap.
   */
  private async submit(
    call: Call,
    client: Client,
    request: SendMessageRequest,
    options: SendOptions,
    settings: OutboundSettings,
  ): Promise<{ answer: A2AAnswer; capReached?: true }> {
    const { signal } = options;
    let answer = readResult(await client.sendMessage(request, options));
    const pollUntil = call.started + settings.outboundTimeoutMs * 0.8;
    for (let wait = POLL_FIRST_MS; ; wait = Math.min(wait * 2, POLL_MAX_MS)) {
      const taskId = answer.taskId;
      if (answer.kind === 'message' || !taskId || isFinal(answer.state) || isWaiting(answer.state))
        return { answer };
      if (this.frame.now() + wait > pollUntil) return { answer };
      try {
        await sleep(wait, undefined, { signal });
        answer = sameTask(
          call,
          taskId,
          readTask(await client.getTask({ tenant: '', id: taskId }, { signal })),
        );
      } catch (error) {
        // Out of time, cancelled, or out of requests: the task was accepted, so its id goes back.
        if (signal.aborted) return { answer };
        if (error instanceof OutboundError && error.details.capReached) {
          call.note = { message: `Stopped following task ${taskId}: ${error.message}` };
          return { answer, capReached: true };
        }
        throw error;
      }
    }
  }

  /**
   * The shared frame of every A2A tool call: the agent named and the policy (refusals logged), then the
   * work; whatever happens, one traffic entry.
   */
  private async run<T>(
    agent: string,
    fields: Omit<EntryFields, 'signatureForm'>,
    work: (call: Call, settings: OutboundSettings) => Promise<T>,
  ): Promise<T> {
    const settings = this.frame.settings();
    const call: A2ACallLog = this.frame.begin(agent);
    const entry: EntryFields = { ...fields, signatureForm: 'none', protocol: 'a2a' };
    try {
      const ref = parseA2AAgent(agent, settings.devHttpPeers);
      call.ref = ref;
      call.callee = ref.origin;
      checkOutboundPolicy(settings, ref.agentId, ref.origin);
      const value = await work(call as Call, settings);
      this.frame.record(call, entry, undefined, this.hide);
      return value;
    } catch (error) {
      const credentialKept = call.ref !== undefined && this.credentialFor(call.ref) !== undefined;
      const failure = a2aFailure(error, call, { frame: this.frame, credentialKept });
      if (!failure) {
        // Unexpected: logged as a failure here; the tool says so and the operator's log says why.
        const unexpected = new OutboundError(
          'handler',
          500,
          `The call to ${call.callee} failed unexpectedly.`,
        );
        this.frame.record(call, entry, unexpected, this.hide);
        throw error;
      }
      failure.details.agent ??= call.callee;
      this.frame.record(call, entry, failure, this.hide);
      throw failure;
    }
  }

  /** The card, from the cache or fetched and checked (within 5 s and 64 KiB, as SAMVAD cards). */
  private async checkedCard(
    call: Call,
    settings: OutboundSettings,
    signal: AbortSignal,
  ): Promise<CheckedCard> {
    const cached = this.cards.get(call.ref.origin);
    if (cached) return cached;
    const cardTimeout = AbortSignal.timeout(CARD_TIMEOUT_MS);
    const fetchUrl = guardedFetch({
      ...this.fetchOptions(call, settings, AbortSignal.any([signal, cardTimeout])),
      maxBytes: CARD_MAX_BYTES,
      limitNote: 'for a card',
    });
    try {
      const checked = await fetchCheckedCard(call.ref, fetchUrl);
      this.cards.set(call.ref.origin, checked);
      return checked;
    } catch (error) {
      if (cardTimeout.aborted && !signal.aborted) {
        throw new OutboundError(
          'handler',
          504,
          `${call.callee} did not send its card within ${CARD_TIMEOUT_MS} ms.`,
        );
      }
      throw error;
    }
  }

  /** The SDK's client for this call: its transports and card resolver on the guarded fetch. */
  private client(
    call: Call,
    settings: OutboundSettings,
    card: CheckedCard,
    signal: AbortSignal,
  ): Promise<Client> {
    const fetchImpl = guardedFetch({
      ...this.fetchOptions(call, settings, signal),
      maxBytes: settings.outboundMaxReplyBytes,
      limitNote: '(setting outboundMaxReplyBytes)',
    });
    const legacyCompat = { enabled: true };
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [
          new JsonRpcTransportFactory({ fetchImpl, legacyCompat }),
          new RestTransportFactory({ fetchImpl, legacyCompat }),
        ],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat }),
      }),
    );
    return factory.createFromAgentCard(card.raw as unknown as AgentCard);
  }

  private fetchOptions(call: Call, settings: OutboundSettings, signal: AbortSignal) {
    return { frame: this.frame, settings, call, credentials: this.options.credentials, signal };
  }

  private credentialFor(ref: A2AAgentRef) {
    return this.options.credentials.schemeFor(new URL(ref.origin));
  }

  /** What the log keeps of an answer: its task id, a preview of its reply, why a task ended badly. */
  private note(call: Call, answer: A2AAnswer): void {
    if (answer.taskId) call.taskId = answer.taskId;
    if (answer.reply !== undefined) call.preview.reply = oneLineJson(answer.reply, PREVIEW_CHARS).text;
    if (answer.state === 'failed' || answer.state === 'rejected' || answer.state === 'canceled') {
      call.note ??= {
        message: `Task ${answer.taskId ?? '(unnamed)'} ended ${answer.state}.`,
        parts: answer.status !== undefined ? [{ what: 'its status message', value: answer.status }] : [],
      };
    }
  }
}

/** A poll or a look-up must answer about the task asked for. */
function sameTask(call: Call, taskId: string, answer: A2AAnswer): A2AAnswer {
  if (answer.taskId === taskId) return answer;
  throw new OutboundError('handler', 502, `${call.callee} answered about another task than ${taskId}.`, {
    untrusted: answer.oddities,
  });
}

function timedOut(signal: AbortSignal): boolean {
  const reason: unknown = signal.reason;
  return signal.aborted && reason instanceof Error && reason.name === 'TimeoutError';
}

/** How a message is sent: within the call's deadline, the call-chain extension activated. */
interface SendOptions {
  signal: AbortSignal;
  serviceParameters: ServiceParameters;
}

const CHAIN_PARAMETERS: ServiceParameters = ServiceParameters.create(withA2AExtensions(CHAIN_EXTENSION_URI));

/**
 * The model's text as one A2A message (v1.0 shapes; the SDK's transports write v0.3 where needed), with the
 * chain of calls it belongs to in its metadata under the call-chain extension (protocol/call-chain.ts).
 */
function messageRequest(input: SendInput, mode: SendMode, chain: CallChain): SendMessageRequest {
  return {
    tenant: '',
    message: {
      messageId: randomUUID(),
      contextId: input.contextId ?? '',
      taskId: input.taskId ?? '',
      role: Role.ROLE_USER,
      parts: [
        {
          content: { $case: 'text', value: input.message },
          mediaType: 'text/plain',
          filename: '',
          metadata: undefined,
        },
      ],
      metadata: { [CHAIN_EXTENSION_URI]: { id: chain.id, hop: chain.hop } },
      extensions: [CHAIN_EXTENSION_URI],
      referenceTaskIds: [],
    },
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately: mode === 'submit',
    },
    metadata: undefined,
  };
}
