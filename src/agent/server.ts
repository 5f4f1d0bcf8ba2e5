import Koa, { type Context } from 'koa';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ProtocolError,
  errorBody,
  okResponse,
  type AgentCard,
  type Mode,
  type Signer,
} from '../protocol/index.js';
import { CallbackSender, type CallbackOptions } from './callbacks.js';
import type { AgentEventSink } from './events.js';
import { healthBody } from './health.js';
import type { PublicAddressHealth } from '../protocol/console-api.js';
import { Intake, type IntakeOptions } from './intake.js';
import { introMarkdown } from './intro.js';
import { hasBody } from './body.js';
import { createAgentListener, LISTENER_LIMITS, type ListenerLimits } from './listener.js';
import type { AccessCheck } from './access-check.js';
import {
  deliverCallback,
  failHeldTask,
  handleEnvelope,
  runHeldTask,
  type EnvelopeExchange,
} from './modes.js';
import type { PeerKeyResolver } from './peer-keys.js';
import type { PayloadScreen, PipelineDeps, PipelineSettings } from './pipeline.js';
import { sendSigned } from './respond.js';
import type { AgentRuntime } from './runtime.js';
import type { SkillRegistry } from './skill-registry.js';
import { escapedLine } from '../lib/text.js';
import { webhookRules } from '../lib/webhook.js';
import { LocalCallLimits, type CallLimits } from '../state/call-limits.js';
import { TaskStore } from '../state/task-store.js';
import type { StoredTask } from '../state/tasks.js';
import type { TaskState } from '../state/tasks.js';

export interface AgentSettings extends PipelineSettings {
  bodyLimitBytes: number;
  taskRetentionHours: number;
  /** Keep truncated previews of payloads and replies in the operator log (off by default). */
  keepMessageContents: boolean;
}

export interface AgentServerOptions {
  dataDir: string;
  /** The card as it is now (keys, URL and skills can change while running). */
  card(): AgentCard;
  signer(): Signer;
  skills: SkillRegistry;
  peerKeys: PeerKeyResolver;
  settings(): AgentSettings;
  /** Health's gateway line: `configured`, `missing GATEWAY_URL` or `missing GATEWAY_TOKEN`. */
  gatewayStatus(): string;
  /** False while the gateway does not answer or the agent for callers may not be reached. */
  gatewayServing?(): boolean;
  /** What the reachability check found of the public address (health.ts); `none` without one. */
  publicAddress?(): PublicAddressHealth;
  /** Whether shared state answers (always, in the data dir): health says `degraded` while it does not. */
  stateUp?(): boolean;
  agentVersion: string;
  events?: AgentEventSink;
  /** Who may reach the skills (the operator's consent); without one, every verified sender. */
  access?: AccessCheck;
  /** The injection screen over payloads. */
  screen?: PayloadScreen;
  /** The hop guard (calls/hop-guard.ts): chains of calls too deep, or come back round a loop, are refused. */
  chains?: PipelineDeps['chains'];
  /** Tasks kept per sender and in all (tests use small ones). */
  taskLimits?: { maxPerSender?: number; maxTotal?: number };
  /**
   * Shared state (Redis): the limits, budget and nonces, and the tasks. Without it both live in the data
   * dir, for this process alone.
   */
  state?: { limits: CallLimits; tasks: TaskState; recoverEveryMs?: number };
  /** Loopback callback URLs (also over http) for local testing: the rule A2A push notifications follow too. */
  devHttpPeers?: boolean;
  callbacks?: Partial<CallbackOptions>;
  keepAliveMs?: number;
  /** What an envelope may cost before its sender is verified (intake.ts); tests shorten the deadlines. */
  intake?: Partial<IntakeOptions>;
  /** The listener's deadlines (listener.ts); tests shorten them to call across them in seconds. */
  listener?: Partial<ListenerLimits>;
  now?: () => number;
}

const SWEEP_MS = 30_000;

/** The envelope endpoints (PROTOCOL.md §4) and the mode each takes. */
const ENVELOPE_PATHS = new Map<string, Mode>([
  ['/agent/message', 'sync'],
  ['/agent/task', 'async'],
  ['/agent/stream', 'stream'],
]);

/**
 * Another protocol's front door on this port (the A2A one, src/a2a): requests on the paths it owns go to it,
 * and shutdown drains its runs as it drains SAMVAD's.
 */
export interface MountedDoor {
  owns(path: string): boolean;
  /** Answers the request on the node response; never rejects. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Runs in flight: shutdown waits for them within its grace. */
  activeRuns(): number;
  /** The grace is over: what still runs is aborted (its task ends failed). */
  abort(): void;
  /** After the runs ended, before the task state closes. */
  close(): void;
}

