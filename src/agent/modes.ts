import { proxyHop } from './client-address.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  CHAIN_FIELD,
  ProtocolError,
  errorBody,
  okResponse,
  schemaInvalid,
  signObject,
  type Envelope,
  type Mode,
} from '../protocol/index.js';
import { chargeUsage } from '../calls/admission.js';
import { audienceRefusal, skillAccount } from '../calls/skill-access.js';
import { DEFAULT_SKILL } from '../protocol/skill-ids.js';
import { randomHex } from '../lib/random-hex.js';
import { readRawBody } from './body.js';
import { ticketFor } from './intake.js';
import { CallbackUrlError } from './callbacks.js';
import type { EnvelopeEvent } from './events.js';
import type { HeldCall } from './access-check.js';
import { passStep, receive, type Accepted, type ReceiveTrace } from './pipeline.js';
import { writeSigned } from './respond.js';
import { callerError, operatorDiagnosis, runSkill } from './run-skill.js';
import type { AgentRuntime } from './runtime.js';
import { SseWriter } from './sse.js';
import type { StoredTask } from '../state/tasks.js';

const newSpanId = () => randomHex(8);

/** One envelope request: the node request and response, and its path without the query (Form A's `@path`). */
export interface EnvelopeExchange {
  req: IncomingMessage;
  res: ServerResponse;
  path: string;
}

/**
 * POST /agent/message, /agent/task and /agent/stream: one receive pipeline, then the mode's own delivery.
 * Every envelope ends in exactly one operator log event. The replies are written on the node response
 * (the server sends these requests here without a Koa context).
 */
export async function handleEnvelope(
  exchange: EnvelopeExchange,
  runtime: AgentRuntime,
  mode: Mode,
): Promise<void> {
  const { req, res, path } = exchange;
  const started = performance.now();
  // The entry's time is when the call started, as for calls out: the log lists calls by it.
  const startedAt = Date.now();
  const trace: ReceiveTrace = { form: 'none' };
  const controller = new AbortController();
  // The caller going away aborts the handler (and so the gateway call) in sync and stream modes.
  (res as Carrier)[CONTROLLER] = controller;
  res.on('close', callerLeft);
  runtime.inflight.add(controller);
  let bytesIn = 0;
  let accepted: Accepted | undefined;
  // Built field by field (every envelope comes here once): spreading the optional parts cost µs per call.
  const log: Log = (fields) => {
    const sink = runtime.events.envelope;
    if (!sink) return;
    const event: EnvelopeEvent = {
      time: new Date(startedAt).toISOString(),
      endpoint: path,
      sender: trace.sender,
      skill: trace.skill,
      mode,
      signatureForm: trace.form,
      traceId: trace.traceId,
      forwardedFor: forwardedFor(req),
      durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      bytesIn,
      bytesOut: 0,
      verdict: fields.verdict,
      status: fields.status,
    };
    if (trace.screen) event.screen = trace.screen;
    if (trace.files) event.files = trace.files;
    if (trace.onBehalfOf) event.onBehalfOf = trace.onBehalfOf;
    if (trace.chain) event.chain = trace.chain;
    // The gateway answered a sync or stream call before it is logged; an async task runs after its 202.
    const handled = fields.verdict === 'accepted' && mode !== 'async';
    event.passed = handled ? [...(trace.passed ?? []), 'handler'] : [...(trace.passed ?? [])];
    sink(Object.assign(event, fields));
  };

  try {
    if (runtime.draining) {
      throw new ProtocolError('AGENT_UNAVAILABLE', 503, 'The agent is shutting down; retry in a moment.', {
        retryAfterSeconds: 5,
      });
    }
    // A stream holds its connection (behind a tunnel, one of its few sockets) while it lasts: capped per
    // client address and in all, before anything is read.
    if (mode === 'stream') runtime.openStream?.(req, res);
    const body = await readRawBody(req, runtime.bodyLimitBytes());
    bytesIn = body.length;
    passStep(trace, 'size');
    accepted = await receive(
      runtime.pipeline,
      {
        mode,
        method: req.method ?? 'POST',
        path,
        headers: req.headers,
        body,
        remoteAddress: req.socket.remoteAddress ?? 'unknown',
        forwardedFor: proxyHop(req),
        onVerified: endVerifyPhase(req),
      },
      trace,
    );
    if (mode === 'sync') await replySync(res, runtime, accepted, controller.signal, log);
    else if (mode === 'async') await replyTask(res, runtime, accepted, log);
    else await replyStream(res, runtime, accepted, controller.signal, log);
  } catch (error) {
    const refusal = callerError(error);
    if (!res.headersSent && !controller.signal.aborted) {
      const headers: Record<string, string> = {};
      if (refusal.retryAfterSeconds !== undefined) headers['Retry-After'] = String(refusal.retryAfterSeconds);
      // A body not read to the end (too large, or refused before it was read): close the connection rather
      // than read on, so a body trickled in slowly holds nothing.
      if (refusal.httpStatus === 413 || !req.complete) headers.Connection = 'close';
      const bytesOut = writeSigned(
        res,
        runtime.signer(),
        refusal.httpStatus,
        errorBody(refusal.code, refusal.message, trace.traceId ?? '', newSpanId()),
        headers,
      );
      log({
        verdict: refusal.step ?? 'handler',
        code: refusal.code,
        status: refusal.httpStatus,
        message: refusal.message,
        diagnosis: operatorDiagnosis(error),
        bytesOut,
      });
    } else {
      log({
        verdict: refusal.step ?? 'handler',
        code: refusal.code,
        status: 499,
        message: 'caller disconnected',
        diagnosis: operatorDiagnosis(error),
      });
    }
  } finally {
    runtime.inflight.delete(controller);
    res.off('close', callerLeft);
    // Released once its skill ran (or here, if it never did); an async task's run releases its own.
    if (accepted && mode !== 'async') releaseReservation(runtime, accepted);
  }
}

