import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  DefaultRequestHandler,
  type PushNotificationStore,
  type ServerCallContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import type { SseOptions } from '../agent/sse.js';
import type { ContentRules } from '../calls/attachments.js';
import {
  A2A_PATHS,
  SKILLS_PATH,
  buildA2ACard,
  isLegacyVersion,
  skillPaths,
  type A2ACardInput,
} from './agent-card.js';
import { CardRoute, type CardRouteOptions } from './card-route.js';
import type { A2ACaller, A2AGate, ChatCore } from './chat-core.js';
import { ChatExecutor } from './chat-executor.js';
import { GatedHandler } from './gated-handler.js';
import type { KnockHandling } from './knock.js';
import { closeUnread, readJsonBody, sendJson } from './http-io.js';
import { JsonRpcRoute } from './jsonrpc-route.js';
import { A2APushSender, type DeliverPush } from './push-sender.js';
import { RestRoute } from './rest-route.js';
import { passStep, trafficEvent, v1MethodName, type A2ACallRecord } from './call-record.js';
import type { EnvelopeEvent } from '../agent/events.js';
import { requestedVersion } from './version-param.js';

export interface A2AFrontDoorOptions<C extends A2ACaller> extends CardRouteOptions {
  gate: A2AGate<C>;
  core: ChatCore<C>;
  /** Where A2A tasks live (the SDK's interface); every event of a running task is saved through it. */
  tasks: TaskStore;
  /** Refuses a new task past its caller's cap (A2ATaskStore.admit), before the gate admits the turn. */
  taskCapacity?(owner: string): Promise<() => void>;
  /** Knocks (knock.ts): keyless callers' messages under `pairing` wait for the operator. */
  knocks?: KnockHandling;
  /** Push notification configs, kept with their task (A2APushConfigs). */
  pushConfigs: PushNotificationStore;
  /** Sends a task's push notifications in order (the shared, address-guarded webhook delivery). */
  deliverPush: DeliverPush;
  /**
   * With replicas: a cancel of a run at another replica is relayed there and awaited, and cancels relayed
   * from another replica reach this front door's runs.
   */
  replicas?: {
    cancelElsewhere(taskId: string, context: ServerCallContext): Promise<void>;
    serve(cancelHere: (taskId: string) => boolean): void;
  };
  /** Why a push URL is refused (the SAMVAD callback rule: public https; loopback under --dev-http-peers). */
  pushUrlProblem(url: string): string | undefined;
  bodyLimitBytes(): number;
  /**
   * A stream is about to open for this request (SendStreamingMessage, SubscribeToTask): counted against the
   * agent port's caps on open streams (intake.ts), which throws the refusal to answer instead.
   */
  openStream?(req: IncomingMessage, res: ServerResponse): void;
  sse?: SseOptions;
  /** How a message's files are taken now (calls/attachments.ts); default: inline only. */
  attachments?(): ContentRules;
  /** Failures that are not the caller's to read, for the operator's log (never holds a secret). */
  onError?(error: unknown): void;
  /** Each JSON-RPC or HTTP+JSON request once answered (refusals included): the operator's traffic entry. */
  onCall?(event: EnvelopeEvent): void;
  /**
   * The card of a published skill but the default one (its own door under `/a2a/skills/<id>`: README "A2A
   * skills"), or undefined for a skill that is unknown, paused or not published: its paths answer 404.
   */
  skillCard?(id: string): A2ACardInput | undefined;
}

/** A door's paths: the agent's own (the default skill), or a published skill's. */
interface DoorPaths {
  jsonRpc: string;
  rest: string;
  /** The skill whose door it is; undefined: the default skill's. */
  skill?: string;
}

const MAIN_DOOR: DoorPaths = { jsonRpc: A2A_PATHS.jsonRpc, rest: A2A_PATHS.rest };

/**
 * The A2A front door on the agent port: the card, its JWKS, JSON-RPC (v1.0, and v0.3 through the SDK's
 * compatibility layer) and HTTP+JSON, all on the SDK's one request handler, behind the gate. It plugs into
 * the agent's Koa router as `if (a2a.owns(ctx.path)) { ctx.respond = false; return a2a.handle(ctx.req,
 * ctx.res); }`: no second listener, no Express.
 */
export class A2AFrontDoor<C extends A2ACaller> {
  readonly executor: ChatExecutor<C>;
  private readonly cards: CardRoute;
  /** Each published skill's own card, signed once per change of it (a skill removed drops its route). */
  private readonly skillCards = new Map<string, CardRoute>();
  private readonly jsonRpc: JsonRpcRoute;
  private readonly rest: RestRoute;
  private readonly handler: GatedHandler<C>;