/**
 * The agent port: the seven endpoints of PROTOCOL.md and nothing else. `app.callback()` is separate from
 * `listen()`, so tests can drive it either way.
 */
export class AgentServer {
  readonly app = new Koa();
  readonly limits: CallLimits;
  readonly tasks: TaskState;
  /** Bytes and slots taken by envelopes not yet verified; its gauges are what the tests watch. */
  readonly intake: Intake;
  private readonly runtime: AgentRuntime;
  private readonly startedAt = Date.now();
  private server: Server | undefined;
  private readonly sweeper: NodeJS.Timeout;
  private recoverer: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;
  private door: MountedDoor | undefined;

  constructor(private readonly options: AgentServerOptions) {
    const now = options.now ?? Date.now;
    const card = options.card();
    const limits = {
      perMinute: card.rateLimit.requestsPerMinute,
      perSender: card.rateLimit.requestsPerSender,
    };
    this.limits = options.state?.limits ?? new LocalCallLimits(options.dataDir, limits, now);
    this.tasks = options.state?.tasks ?? new TaskStore(options.dataDir, { now, ...options.taskLimits });
    this.intake = new Intake(options.intake);
    const events = options.events ?? {};
    this.runtime = {
      pipeline: {
        isOwnId: (id) => id === options.card().id,
        ownId: () => options.card().id,
        skills: options.skills,
        keys: options.peerKeys,
        limits: this.limits,
        settings: options.settings,
        access: options.access,
        screen: options.screen,
        chains: options.chains,
        now,
      },
      tasks: this.tasks,
      callbacks: new CallbackSender({
        signer: options.signer,
        onEvent: (e) => events.callback?.(e),
        ...webhookRules(options.devHttpPeers ?? false),
        ...options.callbacks,
      }),
      events,
      signer: options.signer,
      card: options.card,
      bodyLimitBytes: () => options.settings().bodyLimitBytes,
      retentionMs: () => options.settings().taskRetentionHours * 3600_000,
      keepContents: () => options.settings().keepMessageContents,
      sse: { keepAliveMs: options.keepAliveMs },
      openStream: (req, res) => this.intake.openStream(req, res),
      inflight: new Set(),
      draining: false,
    };
    this.app.silent = true;
    this.app.use((ctx) => this.route(ctx));
    // On Redis, the first look happens once connected, then every half lease (another replica may stop).
    const recoverEvery = options.state?.recoverEveryMs;
    if (!recoverEvery) this.recoverTasks();
    else {
      this.recoverer = setInterval(() => this.recoverTasks(), recoverEvery);
      this.recoverer.unref();
    }
    // A failed write in a sweep (a full disk) is reported, never thrown out of the timer (that ends the process).
    this.sweeper = setInterval(() => {
      try {
        this.sweep();
      } catch (error) {
        console.error(`Agent: a periodic sweep failed: ${(error as Error).message}`);
      }
    }, SWEEP_MS);
    this.sweeper.unref();
  }

  /** Serves another protocol's front door on this port (once, before `listen`). */
  mount(door: MountedDoor): void {
    this.door = door;
  }

  /** True once `close` began: new calls are refused, those in flight finish within the grace. */
  get draining(): boolean {
    return this.runtime.draining;
  }

  /** Applies changed card limits live. */
  applyLimits(): void {
    const { rateLimit } = this.options.card();
    this.limits.setLimits(rateLimit.requestsPerMinute, rateLimit.requestsPerSender);
  }

  /** Tasks waiting for the operator's approval of their sender: task id to sender. */
  async heldTasks(): Promise<Map<string, string>> {
    const held = await this.tasks.heldTasks();
    return new Map(held.map((task) => [task.taskId, task.sender]));
  }

  /** The operator approved their sender: these held tasks run now. */
  async runHeld(taskIds: string[]): Promise<void> {
    for (const id of taskIds) {
      const task = await this.tasks.get(id);
      if (task?.held) await runHeldTask(this.runtime, task);
    }
  }

  /** Denied or expired: these held tasks fail with AUTH_FAILED (and their callbacks are sent). */
  async failHeld(taskIds: string[], message: string): Promise<void> {
    for (const id of taskIds) {
      const task = await this.tasks.get(id);
      if (task?.held) await failHeldTask(this.runtime, task, message);
    }
  }

  get listening(): boolean {
    return this.server?.listening ?? false;
  }

  get activeRequests(): number {
    return this.runtime.inflight.size;
  }