/** The response's abort controller, for its 'close' listener (one function for every request). */
const CONTROLLER = Symbol('envelope call');
type Carrier = ServerResponse & { [CONTROLLER]?: AbortController };

function callerLeft(this: Carrier): void {
  if (!this.writableFinished) this[CONTROLLER]?.abort(new Error('caller disconnected'));
}

/** Ends the request's read/verify slot (its intake ticket's `verified`) when the sender's key lookup is over. */
function endVerifyPhase(req: IncomingMessage): () => void {
  const ticket = ticketFor(req);
  return () => ticket.verified();
}

type Log = (fields: Partial<EnvelopeEvent> & Pick<EnvelopeEvent, 'verdict' | 'status'>) => void;

async function replySync(
  res: ServerResponse,
  runtime: AgentRuntime,
  accepted: Accepted,
  signal: AbortSignal,
  log: Log,
): Promise<void> {
  let result: unknown;
  try {
    result = await runSkill(accepted, 'sync', {
      signal,
      reportUsage: usageReporter(runtime, accepted),
      promptFloor: runtime.pipeline.limits.promptFloor(),
      chains: runtime.pipeline.chains,
    });
  } finally {
    // Before the reply leaves: the sender's next call must not meet this one's reservation.
    releaseReservation(runtime, accepted);
  }
  if (signal.aborted) throw signal.reason;
  const body = okResponse(accepted.envelope.traceId, newSpanId(), result);
  const bytesOut = writeSigned(res, runtime.signer(), 200, body);
  log({
    verdict: 'accepted',
    status: 200,
    bytesOut,
    admittedBy: accepted.admittedBy,
    ...preview(runtime, accepted, result),
  });
}

