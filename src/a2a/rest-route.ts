import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  A2A_CONTENT_TYPE,
  AgentCard,
  ListTaskPushNotificationConfigsResponse,
  ListTasksResponse,
  SendMessageRequest,
  SendMessageResponse,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { RequestMalformedError, VersionNotSupportedError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import type { SseOptions } from '../agent/sse.js';
import { restErrorReply } from './a2a-errors.js';
import { callContext, scopeOf } from './call-context.js';
import type { A2ACallRecord } from './call-record.js';
import { decode } from './decode.js';
import type { A2ACaller } from './chat-core.js';
import { sendJson, streamSse } from './http-io.js';
import { checkParams, getTaskQuery, listTasksQuery } from './request-checks.js';
import { requestedVersion } from './version-param.js';

type Answer = { status: number; body?: unknown } | { stream: AsyncGenerator<StreamResponse> };
type Params = { id: string; configId: string; query: URLSearchParams; body: Record<string, unknown> };
type Handler = (h: A2ARequestHandler, c: ServerCallContext, p: Params) => Promise<Answer>;
/** `name`: the operation's v1.0 method name (the traffic log's). */
type Matched = { handle: Handler; name: string; params: Pick<Params, 'id' | 'configId'> };

const TASK = '([^/:]+)';
/** The v1.0 HTTP+JSON binding (§11.3), paths relative to the interface URL. No tenants: none are declared. */
const ROUTES: { method: string; path: RegExp; handle: Handler; name: string }[] = [
  { method: 'POST', path: /^\/message:send$/, handle: send, name: 'SendMessage' },
  { method: 'POST', path: /^\/message:stream$/, handle: stream, name: 'SendStreamingMessage' },
  { method: 'GET', path: /^\/tasks$/, handle: list, name: 'ListTasks' },
  { method: 'GET', path: new RegExp(`^/tasks/${TASK}$`), handle: get, name: 'GetTask' },
  { method: 'POST', path: new RegExp(`^/tasks/${TASK}:cancel$`), handle: cancel, name: 'CancelTask' },
  {
    method: 'POST',
    path: new RegExp(`^/tasks/${TASK}:subscribe$`),
    handle: subscribe,
    name: 'SubscribeToTask',
  },
  {
    method: 'GET',
    path: new RegExp(`^/tasks/${TASK}:subscribe$`),
    handle: subscribe,
    name: 'SubscribeToTask',
  },
  {
    method: 'POST',
    path: new RegExp(`^/tasks/${TASK}/pushNotificationConfigs$`),
    handle: createPush,
    name: 'CreateTaskPushNotificationConfig',
  },
  {
    method: 'GET',
    path: new RegExp(`^/tasks/${TASK}/pushNotificationConfigs$`),
    handle: listPush,
    name: 'ListTaskPushNotificationConfigs',
  },
  {
    method: 'GET',
    path: new RegExp(`^/tasks/${TASK}/pushNotificationConfigs/${TASK}$`),
    handle: getPush,
    name: 'GetTaskPushNotificationConfig',
  },
  {
    method: 'DELETE',
    path: new RegExp(`^/tasks/${TASK}/pushNotificationConfigs/${TASK}$`),
    handle: deletePush,
    name: 'DeleteTaskPushNotificationConfig',
  },
  { method: 'GET', path: /^\/extendedAgentCard$/, handle: extendedCard, name: 'GetExtendedAgentCard' },
];

/**
 * The HTTP+JSON transport on node http. SDK 1.3.0 ships this binding only inside its Express router (its
 * RestTransportHandler is not exported), so the routing is ours, thin: each route decodes with the SDK's
 * ProtoJSON codecs, calls the same request handler as JSON-RPC, and encodes the answer with them. Served
 * at A2A 1.0 only: the v0.3 REST codec is Express-only too, so v0.3 callers use JSON-RPC (the card says so).
 */
export class RestRoute {
  constructor(
    private readonly handler: A2ARequestHandler,
    private readonly options: { sse?: SseOptions; report(error: unknown): void },
  ) {}

  /** The route for `method` and `path`; otherwise the methods the path takes (none: no such path). */
  match(method: string, path: string): Matched | { allow: string[] } {
    const allow: string[] = [];
    for (const route of ROUTES) {
      const found = route.path.exec(path);
      if (!found) continue;
      if (route.method === method) {
        const params = { id: found[1] ?? '', configId: found[2] ?? '' };
        return { handle: route.handle, name: route.name, params };
      }
      allow.push(route.method);
    }
    return { allow };
  }

  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    caller: A2ACaller,
    route: Matched,
    query: URLSearchParams,
    body: unknown,
    call?: A2ACallRecord,
  ): Promise<void> {
    const context = callContext(caller, '1.0', call);
    try {
      checkVersion(req);
      const { id, configId } = route.params;
      const params = {
        id: decodeSegment(id),
        configId: decodeSegment(configId),
        query,
        body: asObject(body),
      };
      // A body's fields as JSON-RPC's params: one rule on both bindings (§5.1).
      checkParams(route.name, params.body);
      const answer = await route.handle(this.handler, context, params);
      if ('status' in answer) return sendJson(res, answer.status, answer.body ?? {}, {}, A2A_CONTENT_TYPE);
      const rest = answer.stream[Symbol.asyncIterator]();
      const first = await rest.next();
      await streamSse(res, {
        first,
        rest,
        encode: (event) => StreamResponse.toJSON(event),
        errorData: (error) => this.errorReply(error, context).body,
        onLeave: () => scopeOf(context).leave?.(),
        sse: this.options.sse,
      });
    } catch (error) {
      if (call) call.error ??= error;
      const reply = this.errorReply(error, context);
      sendJson(res, reply.status, reply.body, reply.headers, A2A_CONTENT_TYPE);
    }
  }

  refuse(res: ServerResponse, error: unknown): void {
    const reply = restErrorReply(error, this.options.report);
    sendJson(res, reply.status, reply.body, reply.headers, A2A_CONTENT_TYPE);
  }

  private errorReply(error: unknown, context: ServerCallContext) {
    return restErrorReply(scopeOf(context).refusal ?? error, this.options.report);
  }
}

