/**
 * Calls the operator's own agent makes to other SAMVAD agents through the bridge (the MCP tools): signed
 * with the bridge's key and identity by src/client, every signed reply verified against the callee's card
 * (an unsigned one used and said to be, reply-signature.ts), each call checked against the operator's
 * outbound policy first and reported as one traffic entry.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EnvelopeEvent } from '../agent/events.js';
import { AgentCallError, AgentClient, type CallOptions } from '../client/index.js';
import { publicOnlyDispatcher } from '../lib/public-dispatcher.js';
import type { HopGuard } from '../calls/hop-guard.js';
import {
  CHAIN_FIELD,
  DEFAULT_ENDPOINTS,
  type AgentCard,
  type Mode,
  type ReplySignature,
  type Signer,
  type TaskStatus,
} from '../protocol/index.js';
import {
  acceptedTaskId,
  calleeRefusal,
  checkSkill,
  readRefusal,
  checkTask,
  toOutboundError,
  type CheckedTask,
} from './callee-answers.js';
import { OutboundFrame, PREVIEW_CHARS, jsonSize, type CallLog, type EntryFields } from './outbound-frame.js';
import {
  OutboundError,
  checkOutboundPolicy,
  parseAgentRef,
  type OutboundSettings,
} from './outbound-policy.js';
import type { OutboundBudget } from './outbound-budget.js';
import { signatureNote, withReply, type ReplyCheck, type UsedReply } from './reply-signature.js';
import { oneLineJson } from './untrusted.js';

export interface OutboundOptions {
  /** Our agent:// id and signer, read per call: the id follows the tunnel and the key rotates. */
  identity: () => { id: string; signer: Signer };
  settings: () => OutboundSettings;
  /** One traffic entry per outbound request, refusals included (direction `out`). */
  onEvent: (event: EnvelopeEvent) => void;
  /** Where each call's chain comes from (calls/hop-guard.ts); none: a new chain every call. */
  chains?: Pick<HopGuard, 'next'>;
  /** Each agent's daily budget of calls and tokens, shared with the A2A tools. */
  budget: OutboundBudget;
  now?: () => number;
}

export interface CallInput {
  agent: string;
  skill: string;
  payload: Record<string, unknown>;
  mode?: Mode;
  /** A delegation token (compact JWS) that lets us act for another agent (PROTOCOL.md §9). */
  delegationToken?: string;
  signal?: AbortSignal;
}

export interface CallOutcome {
  agent: string;
  skill: string;
  mode: Mode;
  /** `done`: the result is here; `pending`/`running`: an async task that was not done within the bound. */
  state: 'done' | 'pending' | 'running';
  result?: unknown;
  taskId?: string;
  /** The task was not followed to the end because the per-minute cap ran out (outboundPerMinute). */
  capReached?: true;
  /** Verified or unsigned: a reply whose signature does not check is an OutboundError, never an outcome. */
  reply: UsedReply;
  durationMs: number;
}

export interface TaskOutcome {
  agent: string;
  task: CheckedTask;
  reply: UsedReply;
  durationMs: number;
}

const POLL_FIRST_MS = 250;
const POLL_MAX_MS = 2000;

export class OutboundCalls {
  /** What calls out share with the other protocol's tools: settings, the per-minute cap, the log. */
  readonly frame: OutboundFrame;
  /** Each agent's daily budget of calls and tokens (the console's Calls out shows it). */
  readonly budget: OutboundBudget;
  private readonly now: () => number;
  private cached: { key: string; client: AgentClient } | undefined;

  constructor(private readonly options: OutboundOptions) {
    this.frame = new OutboundFrame({
      ownId: () => options.identity().id,
      settings: options.settings,
      onEvent: options.onEvent,
      chains: options.chains,
      budget: options.budget,
      now: options.now,
    });
    this.now = this.frame.now;
    this.budget = options.budget;
  }

  /** Our own agent id: what callees see as `from`. */
  get ownId(): string {
    return this.options.identity().id;
  }

  /** The most characters of a reply a tool shows: the reply limit, so a whole reply fits. */
  get replyChars(): number {
    return this.options.settings().outboundMaxReplyBytes;
  }