  constructor(private readonly options: A2AFrontDoorOptions<C>) {
    const report = (error: unknown) => options.onError?.(error);
    this.executor = new ChatExecutor(options.core, { onError: (_taskId, error) => report(error) });
    this.cards = new CardRoute(options);
    const { pushConfigs, replicas } = options;
    const sender = new A2APushSender({ store: pushConfigs, deliver: options.deliverPush, onError: report });
    replicas?.serve((taskId) => this.executor.cancelRun(taskId));
    // The SDK reads only the card's capabilities (streaming, push): the URLs it holds are never served.
    const sdk = new DefaultRequestHandler(
      buildA2ACard(options.card()),
      options.tasks,
      this.executor,
      undefined,
      pushConfigs,
      sender,
    );
    this.handler = new GatedHandler(sdk, {
      gate: options.gate,
      tasks: options.tasks,
      pushUrlProblem: options.pushUrlProblem,
      taskCapacity: options.taskCapacity,
      ...(options.attachments ? { attachments: options.attachments } : {}),
      ...(options.knocks ? { knocks: options.knocks } : {}),
      cancelElsewhere: replicas && ((id, context) => replicas.cancelElsewhere(id, context)),
      onError: report,
    });
    this.jsonRpc = new JsonRpcRoute(this.handler, { sse: options.sse, report });
    this.rest = new RestRoute(this.handler, { sse: options.sse, report });
  }

  /** The paths this front door answers (anything else stays the agent port's). */
  owns(path: string): boolean {
    return (
      path === A2A_PATHS.card ||
      path === A2A_PATHS.jwks ||
      path === A2A_PATHS.jsonRpc ||
      path === A2A_PATHS.rest ||
      path.startsWith(`${A2A_PATHS.rest}/`) ||
      (this.options.skillCard !== undefined && path.startsWith(SKILLS_PATH))
    );
  }

  /** The v1.0 card as served now (signed). */
  card(): Record<string, unknown> {
    return this.cards.card();
  }

