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

/**
 * What A2A 1.0 and JSON-RPC 2.0 ask of a request and the SDK does not check, checked before the SDK reads it.
 * The SDK's transport answers a malformed JSON-RPC envelope with -32602 (Invalid params) and repeats an id of
 * any type.
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

function jsonRpcId(id: unknown): string | number | null | undefined {
  if (typeof id === 'string' || id === null) return id;
  return typeof id === 'number' && Number.isInteger(id) ? id : undefined;
}