  /** Fetches and validates another agent's card (GET /.well-known/agent.json). */
  async card(
    agent: string,
    signal?: AbortSignal,
  ): Promise<{ agent: string; card: AgentCard; cardUrl: string; durationMs: number }> {
    return this.run({ agent, endpoint: '/.well-known/agent.json' }, async (ctx) => {
      const card = await this.withDeadline(ctx, signal, () => ctx.client.fetchCard(ctx.callee));
      ctx.bytesIn = jsonSize(card);
      // Where the bridge fetched it, from the id it parsed: never the url the card claims.
      const cardUrl = `${ctx.client.baseUrl(ctx.callee)}/.well-known/agent.json`;
      return { agent: ctx.callee, card, cardUrl, durationMs: this.now() - ctx.started };
    });
  }

  /** Calls a skill in sync, stream (collected) or async (submitted, then polled up to the timeout) mode. */
  async call(input: CallInput): Promise<CallOutcome> {
    const mode = input.mode ?? 'sync';
    const endpoint = {
      sync: DEFAULT_ENDPOINTS.message,
      stream: DEFAULT_ENDPOINTS.stream,
      async: DEFAULT_ENDPOINTS.task,
    }[mode];
    return this.run({ agent: input.agent, endpoint, skill: input.skill, mode }, async (ctx) => {
      this.frame.checkBudget(ctx.callee);
      ctx.bytesOut = JSON.stringify(input.payload).length;
      ctx.preview.payload = JSON.stringify(input.payload);
      const outcome = await this.withDeadline(ctx, input.signal, async (signal) => {
        // The card first: a callee whose card does not validate is never sent anything.
        const card = await ctx.client.fetchCard(ctx.callee);
        checkSkill(ctx.callee, card, input.skill, mode);
        const chain = this.frame.sending(ctx, ctx.callee);
        // Our trace id, so the log entry and the callee's own log name the same call; the chain it is in.
        const opts: CallOptions = { envelope: { traceId: ctx.traceId, [CHAIN_FIELD]: chain }, signal };
        if (input.delegationToken) opts.delegationToken = input.delegationToken;
        if (mode === 'sync') return this.sync(ctx, input, opts);
        if (mode === 'stream') return this.stream(ctx, input, opts);
        return this.async(ctx, input, opts);
      });
      return { ...outcome, agent: ctx.callee, skill: input.skill, mode };
    });
  }

  /** GET /agent/task/:taskId on another agent: the task's state, its reply verified and checked. */
  async task(agent: string, taskId: string, signal?: AbortSignal): Promise<TaskOutcome> {
    const endpoint = DEFAULT_ENDPOINTS.taskStatus.replace(':taskId', encodeURIComponent(taskId));
    return this.run({ agent, endpoint, mode: 'async' }, async (ctx) => {
      ctx.taskId = taskId;
      this.frame.budgeted(ctx, ctx.callee);
      const { task: record, response } = await this.withDeadline(ctx, signal, (s) =>
        ctx.client.getTaskReply(ctx.callee, taskId, { signal: s }),
      );
      const reply = this.useReply(ctx, response);
      ctx.bytesIn = jsonSize(record);
      const task = checkTask(ctx.callee, taskId, record);
      if (task.result !== undefined) ctx.preview.reply = oneLineJson(task.result, PREVIEW_CHARS).text;
      // A verified answer about a failed task: the poll succeeded; the log says why the task failed.
      if (task.error) {
        ctx.note = {
          code: task.error.code,
          message: `Task ${taskId} failed${task.error.code ? ` with ${task.error.code}` : ''}.`,
          parts: task.error.parts,
        };
      }
      return { agent: ctx.callee, task, reply, durationMs: this.now() - ctx.started };
    });
  }

  private async sync(
    ctx: RunContext,
    input: CallInput,
    opts: CallOptions,
  ): Promise<Pick<CallOutcome, 'state' | 'result' | 'durationMs' | 'reply'>> {
    const response = await ctx.client.call(ctx.callee, input.skill, input.payload, opts);
    ctx.status = response.status;
    const reply = this.useReply(ctx, response);
    ctx.bytesIn = jsonSize(response.body);
    const body = response.body as { status?: unknown; result?: unknown } | null;
    if (response.status !== 200 || body?.status !== 'ok')
      throw calleeRefusal(ctx.callee, response.status, readRefusal(response.body), reply);
    ctx.preview.reply = oneLineJson(body.result, PREVIEW_CHARS).text;
    return { state: 'done', result: body.result, reply, durationMs: this.now() - ctx.started };
  }

