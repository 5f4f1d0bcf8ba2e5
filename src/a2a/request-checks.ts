import { TaskState, taskStateFromJSON, taskStateToJSON, type ListTasksRequest } from '@a2a-js/sdk';
import {
  LEGACY_METHOD_GET_AUTHENTICATED_EXTENDED_CARD,
  LEGACY_METHOD_MESSAGE_SEND,
  LEGACY_METHOD_MESSAGE_STREAM,
  LEGACY_METHOD_PUSH_NOTIFICATION_CONFIG_DELETE,
  LEGACY_METHOD_PUSH_NOTIFICATION_CONFIG_GET,
  LEGACY_METHOD_PUSH_NOTIFICATION_CONFIG_LIST,
  LEGACY_METHOD_PUSH_NOTIFICATION_CONFIG_SET,
  LEGACY_METHOD_TASKS_CANCEL,
  LEGACY_METHOD_TASKS_GET,
  LEGACY_METHOD_TASKS_RESUBSCRIBE,
} from '@a2a-js/sdk/compat/v0_3';
import { InvalidFieldError } from './a2a-errors.js';
import { decodeCursor } from './task-store.js';

/**
 * What A2A 1.0 and JSON-RPC 2.0 ask of a request and the SDK does not check, checked before the SDK reads it.
 * The SDK's transport answers a malformed JSON-RPC envelope with -32602 (Invalid params) and repeats an id of
 * any type, and its decoders coerce parameters instead of refusing them (`Number("abc")` is NaN, a negative
 * historyLength passes, `Boolean("false")` is true, `String(12345)` parses as a date). Each field has one rule
 * for both bindings: JSON-RPC's params carry JSON values, HTTP+JSON's query parameters strings (§11.5).
 */

/** The v1.0 JSON-RPC methods (§5.3), and v0.3's (served through the SDK's compatibility layer). */
const METHODS = {
  v1: new Set([
    'SendMessage',
    'SendStreamingMessage',
    'GetTask',
    'ListTasks',
    'CancelTask',
    'SubscribeToTask',
    'CreateTaskPushNotificationConfig',
    'GetTaskPushNotificationConfig',
    'ListTaskPushNotificationConfigs',
    'DeleteTaskPushNotificationConfig',
    'GetExtendedAgentCard',
  ]),
  legacy: new Set<string>([
    LEGACY_METHOD_MESSAGE_SEND,
    LEGACY_METHOD_MESSAGE_STREAM,
    LEGACY_METHOD_TASKS_GET,
    LEGACY_METHOD_TASKS_CANCEL,
    LEGACY_METHOD_TASKS_RESUBSCRIBE,
    LEGACY_METHOD_PUSH_NOTIFICATION_CONFIG_SET,
    LEGACY_METHOD_PUSH_NOTIFICATION_CONFIG_GET,
    LEGACY_METHOD_PUSH_NOTIFICATION_CONFIG_LIST,
    LEGACY_METHOD_PUSH_NOTIFICATION_CONFIG_DELETE,
    LEGACY_METHOD_GET_AUTHENTICATED_EXTENDED_CARD,
  ]),
};

/**
 * Why `body` is not a JSON-RPC 2.0 Request object (§4), or undefined: answered -32600 Invalid Request. An id
 * is a string, a whole number or null (the SDK refuses fractional ones, which JSON-RPC says SHOULD NOT be).
 */
export function invalidJsonRpcRequest(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return 'Send one JSON-RPC request object (batches are not served).';
  }
  const request = body as Record<string, unknown>;
  if (request.jsonrpc !== '2.0') return 'A JSON-RPC request has "jsonrpc": "2.0".';
  if ('id' in request && jsonRpcId(request.id) === undefined) {
    return 'A JSON-RPC request id is a string, a whole number or null.';
  }
  if (typeof request.method !== 'string' || request.method === '') {
    return 'A JSON-RPC request names its method in "method", a string.';
  }
  return undefined;
}