  async listen(port: number, host: string): Promise<string> {
    // The deadlines bound how long a caller may take to SEND its request (slow headers or bodies would hold
    // sockets, and behind a tunnel its few sockets); long agent turns in the response are not affected.
    const server = createAgentListener(this.callback(), { ...LISTENER_LIMITS, ...this.options.listener });
    this.server = server;
    server.listen(port, host);
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
    const address = server.address() as AddressInfo;
    const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${shownHost}:${address.port}`;
  }

  /**
   * The agent port's request listener, apart from `listen()` so tests can drive it without a port. The
   * envelope POSTs go straight to their handler, and the A2A front door's paths straight to it: neither needs
   * anything of a Koa context (making one and answering through it cost about 20 µs a call). Everything
   * else, and any envelope URL with a query, goes through the Koa app (whose route sends a door path in an
   * unusual form, an absolute URL, on to the door as well).
   */
  callback(): RequestListener {
    const koa = this.app.callback();
    return (req, res) => {
      const url = req.url ?? '';
      const mode = req.method === 'POST' ? ENVELOPE_PATHS.get(url) : undefined;
      if (mode === undefined) {
        const door = this.door;
        const path = pathOf(url);
        // One admission for every body on this port (issue 25, item 1): the door reads its bodies under the
        // intake's rules; no other path here reads one, so its connection closes after the answer rather
        // than read on (a body trickled to /nowhere held a tunnel socket for 20 s).
        if (door?.owns(path)) {
          if (hasBody(req)) this.intake.open(req, res);
          return void door.handle(req, res);
        }
        if (hasBody(req) && !ENVELOPE_PATHS.has(path)) res.setHeader('Connection', 'close');
        return void koa(req, res);
      }
      this.envelope({ req, res, path: url }, mode).catch((error: unknown) => {
        // handleEnvelope answers every refusal itself: this is the last guard, as Koa's would be.
        // The URL is the caller's: one escaped line, cut (it can be kilobytes long).
        console.error(
          `Agent: ${escapedLine(`${req.url}`, 120)} failed: ${escapedLine((error as Error).message, 300)}`,
        );
        if (res.headersSent) res.destroy();
        else res.writeHead(500).end();
      });
    };
  }

  /**
   * Stops taking requests, lets in-flight work finish for up to `graceMs`, then aborts the rest (which
   * answer with AGENT_UNAVAILABLE, and running tasks become `failed`), and flushes every store.
   */
  close(graceMs = 10_000): Promise<void> {
    // Idempotent: a signal handler and the caller may both ask.
    this.closing ??= this.shutdown(graceMs);
    return this.closing;
  }

  private async shutdown(graceMs: number): Promise<void> {
    this.runtime.draining = true;
    clearInterval(this.sweeper);
    clearInterval(this.recoverer);
    const closed = this.server
      ? new Promise<void>((resolve) => this.server?.close(() => resolve()))
      : Promise.resolve();
    this.server?.closeIdleConnections();
    const door = this.door;
    const busy = () => this.runtime.inflight.size > 0 || (door?.activeRuns() ?? 0) > 0;
    const deadline = Date.now() + graceMs;
    while (busy() && Date.now() < deadline) await delay(25);
    for (const controller of this.runtime.inflight) controller.abort(new Error('agent shutting down'));
    door?.abort();
    const abortDeadline = Date.now() + 2000;
    while (busy() && Date.now() < abortDeadline) await delay(10);
    this.server?.closeAllConnections();
    await closed;
    door?.close();
    this.runtime.callbacks.close();
    await this.limits.close();
    await this.tasks.close();
  }

  private async route(ctx: Context): Promise<void> {
    const { path, method } = ctx;
    const post = (mode: Mode) => {
      if (method !== 'POST') return this.methodNotAllowed(ctx, 'POST');
      ctx.respond = false; // the handler writes its reply on the node response
      return this.envelope({ req: ctx.req, res: ctx.res, path }, mode);
    };
    switch (path) {
      case '/agent/message':
        return post('sync');
      case '/agent/task':
        return post('async');
      case '/agent/stream':
        return post('stream');
      case '/.well-known/agent.json':
        return this.get(ctx, () => this.serveCard(ctx));
      case '/agent/intro':
        return this.get(ctx, () => {
          ctx.type = 'text/markdown; charset=utf-8';
          ctx.body = introMarkdown(this.options.card());
        });
      case '/agent/health':
        return this.get(ctx, () => this.serveHealth(ctx));
    }
    if (path.startsWith('/agent/task/'))
      return this.get(ctx, () => this.serveTask(ctx, path.slice('/agent/task/'.length)));
    if (this.door?.owns(path)) {
      ctx.respond = false; // the front door writes its reply on the node response
      return this.door.handle(ctx.req, ctx.res);
    }
    ctx.status = 404;
    ctx.body = {
      error: 'Not Found: this port serves only the SAMVAD agent endpoints listed in /.well-known/agent.json.',
    };
  }

  /**
   * An envelope POST holds an intake ticket from its headers until its sender's key is looked up (the only
   * wait in verification: a card fetch) or it is answered; GETs never take one. An unsigned call (when the
   * operator allows them) has no key to look up: it is anonymous throughout and holds its slot until answered.
   */
  private envelope(exchange: EnvelopeExchange, mode: Mode): Promise<void> {
    // The ticket (found again by the body reader and the pipeline through the request) ends its read/verify
    // phase when the sender's key lookup is over: see ReceiveInput.onVerified.
    this.intake.open(exchange.req, exchange.res);
    return handleEnvelope(exchange, this.runtime, mode);
  }

  private get(ctx: Context, serve: () => void | Promise<void>): void | Promise<void> {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return this.methodNotAllowed(ctx, 'GET');
    return serve();
  }

  private methodNotAllowed(ctx: Context, allow: string): void {
    ctx.status = 405;
    ctx.set('Allow', allow);
    ctx.body = { error: `Use ${allow} on ${ctx.path}.` };
  }

  private serveCard(ctx: Context): void {
    const card = this.options.card();
    ctx.set('Cache-Control', `public, max-age=${card.cardTTL}`);
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.body = card;
  }

  private serveHealth(ctx: Context): void {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = healthBody({
      agentId: this.options.card().id,
      agentVersion: this.options.agentVersion,
      startedAt: this.startedAt,
      gateway: this.options.gatewayStatus(),
      gatewayServing: this.options.gatewayServing?.(),
      stateUp: this.options.stateUp?.(),
      publicAddress: this.options.publicAddress?.(),
      activeRequests: this.runtime.inflight.size,
      queuedTasks: this.tasks.activeCount,
      draining: this.runtime.draining,
    });
  }

  private async serveTask(ctx: Context, taskId: string): Promise<void> {
    ctx.set('Cache-Control', 'no-store');
    const signer = this.options.signer();
    try {
      const task = await this.tasks.get(taskId);
      if (!task) {
        const message = `No task "${taskId.slice(0, 80)}": it never existed or its result has expired.`;
        sendSigned(ctx, signer, 404, errorBody('SKILL_NOT_FOUND', message));
        return;
      }
      sendSigned(ctx, signer, 200, await this.tasks.view(task));
    } catch (error) {
      // Shared state that does not answer (Redis down): the caller polls again later.
      if (!(error instanceof ProtocolError)) throw error;
      if (error.retryAfterSeconds) ctx.set('Retry-After', String(error.retryAfterSeconds));
      sendSigned(ctx, signer, error.httpStatus, errorBody(error.code, error.message));
    }
  }

  /**
   * Interrupted tasks become `failed` and owed callbacks are sent: after a restart, and on Redis whenever
   * another replica's lease on a task has run out.
   */
  private recoverTasks(): void {
    const deliver = (owed: StoredTask[]) => {
      for (const task of owed) void this.deliverOwed(task);
    };
    const owed = this.tasks.recover();
    // While shared state is down the console says so already; the next look tries again.
    if (owed instanceof Promise)
      owed.then(deliver, (error: Error) => {
        if (!(error instanceof ProtocolError))
          console.error(`Agent: recovering tasks failed: ${error.message}`);
      });
    else deliver(owed);
  }

  private async deliverOwed(task: StoredTask): Promise<void> {
    try {
      const envelope =
        task.status === 'done'
          ? okResponse(task.traceId, task.spanId, await this.tasks.result(task))
          : errorBody(
              task.error?.code ?? 'AGENT_UNAVAILABLE',
              task.error?.message ?? 'Task failed.',
              task.traceId,
              task.spanId,
            );
      await deliverCallback(this.runtime, task, envelope);
    } catch (error) {
      console.error(`Callback for task ${task.taskId}: ${(error as Error).message}`);
    }
  }

  private sweep(): void {
    this.limits.sweep();
    this.options.peerKeys.sweep();
    const swept = this.tasks.sweep(this.options.settings().taskRetentionHours * 3600_000);
    if (swept instanceof Promise) swept.catch(() => undefined);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A request target's path: what comes before its query. */
function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}