  private async stream(
    ctx: RunContext,
    input: CallInput,
    opts: CallOptions,
  ): Promise<Pick<CallOutcome, 'state' | 'result' | 'durationMs' | 'reply'>> {
    const max = this.options.settings().outboundMaxReplyBytes;
    const chunks: string[] = [];
    const finals = { verified: false, unsigned: false };
    let size = 0;
    let final: { result?: unknown; error?: unknown } | undefined;
    try {
      for await (const event of ctx.client.stream(ctx.callee, input.skill, input.payload, opts)) {
        ctx.status = 200;
        size += event.raw.length;
        if (size > max) {
          throw new OutboundError(
            'size',
            502,
            `The stream from ${ctx.callee} is larger than the ${max} bytes allowed (setting outboundMaxReplyBytes).`,
          );
        }
        const data = event.data as {
          chunk?: unknown;
          done?: unknown;
          result?: unknown;
          error?: unknown;
          status?: unknown;
        } | null;
        if (!event.verified && !event.unsigned) {
          if (typeof data?.chunk === 'string') chunks.push(data.chunk);
          continue;
        }
        // A final event: the named result/error (the chat skill) or the unnamed done (generic, the SDKs').
        finals.verified ||= event.verified;
        finals.unsigned ||= event.unsigned;
        if (event.event === 'error' || data?.error !== undefined) final = { error: data ?? {} };
        else final = { result: data?.result };
      }
    } catch (error) {
      if (error instanceof AgentCallError) ctx.status = error.status;
      throw error;
    }
    ctx.bytesIn = size;
    // Signed and unsigned final events together: an unsigned one could stand in for what was signed.
    if (!final || (finals.verified && finals.unsigned)) {
      const why = final ? 'mixes signed and unsigned final events' : 'ended without a final event';
      throw new OutboundError(
        'handler',
        502,
        `The stream from ${ctx.callee} ${why}, so its reply was discarded.`,
        {
          replySignature: 'failed',
          discarded: true,
        },
      );
    }
    const reply = this.useReply(ctx, finals);
    if (final.error !== undefined) throw calleeRefusal(ctx.callee, 200, readRefusal(final.error), reply);
    const result = final.result !== undefined ? final.result : { text: chunks.join('') };
    ctx.preview.reply = oneLineJson(result, PREVIEW_CHARS).text;
    return { state: 'done', result, reply, durationMs: this.now() - ctx.started };
  }

  private async async(
    ctx: RunContext,
    input: CallInput,
    opts: CallOptions,
  ): Promise<Pick<CallOutcome, 'state' | 'result' | 'durationMs' | 'taskId' | 'capReached' | 'reply'>> {
    const { outboundTimeoutMs } = this.options.settings();
    const signal = opts.signal as AbortSignal;
    const submitted = await ctx.client.submitTask(ctx.callee, input.skill, input.payload, opts);
    ctx.status = 202;
    let reply = this.useReply(ctx, submitted.response);
    const taskId = acceptedTaskId(ctx.callee, submitted.taskId);
    ctx.taskId = taskId;
    // Follow the task for most of the time allowed, and keep the rest to hand its id back in any case.
    const pollUntil = ctx.started + outboundTimeoutMs * 0.8;
    let state: TaskStatus = 'pending';
    for (let wait = POLL_FIRST_MS; ; wait = Math.min(wait * 2, POLL_MAX_MS)) {
      if (this.now() + wait > pollUntil) break;
      let task: CheckedTask;
      try {
        await sleep(wait, undefined, { signal });
        const polled = await ctx.client.getTaskReply(ctx.callee, taskId, { signal });
        reply = this.useReply(ctx, polled.response);
        task = checkTask(ctx.callee, taskId, polled.task);
      } catch (error) {
        // Out of time, cancelled, or out of requests: the task was accepted, so its id goes back.
        if (signal.aborted) break;
        if (error instanceof OutboundError && error.details.capReached) {
          ctx.note = { message: `Stopped following task ${taskId}: ${error.message}` };
          const durationMs = this.now() - ctx.started;
          return { state: stateOf(state), taskId, capReached: true, reply, durationMs };
        }
        throw error;
      }
      state = task.status;
      if (task.status === 'done') {
        ctx.preview.reply = oneLineJson(task.result, PREVIEW_CHARS).text;
        return { state: 'done', result: task.result, taskId, reply, durationMs: this.now() - ctx.started };
      }
      if (task.status === 'failed') {
        throw calleeRefusal(ctx.callee, 200, task.error ?? { parts: [] }, reply, taskId);
      }
    }
    return { state: stateOf(state), taskId, reply, durationMs: this.now() - ctx.started };
  }