  /** Answers one request on an owned path; never rejects (the last guard answers 500, as Koa's would). */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      await this.route(req, res);
    } catch (error) {
      this.options.onError?.(error);
      if (res.headersSent) res.destroy();
      else
        sendJson(res, 500, {
          error: 'The agent failed to answer; the operator can see why in the agent log.',
        });
    }
  }

  /**
   * Runs in flight, and streams not yet read to their end, their caller still there or gone (a streamed
   * task's events are saved as they are read): shutdown waits for both before the task state closes.
   */
  activeRuns(): number {
    return this.executor.activeCount + this.handler.openStreamCount;
  }

  /** Aborts every run in flight (the agent is stopping): their tasks end `failed`. */
  close(): void {
    this.executor.abortAll(new Error('agent shutting down'));
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://agent.invalid');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    if (path === A2A_PATHS.card || path === A2A_PATHS.jwks) {
      if (method !== 'GET' && method !== 'HEAD') return notAllowed(req, res, 'GET, HEAD');
      return path === A2A_PATHS.card ? this.cards.serveCard(req, res) : this.cards.serveJwks(req, res);
    }
    if (path.startsWith(SKILLS_PATH)) return this.skillDoor(req, res, url);
    return this.door(req, res, url, MAIN_DOOR);
  }

  /**
   * `/a2a/skills/<id>/...`: the door of a published skill, as the agent's own but for its card and that
   * every request on it is for that skill. A skill that is unknown, paused or not published has no door:
   * 404, its card included (SKILL_NOT_FOUND in SAMVAD's words).
   */
  private async skillDoor(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname;
    const id = path.slice(SKILLS_PATH.length).split('/', 1)[0] ?? '';
    const input = this.options.skillCard?.(id);
    if (!input) {
      closeUnread(req, res);
      return sendJson(res, 404, {
        error: `No skill "${id.slice(0, 64)}" is published here; the agent's card at ${A2A_PATHS.card} lists its skills.`,
      });
    }
    const paths = skillPaths(id);
    if (path === paths.card) {
      const method = req.method ?? 'GET';
      if (method !== 'GET' && method !== 'HEAD') return notAllowed(req, res, 'GET, HEAD');
      return this.skillCardRoute(id, input).serveCard(req, res);
    }
    if (path === paths.jsonRpc || path === paths.rest || path.startsWith(`${paths.rest}/`)) {
      return this.door(req, res, url, { jsonRpc: paths.jsonRpc, rest: paths.rest, skill: id });
    }
    closeUnread(req, res);
    return sendJson(res, 404, {
      error: `No A2A operation at ${path.slice(0, 120)}; see ${paths.card} for skill "${id}".`,
    });
  }

  /** The skill's card route, made once per skill; the routes of skills no longer published are dropped. */
  private skillCardRoute(id: string, input: A2ACardInput): CardRoute {
    let route = this.skillCards.get(id);
    if (!route) {
      for (const known of this.skillCards.keys()) {
        if (!this.options.skillCard?.(known)) this.skillCards.delete(known);
      }
      route = new CardRoute({ ...this.options, card: () => this.options.skillCard?.(id) ?? input });
      this.skillCards.set(id, route);
    }
    return route;
  }

  /** A door's JSON-RPC and HTTP+JSON transports: the caller authenticated for its skill, then the SDK. */
  private async door(req: IncomingMessage, res: ServerResponse, url: URL, door: DoorPaths): Promise<void> {
    const path = url.pathname;
    const method = req.method ?? 'GET';
    const skill = door.skill === undefined ? {} : { skill: door.skill };
    if (path === door.jsonRpc) {
      if (method !== 'POST') return notAllowed(req, res, 'POST');
      const call = this.track(req, res, path, 'jsonrpc', door.skill);
      const info = {
        headers: req.headers,
        remoteAddress: req.socket.remoteAddress,
        method: `POST ${path}`,
        ...skill,
      };
      let caller: C;
      let body: unknown;
      try {
        caller = await this.options.gate.authenticate(info);
        if (call) call.caller = caller;
        passStep(call, 'key');
        body = await readJsonBody(req, this.options.bodyLimitBytes(), counted(call));
        // Known before the SDK runs, for a request it refuses before calling the handler.
        const name = v1MethodName((body as { method?: unknown } | null)?.method);
        if (call) call.method = name ?? 'unknown';
        if (name && STREAMING.has(name)) this.options.openStream?.(req, res);
      } catch (error) {
        if (call) {
          call.error = error;
          call.version = isLegacyVersion(requestedVersion(req)) ? '0.3' : '1.0';
        }
        closeUnread(req, res);
        return this.jsonRpc.refuse(req, res, error);
      }
      return this.jsonRpc.serve(req, res, caller, body, call);
    }
    const sub = path.slice(door.rest.length);
    const route = this.rest.match(method, sub);
    if ('allow' in route) {
      if (route.allow.length > 0) return notAllowed(req, res, route.allow.join(', '));
      closeUnread(req, res);
      const card = door.skill === undefined ? A2A_PATHS.card : skillPaths(door.skill).card;
      return sendJson(res, 404, {
        error: `No A2A HTTP+JSON operation at ${path.slice(0, 120)}; see ${card} (v0.3 callers: use the JSON-RPC interface).`,
      });
    }
    const call = this.track(req, res, path, 'rest', door.skill);
    if (call) call.method = route.name;
    let caller: C;
    let body: unknown = {};
    try {
      caller = await this.options.gate.authenticate({
        headers: req.headers,
        remoteAddress: req.socket.remoteAddress,
        method: `${method} ${path}`,
        ...skill,
      });
      if (call) call.caller = caller;
      passStep(call, 'key');
      if (method === 'POST') body = await readJsonBody(req, this.options.bodyLimitBytes(), counted(call));
      if (STREAMING.has(route.name)) this.options.openStream?.(req, res);
    } catch (error) {
      if (call) call.error = error;
      closeUnread(req, res);
      return this.rest.refuse(res, error);
    }
    return this.rest.serve(req, res, caller, route, url.searchParams, body, call);
  }

  /**
   * A record of the request that becomes one traffic entry when its response is over (a stream: when it
   * ends); none without `onCall`. The bytes in are the body's as read (a chunked body declares none, and a
   * declared length can lie); the bytes out are counted on the socket (headers included).
   */
  private track(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    transport: A2ACallRecord['transport'],
    skill: string | undefined,
  ): A2ACallRecord | undefined {
    const onCall = this.options.onCall;
    if (!onCall) return undefined;
    const call: A2ACallRecord = {
      startedAt: Date.now(),
      started: performance.now(),
      path,
      transport,
      bytesIn: 0,
      passed: [],
    };
    if (skill !== undefined) call.skill = skill;
    const socket = req.socket;
    const before = socket.bytesWritten;
    res.once('close', () => {
      const status = res.writableFinished ? res.statusCode : 499;
      try {
        onCall(trafficEvent(call, status, Math.max(0, socket.bytesWritten - before)));
      } catch (error) {
        this.options.onError?.(error);
      }
    });
    return call;
  }
}

/** The operations answered with a stream: each holds its connection (a tunnel socket) while it lasts. */
const STREAMING = new Set(['SendStreamingMessage', 'SubscribeToTask']);

/** Adds the body's bytes to the record as they are read. */
function counted(call: A2ACallRecord | undefined): ((bytes: number) => void) | undefined {
  return call && ((bytes) => (call.bytesIn += bytes));
}

function notAllowed(req: IncomingMessage, res: ServerResponse, allow: string): void {
  closeUnread(req, res);
  res.setHeader('Allow', allow);
  sendJson(res, 405, { error: `Use ${allow} here.` });
}