async function send(h: A2ARequestHandler, c: ServerCallContext, p: Params): Promise<Answer> {
  const result = await h.sendMessage(decode(SendMessageRequest, p.body, 'request body'), c);
  const payload =
    'messageId' in result
      ? { $case: 'message' as const, value: result }
      : { $case: 'task' as const, value: result };
  return { status: 200, body: SendMessageResponse.toJSON({ payload }) };
}

async function stream(h: A2ARequestHandler, c: ServerCallContext, p: Params): Promise<Answer> {
  return { stream: h.sendMessageStream(decode(SendMessageRequest, p.body, 'request body'), c) };
}

async function get(h: A2ARequestHandler, c: ServerCallContext, p: Params): Promise<Answer> {
  const { historyLength } = getTaskQuery(p.query);
  return { status: 200, body: Task.toJSON(await h.getTask({ tenant: '', id: p.id, historyLength }, c)) };
}

async function list(h: A2ARequestHandler, c: ServerCallContext, p: Params): Promise<Answer> {
  const request = listTasksQuery(p.query);
  const includeArtifacts = request.includeArtifacts === true;
  const response = await h.listTasks(request, c);
  // §3.1.4: nextPageToken always present; artifacts present (maybe empty) exactly when asked for.
  const json = ListTasksResponse.toJSON(response) as { tasks?: { artifacts?: unknown[] }[] };
  const tasks = (json.tasks ?? []).map((task) => (includeArtifacts ? { artifacts: [], ...task } : task));
  return {
    status: 200,
    body: {
      ...json,
      tasks,
      nextPageToken: response.nextPageToken,
      pageSize: response.pageSize,
      totalSize: response.totalSize,
    },
  };
}

async function cancel(h: A2ARequestHandler, c: ServerCallContext, p: Params): Promise<Answer> {
  return {
    status: 200,
    body: Task.toJSON(await h.cancelTask({ tenant: '', id: p.id, metadata: undefined }, c)),
  };
}

async function subscribe(h: A2ARequestHandler, c: ServerCallContext, p: Params): Promise<Answer> {
  return { stream: h.resubscribe({ tenant: '', id: p.id }, c) };
}

async function createPush(h: A2ARequestHandler, c: ServerCallContext, p: Params): Promise<Answer> {
  const config = decode(TaskPushNotificationConfig, { ...p.body, taskId: p.id }, 'push notification config');
  const created = await h.createTaskPushNotificationConfig(config, c);
  return { status: 201, body: TaskPushNotificationConfig.toJSON(created) };
}

async function listPush(h: A2ARequestHandler, c: ServerCallContext, p: Params): Promise<Answer> {
  const configs = await h.listTaskPushNotificationConfigs(
    { tenant: '', taskId: p.id, pageSize: 0, pageToken: '' },
    c,
  );
  return { status: 200, body: ListTaskPushNotificationConfigsResponse.toJSON(configs) };
}

async function getPush(h: A2ARequestHandler, c: ServerCallContext, p: Params): Promise<Answer> {
  const config = await h.getTaskPushNotificationConfig({ tenant: '', taskId: p.id, id: p.configId }, c);
  return { status: 200, body: TaskPushNotificationConfig.toJSON(config) };
}

async function deletePush(h: A2ARequestHandler, c: ServerCallContext, p: Params): Promise<Answer> {
  await h.deleteTaskPushNotificationConfig({ tenant: '', taskId: p.id, id: p.configId }, c);
  return { status: 204 };
}

async function extendedCard(h: A2ARequestHandler, c: ServerCallContext): Promise<Answer> {
  return {
    status: 200,
    body: AgentCard.toJSON(await h.getAuthenticatedExtendedAgentCard({ tenant: '' }, c)),
  };
}

/** HTTP+JSON paths differ between v1.0 and v0.3, so a request without A2A-Version here is v1.0. */
function checkVersion(req: IncomingMessage): void {
  const requested = requestedVersion(req);
  if (!requested || /^1\.0(\.\d+)?$/.test(requested)) return;
  throw new VersionNotSupportedError(
    `HTTP+JSON is served at A2A 1.0 only (you sent ${requested.slice(0, 20)}); v0.3 clients use the JSON-RPC interface listed in the card.`,
  );
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new RequestMalformedError('The path holds a malformed percent-encoding.');
  }
}

function asObject(body: unknown): Record<string, unknown> {
  if (typeof body === 'object' && body !== null && !Array.isArray(body))
    return body as Record<string, unknown>;
  throw new RequestMalformedError('The request body must be a JSON object.');
}