  /** One more reply of the call used (or refused): the call's signature so far and the tool's note on it. */
  private useReply(ctx: RunContext, check: ReplyCheck): UsedReply {
    const { outboundRequireSignedReplies } = this.options.settings();
    const signature = withReply(ctx.callee, ctx.reply, check, outboundRequireSignedReplies);
    ctx.reply = signature;
    return { signature, note: signatureNote(signature, ctx.callee, ctx.client.baseUrl(ctx.callee)) };
  }

  /**
   * The shared frame of every tool call: the target and the policy (refusals logged), the per-minute cap,
   * then the request; whatever happens, one traffic entry.
   */
  private async run<T>(target: Target, work: (ctx: RunContext) => Promise<T>): Promise<T> {
    const settings = this.options.settings();
    const ctx: RunContext = {
      ...this.frame.begin(target.agent),
      client: undefined as unknown as AgentClient,
      traceId: randomBytes(16).toString('hex'),
    };
    try {
      ctx.callee = parseAgentRef(target.agent, settings.devHttpPeers);
      checkOutboundPolicy(settings, ctx.callee);
      ctx.client = this.client(settings);
      const value = await work(ctx);
      this.record(target, ctx, undefined);
      return value;
    } catch (error) {
      const failure = toOutboundError(error, {
        agent: ctx.callee,
        transport: (cause) => this.frame.transportFailure(cause, ctx),
        useReply: (check) => {
          try {
            return this.useReply(ctx, check);
          } catch (refused) {
            return refused as OutboundError;
          }
        },
      });
      if (!failure) {
        // Unexpected: logged as a failure here; the tool says so and the operator's log says why.
        this.record(
          target,
          ctx,
          new OutboundError('handler', 500, `The call to ${ctx.callee} failed unexpectedly.`),
        );
        throw error;
      }
      failure.details.agent ??= ctx.callee;
      this.record(target, ctx, failure);
      throw failure;
    }
  }

  /** The overall bound: the tool call's own signal (the MCP request went away) and the outbound timeout. */
  private async withDeadline<T>(
    ctx: RunContext,
    outer: AbortSignal | undefined,
    work: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    return work(this.frame.deadline(ctx, outer));
  }

  private client(settings: OutboundSettings): AgentClient {
    const { id } = this.options.identity();
    const key = [id, settings.devHttpPeers, settings.outboundTimeoutMs, settings.outboundMaxReplyBytes].join(
      '\n',
    );
    if (this.cached?.key === key) return this.cached.client;
    const identity = this.options.identity;
    // The key of the moment, so a rotation applies to the next request without a new client.
    const signer: Signer = {
      get kid() {
        return identity().signer.kid;
      },
      sign: (data) => identity().signer.sign(data),
    };
    const client = new AgentClient({
      id,
      signer,
      devHttp: settings.devHttpPeers,
      timeoutMs: settings.outboundTimeoutMs,
      maxReplyBytes: settings.outboundMaxReplyBytes,
      // Unsigned replies come back marked, and useReply decides (outboundRequireSignedReplies).
      acceptUnsigned: true,
      dispatcher: publicOnlyDispatcher(settings.devHttpPeers),
      // Every request the bridge sends counts against the cap: card fetches, calls, submissions, polls.
      beforeRequest: () => this.frame.takeRequest(),
    });
    this.cached = { key, client };
    return client;
  }

  private record(target: Target, ctx: RunContext, failure: OutboundError | undefined): void {
    const fields: EntryFields = {
      endpoint: target.endpoint,
      skill: target.skill,
      mode: target.mode,
      signatureForm: target.skill ? 'headers' : 'none',
    };
    if (target.skill) fields.traceId = ctx.traceId;
    const signature = failure?.details.replySignature ?? ctx.reply;
    if (signature) fields.replySignature = signature;
    this.frame.record(ctx, fields, failure);
  }
}

const stateOf = (status: TaskStatus): 'pending' | 'running' => (status === 'running' ? 'running' : 'pending');

interface Target {
  agent: string;
  endpoint: string;
  skill?: string;
  mode?: Mode;
}

/** One SAMVAD tool call: what the log gathers (CallLog, `callee` the agent:// id once parsed) and the client. */
interface RunContext extends CallLog {
  client: AgentClient;
  traceId: string;
  /** The signature of the call's replies so far: `unsigned` once any of them was. */
  reply?: ReplySignature;
}