/** The id an answer repeats: null where it cannot be read ("it MUST be Null", JSON-RPC 2.0 §5). */
export function answerId(body: unknown): string | number | null {
  return jsonRpcId((body as { id?: unknown } | null)?.id) ?? null;
}

/** Whether `method` is one of the version's (an unknown one is -32601 Method not found, params or not). */
export function isJsonRpcMethod(method: string, legacy: boolean): boolean {
  return (legacy ? METHODS.legacy : METHODS.v1).has(method);
}

/**
 * The params of `method` (its v1.0 name) that the spec constrains, over JSON-RPC or as an HTTP+JSON body;
 * throws InvalidFieldError. Params that are not an object are left to the SDK (-32602 Invalid params).
 */
export function checkParams(method: string, params: unknown): void {
  if (!isObject(params)) return;
  const fields = jsonFields(params);
  switch (method) {
    case 'GetTask':
      historyLength(fields);
      return;
    case 'ListTasks':
      listTasksRequest(fields);
      return;
    case 'SendMessage':
    case 'SendStreamingMessage': {
      const configuration = fields.get('configuration');
      if (!isObject(configuration)) return;
      const inner = jsonFields(configuration, 'configuration.');
      historyLength(inner);
      // The SDK reads it with Boolean(): "false" would be true, and the caller would not get the wait it asked.
      flag(inner, 'returnImmediately');
      return;
    }
  }
}

/** GetTask's historyLength as an HTTP+JSON query parameter, checked. */
export function getTaskQuery(query: URLSearchParams): { historyLength: number | undefined } {
  return { historyLength: historyLength(queryFields(query)) };
}

/** ListTasks as HTTP+JSON's query parameters carry it (§11.5), checked. */
export function listTasksQuery(query: URLSearchParams): ListTasksRequest {
  return listTasksRequest(queryFields(query));
}

/** A request's fields as one binding carries them. */
interface Fields {
  /** The value sent for `field` (undefined or null: none). */
  get(field: string): unknown;
  /** The field's name in an error (its path in the request). */
  name(field: string): string;
  /** HTTP+JSON query parameters, every value a string (§11.5). */
  query: boolean;
}

/** JSON values; ProtoJSON parsers also take the proto field name (`page_size`), as the SDK's codecs do. */
function jsonFields(object: Record<string, unknown>, prefix = ''): Fields {
  return {
    query: false,
    get: (field) => object[field] ?? object[field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)],
    name: (field) => `${prefix}${field}`,
  };
}

/** Query parameters: an empty one is none (as an unset field). */
function queryFields(query: URLSearchParams): Fields {
  return { query: true, get: (field) => query.get(field) || undefined, name: (field) => field };
}

function listTasksRequest(fields: Fields): ListTasksRequest {
  const pageToken = text(fields, 'pageToken');
  // a2a.proto, page_token: "A page token, received from a previous `ListTasks` call."
  if (pageToken) decodeCursor(pageToken);
  return {
    tenant: '',
    contextId: text(fields, 'contextId') ?? '',
    status: taskState(fields, 'status'),
    // a2a.proto, page_size: "The minimum value is 1. The maximum value is 100."
    pageSize: wholeNumber(fields, 'pageSize', 1, 100),
    pageToken: pageToken ?? '',
    historyLength: historyLength(fields),
    statusTimestampAfter: timestamp(fields, 'statusTimestampAfter'),
    includeArtifacts: flag(fields, 'includeArtifacts'),
  };
}

/** §3.2.4 gives meaning to unset, 0 ("no history") and more than 0 ("at most this many"): nothing less. */
function historyLength(fields: Fields): number | undefined {
  return wholeNumber(fields, 'historyLength', 0);
}