async function replyTask(
  res: ServerResponse,
  runtime: AgentRuntime,
  accepted: Accepted,
  log: Log,
): Promise<void> {
  const { envelope, held } = accepted;
  try {
    if (envelope.callbackUrl) {
      try {
        runtime.callbacks.check(envelope.callbackUrl);
      } catch (error) {
        if (error instanceof CallbackUrlError) throw schemaInvalid(error.message, 'input');
        throw error;
      }
    }
    await runtime.tasks.admit(accepted.sender, runtime.retentionMs());
    const task = await runtime.tasks.create(
      {
        sender: accepted.sender,
        skill: envelope.skill,
        traceId: envelope.traceId,
        spanId: newSpanId(),
        callbackUrl: envelope.callbackUrl ?? undefined,
        ...(held ? { held: heldEnvelope(accepted, held) } : {}),
      },
      held?.taskId,
    );
    const bytesOut = writeSigned(res, runtime.signer(), 202, { taskId: task.taskId, status: 'accepted' });
    const fields = { status: 202, bytesOut, taskId: task.taskId, ...preview(runtime, accepted) };
    if (held) {
      // Waits (status `pending`) until the operator approves the sender (then it runs) or not.
      log({
        verdict: 'accepted',
        held: true,
        message: `held for the operator's approval (request ${held.code})`,
        ...fields,
      });
      return;
    }
    log({ verdict: 'accepted', admittedBy: accepted.admittedBy, ...fields });
    // runTask records every outcome itself; this catch is the last guard (a disk that refuses writes).
    runTask(runtime, accepted, task).catch((error: unknown) =>
      console.error(`Task ${task.taskId}: ${(error as Error).message}`),
    );
  } catch (error) {
    if (held) runtime.pipeline.access?.release(accepted.sender, held.taskId);
    releaseReservation(runtime, accepted);
    throw error;
  }
}

// What a held task needs to run later: the verified envelope's own fields, nothing a sender added to it,
// and no signature or credential (auth token, delegation token: what they proved is kept as facts).
function heldEnvelope(accepted: Accepted, held: HeldCall): NonNullable<StoredTask['held']> {
  const { from, to, skill, mode, nonce, timestamp, traceId, spanId, parentSpanId, payload } =
    accepted.envelope;
  const envelope: Envelope = { from, to, skill, mode, nonce, timestamp, traceId, spanId, payload };
  if (parentSpanId) envelope.parentSpanId = parentSpanId;
  // The chain it came with (checked at receipt): its turn's calls out continue it once it runs.
  if (accepted.chain) envelope[CHAIN_FIELD] = accepted.chain;
  const { keys, pinned } = held.signedWith;
  return { envelope, code: held.code, keys, ...(pinned ? { pinned } : {}), ...callerFields(accepted) };
}

/** What a held task keeps of its verified caller, so it runs with the same framing once approved. */
function callerFields(from: Pick<Accepted, 'callerName' | 'onBehalfOf' | 'delegationScope'>) {
  return {
    ...(from.callerName ? { callerName: from.callerName } : {}),
    ...(from.onBehalfOf ? { onBehalfOf: from.onBehalfOf, delegationScope: from.delegationScope ?? [] } : {}),
  };
}

/** The operator approved a held task's sender: it runs now, as if it had just been accepted. */
export async function runHeldTask(runtime: AgentRuntime, task: StoredTask): Promise<void> {
  const held = task.held;
  const envelope = await runtime.tasks.heldEnvelope(task);
  const entry = held ? runtime.pipeline.skills.get(task.skill) : undefined;
  if (!held || !envelope || !entry) {
    await failHeldTask(runtime, task, 'The skill this task asked for is no longer offered; submit it again.');
    return;
  }
  // The approval is bound to the keys its request announced: a task another key signed while it waited (a
  // new holder of the id, a released tunnel address) does not run on it.
  const signedWith = { keys: held.keys ?? [], pinned: held.pinned === true };
  if (runtime.pipeline.access && !runtime.pipeline.access.admitsNow(task.sender, signedWith)) {
    await failHeldTask(
      runtime,
      task,
      `This task was signed with a key that the operator's approval of ${task.sender} does not cover: someone else may hold this id now, or its keys changed while the task waited. Sign with an approved key and submit it again.`,
    );
    return;
  }
  // Approved for some skills only, it may not run one the approval does not open (calls/skill-access.ts).
  const { audience, id: skill } = entry.skill;
  const grant = runtime.pipeline.access?.grant({
    sender: task.sender,
    unsigned: false,
    mode: 'async',
    payload: {},
    signedWith,
  });
  const refusal = audience && grant && audienceRefusal({ id: skill, audience }, grant, 'trust');
  if (refusal) {
    await failHeldTask(runtime, task, refusal.message);
    return;
  }
  const accepted: Accepted = {
    envelope,
    sender: task.sender,
    entry,
    admittedBy: 'approved',
    ...callerFields(held),
  };
  if (envelope[CHAIN_FIELD]) accepted.chain = envelope[CHAIN_FIELD];
  if (skill !== DEFAULT_SKILL) accepted.account = skillAccount(task.sender, skill);
  runTask(runtime, accepted, task).catch((error: unknown) =>
    console.error(`Task ${task.taskId}: ${(error as Error).message}`),
  );
}