/** An int32: a JSON number, or a decimal string (ProtoJSON takes both; §11.5: "decimal strings"). */
function wholeNumber(fields: Fields, field: string, min: number, max = 2 ** 31 - 1): number | undefined {
  const raw = fields.get(field);
  if (raw === undefined || raw === null) return undefined;
  const value = typeof raw === 'string' && /^-?\d{1,10}$/.test(raw) ? Number(raw) : raw;
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  const range = max < 2 ** 31 - 1 ? `from ${min} to ${max}` : `of at least ${min}`;
  throw invalid(fields, field, `must be a whole number ${range}; got ${shown(raw)}.`);
}

/** A bool: JSON true or false; in a query, "true" or "false" (§11.5). */
function flag(fields: Fields, field: string): boolean | undefined {
  const raw = fields.get(field);
  if (raw === undefined || raw === null) return undefined;
  if (fields.query ? raw === 'true' || raw === 'false' : typeof raw === 'boolean') {
    return raw === true || raw === 'true';
  }
  throw invalid(fields, field, `must be true or false; got ${shown(raw)}.`);
}

function text(fields: Fields, field: string): string | undefined {
  const raw = fields.get(field);
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'string') return raw;
  throw invalid(fields, field, `must be a string; got ${shown(raw)}.`);
}

const STATE_NAMES = [1, 2, 3, 4, 5, 6, 7, 8].map((state) => taskStateToJSON(state as TaskState)).join(', ');

/** A TaskState by its name (§5.5), or its number (ProtoJSON); TASK_STATE_UNSPECIFIED is no filter. */
function taskState(fields: Fields, field: string): TaskState {
  const raw = fields.get(field);
  if (raw === undefined || raw === null) return TaskState.TASK_STATE_UNSPECIFIED;
  const value = typeof raw === 'string' && /^\d{1,2}$/.test(raw) ? Number(raw) : raw;
  const state = typeof value === 'string' || typeof value === 'number' ? taskStateFromJSON(value) : undefined;
  if (state !== undefined && state !== TaskState.UNRECOGNIZED) return state;
  throw invalid(fields, field, `must be one of ${STATE_NAMES}; got ${shown(raw)}.`);
}

/**
 * A google.protobuf.Timestamp as ProtoJSON reads it (RFC 3339: a date and a time, up to 9 fractional digits,
 * Z or an offset), on a day the calendar has. §5.6.1: "ISO 8601 combined date and time representation".
 */
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

/** The timestamp as this agent writes them (UTC, milliseconds). */
function timestamp(fields: Fields, field: string): string | undefined {
  const raw = fields.get(field);
  if (raw === undefined || raw === null) return undefined;
  const match = typeof raw === 'string' ? TIMESTAMP.exec(raw) : null;
  if (match) {
    const [, year, month, day, hour, minute, second, , , offsetHours, offsetMinutes] = match.map((group) =>
      group === undefined ? 0 : Number(group),
    ) as number[];
    // Set apart from Date.UTC, which reads years 0-99 as 1900-1999.
    const date = new Date(Date.UTC(2000, month! - 1, day));
    date.setUTCFullYear(year!);
    const real =
      year! >= 1 &&
      date.getUTCMonth() === month! - 1 &&
      date.getUTCDate() === day &&
      hour! < 24 &&
      minute! < 60 &&
      second! < 60 &&
      offsetHours! < 24 &&
      offsetMinutes! < 60;
    if (real) return new Date(raw as string).toISOString();
  }
  throw invalid(
    fields,
    field,
    `must be an ISO 8601 date and time in UTC, as 2025-10-28T10:30:00.000Z; got ${shown(raw)}.`,
  );
}

function invalid(fields: Fields, field: string, description: string): InvalidFieldError {
  return new InvalidFieldError(fields.name(field), description);
}

/** A caller's value in an error message: as JSON, short. */
function shown(raw: unknown): string {
  const json = JSON.stringify(raw) ?? String(raw);
  return json.length > 40 ? `${json.slice(0, 37)}...` : json;
}

function jsonRpcId(id: unknown): string | number | null | undefined {
  if (typeof id === 'string' || id === null) return id;
  return typeof id === 'number' && Number.isInteger(id) ? id : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