/** A held task whose sender was denied, or whose request expired: `failed` with AUTH_FAILED. */
export async function failHeldTask(runtime: AgentRuntime, task: StoredTask, message: string): Promise<void> {
  // Every replica may see a request expire: only the one that finished the task sends its callback.
  if (!(await runtime.tasks.finish(task, { error: { code: 'AUTH_FAILED', message } }))) return;
  const envelope = errorBody('AUTH_FAILED', message, task.traceId, task.spanId);
  if (task.callbackUrl) {
    deliverCallback(runtime, task, envelope).catch((error: unknown) =>
      console.error(`Callback for task ${task.taskId}: ${(error as Error).message}`),
    );
  }
}

/** Runs an accepted task to its end; never rejects: every outcome is written to the task store. */
async function runTask(runtime: AgentRuntime, accepted: Accepted, task: StoredTask): Promise<void> {
  const controller = new AbortController();
  runtime.inflight.add(controller);
  let envelopeOut: object;
  // False when another replica failed the task first (this one's lease had lapsed): its callback is theirs.
  let finished: boolean;
  try {
    // Another replica started it already (a held task approved at two consoles at once): it is theirs.
    // A store that cannot say (Redis down) fails it below, once it answers again.
    if (!(await runtime.tasks.start(task))) return;
    const result = await runSkill(accepted, 'async', {
      signal: controller.signal,
      progress: (fraction) => runtime.tasks.setProgress(task, fraction),
      reportUsage: usageReporter(runtime, accepted),
      promptFloor: runtime.pipeline.limits.promptFloor(),
      chains: runtime.pipeline.chains,
    });
    finished = await runtime.tasks.finish(task, { result });
    envelopeOut = okResponse(task.traceId, task.spanId, result);
  } catch (error) {
    const failure = controller.signal.aborted
      ? new ProtocolError(
          'AGENT_UNAVAILABLE',
          503,
          'The agent shut down before this task finished; submit it again.',
        )
      : callerError(error);
    finished = await runtime.tasks.finish(task, { error: { code: failure.code, message: failure.message } });
    envelopeOut = errorBody(failure.code, failure.message, task.traceId, task.spanId);
    runtime.events.envelope?.({
      time: new Date(task.createdAt).toISOString(),
      endpoint: '/agent/task',
      sender: task.sender,
      skill: task.skill,
      mode: 'async',
      signatureForm: 'none',
      verdict: 'handler',
      code: failure.code,
      status: failure.httpStatus,
      message: failure.message,
      diagnosis: operatorDiagnosis(error),
      durationMs: Date.now() - task.createdAt,
      bytesIn: 0,
      bytesOut: 0,
      traceId: task.traceId,
      taskId: task.taskId,
      ...(accepted.onBehalfOf ? { onBehalfOf: accepted.onBehalfOf } : {}),
      // The checks its receipt passed (not kept for a held task approved later: the log then claims none).
      ...(accepted.passed ? { passed: accepted.passed } : {}),
    });
  } finally {
    runtime.inflight.delete(controller);
    releaseReservation(runtime, accepted);
  }
  if (finished && task.callbackUrl) await deliverCallback(runtime, task, envelopeOut);
}

export async function deliverCallback(
  runtime: AgentRuntime,
  task: StoredTask,
  envelope: object,
): Promise<void> {
  if (!task.callbackUrl) return;
  const made = task.callback?.attempts ?? 0;
  const { outcome, attempts } = await runtime.callbacks.deliver(
    task.taskId,
    task.callbackUrl,
    envelope,
    made + 1,
  );
  // Interrupted by a shutdown: still owed, resumed after the restart from the next attempt.
  await runtime.tasks.setCallback(task, outcome === 'interrupted' ? 'pending' : outcome, attempts);
}

async function replyStream(
  res: ServerResponse,
  runtime: AgentRuntime,
  accepted: Accepted,
  signal: AbortSignal,
  log: Log,
): Promise<void> {
  const sse = new SseWriter(res, runtime.sse);
  const named = accepted.entry.skill.streamStyle === 'named';
  const signer = runtime.signer();
  if (named) sse.send({ status: 'processing' }, 'status');
  try {
    let result: unknown;
    try {
      result = await runSkill(accepted, 'stream', {
        signal,
        emit: (chunk) => sse.send({ chunk, done: false }),
        reportUsage: usageReporter(runtime, accepted),
        promptFloor: runtime.pipeline.limits.promptFloor(),
        chains: runtime.pipeline.chains,
      });
    } finally {
      releaseReservation(runtime, accepted);
    }
    if (signal.aborted) throw signal.reason;
    if (named) sse.send(signObject({ status: 'ok', result }, signer), 'result');
    sse.send(signObject({ done: true, result }, signer));
    log({
      verdict: 'accepted',
      status: 200,
      bytesOut: sse.bytesOut,
      admittedBy: accepted.admittedBy,
      ...preview(runtime, accepted, result),
    });
  } catch (error) {
    const failure = callerError(error);
    const detail = { code: failure.code, message: failure.message };
    if (named) sse.send(signObject({ status: 'error', ...detail, error: detail }, signer), 'error');
    sse.send(signObject({ done: true, error: detail }, signer));
    const status = signal.aborted ? 499 : failure.httpStatus;
    log({
      verdict: 'handler',
      code: failure.code,
      status,
      message: signal.aborted ? 'caller disconnected' : failure.message,
      diagnosis: operatorDiagnosis(error),
      bytesOut: sse.bytesOut,
    });
  } finally {
    if (named) sse.send({}, 'done');
    sse.end();
  }
}

const PREVIEW_CHARS = 500;

/** Truncated contents for the operator's log, only when the operator chose to keep them. */
function preview(
  runtime: AgentRuntime,
  accepted: Accepted,
  result?: unknown,
): Pick<EnvelopeEvent, 'preview'> {
  if (!runtime.keepContents()) return {};
  const cut = (value: unknown) => {
    const text = JSON.stringify(value) ?? '';
    return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}...` : text;
  };
  return {
    preview: {
      payload: cut(withoutBytes(accepted.envelope.payload)),
      ...(result === undefined ? {} : { reply: cut(result) }),
    },
  };
}

/** The payload as its preview keeps it: never an attachment's bytes (Traffic lists the files, not them). */
function withoutBytes(payload: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(payload.attachments)) return payload;
  const attachments = payload.attachments.map((item: unknown) => {
    const data = (item as { data?: unknown } | null)?.data;
    return typeof data === 'string'
      ? { ...(item as object), data: `(${data.length} characters, not kept)` }
      : item;
  });
  return { ...payload, attachments };
}

/** Usage charged to the sender's account with the skill (the caller core's, as for A2A callers). */
function usageReporter(runtime: AgentRuntime, accepted: Accepted) {
  const account = accepted.account ?? accepted.sender;
  return (tokens: number, prompt?: number) => chargeUsage(runtime.pipeline.limits, account, tokens, prompt);
}

/** The call is over, its usage charged: what step 5 reserved for it is given back (once). */
function releaseReservation(runtime: AgentRuntime, accepted: Accepted): void {
  if (!accepted.reserved) return;
  const account = accepted.account ?? accepted.sender;
  runtime.pipeline.limits.release(account, accepted.reserved, accepted.reservedAt ?? 0);
  accepted.reserved = 0;
}

function forwardedFor(req: IncomingMessage): string | undefined {
  const value = xForwardedFor(req);
  return value ? value.split(',')[0]?.trim().slice(0, 64) : undefined;
}

function xForwardedFor(req: IncomingMessage): string | undefined {
  const value = req.headers['x-forwarded-for'];
  return Array.isArray(value) ? value.join(', ') : value;
}
