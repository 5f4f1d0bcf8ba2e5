import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskState, type ListTasksRequest, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { a2aClient, KEYS, startA2AAgent, type A2AAgent, type Transport } from '../helpers/a2a-agent.js';
import { asTask, send } from '../helpers/a2a-messages.js';

// Rules of A2A 1.0 (docs/specification.md and specification/a2a.proto at a2aproject/A2A v1.0.1) and of
// JSON-RPC 2.0 (https://www.jsonrpc.org/specification), each test quoting the sentence it checks, through
// real HTTP: the SDK's own client where it can express the call, raw fetch where it would not send it.
let agent: A2AAgent;
let done: Task;

beforeAll(async () => {
  agent = await startA2AAgent();
  done = asTask(await (await a2aClient(agent.url, KEYS.alice)).sendMessage(send('hi')));
});

afterAll(async () => {
  await agent.close();
});

const AUTH = { Authorization: `Bearer ${KEYS.alice}` };
const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';

interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** One raw JSON-RPC POST: `body` as is when a string (JSON text), else serialised. */
async function rpc(
  body: unknown,
  version: string | null = '1.0',
  path = '/a2a/jsonrpc',
): Promise<{ status: number; id: unknown; error?: RpcError; result?: unknown }> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...AUTH };
  if (version) headers['A2A-Version'] = version;
  const response = await fetch(`${agent.url}${path}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const json = (await response.json()) as { id: unknown; error?: RpcError; result?: unknown };
  return { status: response.status, ...json };
}

/** An HTTP+JSON answer: a result, or a google.rpc.Status (§11.6). */
interface RestBody {
  tasks?: { id: string }[];
  error?: { code: number; status: string; message: string; details?: unknown[] };
}

async function rest(path: string): Promise<{ status: number; type: string | null; body: RestBody }> {
  const response = await fetch(`${agent.url}/a2a/rest${path}`, {
    headers: { ...AUTH, 'A2A-Version': '1.0' },
  });
  const body = (await response.json()) as RestBody;
  return { status: response.status, type: response.headers.get('content-type'), body };
}

/** The field a google.rpc.BadRequest detail names (JSON-RPC `data`, HTTP+JSON `details`). */
function violatedField(details: unknown): string | undefined {
  const detail = (Array.isArray(details) ? details : []).find(
    (entry: { '@type'?: string }) => entry['@type'] === BAD_REQUEST,
  ) as { fieldViolations?: { field: string; description: string }[] } | undefined;
  return detail?.fieldViolations?.[0]?.field;
}

const listAll: ListTasksRequest = {
  tenant: '',
  contextId: '',
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageToken: '',
  statusTimestampAfter: undefined,
};

describe('JSON-RPC 2.0 requests that are not valid Request objects', () => {
  // JSON-RPC 2.0 §5.1: "-32600 | Invalid Request | The JSON sent is not a valid Request object." A2A §9.5
  // lists the same code: "-32600 | InvalidRequestError | ... | The JSON sent is not a valid Request object".
  // JSON-RPC 2.0 §4: "jsonrpc: A String specifying the version of the JSON-RPC protocol. MUST be exactly
  // "2.0"."; "method: A String containing the name of the method to be invoked."; "id: An identifier
  // established by the Client that MUST contain a String, Number, or NULL value if included."
  // JSON-RPC 2.0 §5 (the response's id): "If there was an error in detecting the id in the Request object
  // (e.g. Parse error/Invalid Request), it MUST be Null."
  const get = { method: 'GetTask', params: { id: 'x' } };
  const invalid: [string, unknown, unknown][] = [
    ['jsonrpc "1.0"', { jsonrpc: '1.0', id: 1, ...get }, 1],
    ['no jsonrpc', { id: 'a', ...get }, 'a'],
    ['jsonrpc 2 (a number)', { jsonrpc: 2, id: 3, ...get }, 3],
    ['no method', { jsonrpc: '2.0', id: 4, params: { id: 'x' } }, 4],
    ['a number for method', { jsonrpc: '2.0', id: 5, method: 5, params: { id: 'x' } }, 5],
    ['an empty method', { jsonrpc: '2.0', id: 6, method: '', params: { id: 'x' } }, 6],
    ['an object for id', { jsonrpc: '2.0', id: { n: 1 }, ...get }, null],
    ['a boolean for id', { jsonrpc: '2.0', id: true, ...get }, null],
    ['an array for id', { jsonrpc: '2.0', id: [1], ...get }, null],
    ['a string body', '"just text"', null],
    ['a number body', 7, null],
  ];

  for (const version of ['1.0', '0.3']) {
    it.each(invalid)(`answers -32600 to %s (A2A-Version ${version})`, async (_name, body, id) => {
      const answer = await rpc(body, version);
      expect(answer.status).toBe(200);
      expect(answer.error?.code).toBe(-32600);
      expect(answer.id).toStrictEqual(id);
      expect(agent.core.turns).toHaveLength(1);
    });
  }

  it('answers -32700 to a body that is not JSON, with a null id', async () => {
    // JSON-RPC 2.0 §5.1: "-32700 | Parse error | Invalid JSON was received by the server."
    const answer = await rpc('{"jsonrpc": "2.0", "id": 9, "method": "GetTask"');
    expect(answer.error?.code).toBe(-32700);
    expect(answer.id).toBeNull();
  });

  it('answers -32601 to a method that does not exist, with or without params, in either version', async () => {
    // JSON-RPC 2.0 §5.1: "-32601 | Method not found | The method does not exist / is not available."
    // A2A §9.1: "Method Naming: PascalCase method names matching gRPC conventions (e.g., SendMessage, GetTask)"
    // (so v0.3's `message/send` is no method of 1.0's, and 1.0's `SendMessage` none of 0.3's).
    const cases: [unknown, string | null][] = [
      [{ jsonrpc: '2.0', id: 1, method: 'Foo' }, '1.0'],
      [{ jsonrpc: '2.0', id: 1, method: 'Foo', params: {} }, '1.0'],
      [{ jsonrpc: '2.0', id: 1, method: 'toString' }, '1.0'],
      [{ jsonrpc: '2.0', id: 1, method: 'message/send', params: {} }, '1.0'],
      [{ jsonrpc: '2.0', id: 1, method: 'Foo' }, '0.3'],
      [{ jsonrpc: '2.0', id: 1, method: 'SendMessage' }, '0.3'],
      [{ jsonrpc: '2.0', id: 1, method: 'Foo' }, null],
    ];
    for (const [body, version] of cases) {
      const answer = await rpc(body, version);
      expect({ body, version, code: answer.error?.code, id: answer.id }).toEqual({
        body,
        version,
        code: -32601,
        id: 1,
      });
    }
  });
});

describe('ListTasks parameters, one rule on both bindings', () => {
  // A2A §3.3.2, validation errors: "Servers **MUST** validate all input parameters before processing";
  // "Servers **SHOULD** specify which parameter(s) failed validation and why"; "Example error codes: HTTP
  // `400 Bad Request`, gRPC `INVALID_ARGUMENT`, JSON-RPC `-32602 Invalid params`".
  // §5.1: all supported protocols MUST have the "Same Error Handling: Map errors consistently".
  // §9.5 and §11.6: "Implementations **SHOULD** use well-known types such as ... `google.rpc.BadRequest` to
  // attach structured data to validation errors."
  // Each case: the field, its bad value as a JSON-RPC param, and as an HTTP+JSON query parameter (§11.5:
  // "Numbers: Represented as decimal strings", "Booleans: Represented as lowercase strings (`true`,
  // `false`)", "Enums: Represented using their string values", "Datetimes/Timestamps: Represented as ISO
  // 8601 strings").
  const bad: [string, unknown, string | undefined][] = [
    // a2a.proto, ListTasksRequest.history_length: "The maximum number of messages to include in each task's
    // history." §3.2.4 gives meaning to unset, 0 and > 0 only; §6.5: "Must be non-negative integer, got -5".
    ['historyLength', -5, '-5'],
    ['historyLength', 'abc', 'abc'],
    ['historyLength', 1.5, '1.5'],
    // a2a.proto, ListTasksRequest.page_size: "The minimum value is 1. The maximum value is 100."
    ['pageSize', 0, '0'],
    ['pageSize', 150, '150'],
    ['pageSize', 'ten', 'ten'],
    // a2a.proto: "TaskState status = 3"; §6.5: "Invalid status value 'TASK_STATE_RUNNING'. Must be one of: ..."
    ['status', 'TASK_STATE_RUNNING', 'TASK_STATE_RUNNING'],
    ['status', 99, '99'],
    // §5.6.1: "timestamps **MUST** be represented as ISO 8601 formatted strings in UTC timezone"; "Format:
    // ISO 8601 combined date and time representation"; "Clients and servers **MUST** parse and generate ISO
    // 8601 timestamps correctly" (no 30 February, no bare date, no bare number).
    ['statusTimestampAfter', 'yesterday', 'yesterday'],
    ['statusTimestampAfter', '2024-02-30T10:00:00Z', '2024-02-30T10:00:00Z'],
    ['statusTimestampAfter', '2024-03-15', '2024-03-15'],
    ['statusTimestampAfter', 12345, '12345'],
    // a2a.proto: "optional bool include_artifacts = 8"; a JSON-RPC param is a JSON boolean, not a string.
    ['includeArtifacts', 'false', 'maybe'],
    // a2a.proto, page_token: "A page token, received from a previous `ListTasks` call."
    ['pageToken', 'not-a-token', 'not-a-token'],
    ['pageToken', 42, undefined],
    ['contextId', { id: 'c' }, undefined],
  ];

  it.each(bad)('refuses %s = %j over JSON-RPC with -32602 naming it', async (field, value) => {
    const answer = await rpc({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: { [field]: value } });
    expect(answer.status).toBe(200);
    expect(answer.error?.code).toBe(-32602);
    expect(answer.error?.message).toContain(field);
    expect(violatedField(answer.error?.data)).toBe(field);
  });

  it.each(bad.filter(([, , query]) => query !== undefined))(
    'refuses %s over HTTP+JSON (query %j) with 400 naming it',
    async (field, _json, query) => {
      const answer = await rest(`/tasks?${new URLSearchParams({ [field]: query! })}`);
      expect(answer.status).toBe(400);
      expect(answer.type).toMatch(/^application\/a2a\+json/);
      expect(answer.body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
      expect(answer.body.error?.message).toContain(field);
      expect(violatedField(answer.body.error?.details)).toBe(field);
    },
  );

  it('takes the values the rules allow, on both bindings', async () => {
    // ProtoJSON (§5.5 follows it): an int32 may come as a JSON number or a string; a Timestamp is RFC 3339,
    // "Offsets other than "Z" are also accepted", with up to 9 fractional digits.
    const good = {
      pageSize: '10',
      historyLength: 0,
      status: 'TASK_STATE_COMPLETED',
      statusTimestampAfter: '2000-01-01T00:00:00.123456789+02:00',
      includeArtifacts: true,
    };
    const viaRpc = await rpc({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: good });
    expect(viaRpc.error).toBeUndefined();
    expect((viaRpc.result as { tasks: { id: string }[] }).tasks.map((task) => task.id)).toContain(done.id);
    const query = new URLSearchParams({ ...good, historyLength: '0', includeArtifacts: 'true' });
    const viaRest = await rest(`/tasks?${query}`);
    expect(viaRest.status).toBe(200);
    expect(viaRest.body.tasks?.map((task) => task.id)).toContain(done.id);
  });

  describe.each<Transport>(['JSONRPC', 'HTTP+JSON'])('through the SDK client over %s', (transport) => {
    let client: Client;
    beforeAll(async () => {
      client = await a2aClient(agent.url, KEYS.alice, transport);
    });

    it('refuses a negative historyLength, an unparsable statusTimestampAfter and a pageSize past 100', async () => {
      const cases: [Partial<ListTasksRequest>, string][] = [
        [{ historyLength: -1 }, 'historyLength'],
        [{ statusTimestampAfter: '2024-13-01T00:00:00Z' }, 'statusTimestampAfter'],
        [{ pageSize: 101 }, 'pageSize'],
        [{ status: TaskState.UNRECOGNIZED }, 'status'],
      ];
      for (const [params, field] of cases) {
        const refused = await client.listTasks({ ...listAll, ...params }).catch((error: unknown) => error);
        expect(refused).toMatchObject({
          name: 'RequestMalformedError',
          message: expect.stringContaining(field),
        });
        if (transport === 'HTTP+JSON') expect(refused).toMatchObject({ statusCode: 400 });
        else expect(refused).toMatchObject({ envelopeCode: -32602 });
      }
    });

    it('lists a task whose status timestamp equals statusTimestampAfter', async () => {
      // a2a.proto, ListTasksRequest.status_timestamp_after: "Only tasks with a status timestamp time greater
      // than or equal to this value will be returned."
      const listed = await client.listTasks({ ...listAll, statusTimestampAfter: done.status!.timestamp });
      expect(listed.tasks.map((task) => task.id)).toContain(done.id);
    });
  });
});

describe('historyLength elsewhere: GetTask and SendMessage', () => {
  // §3.2.4: "The `historyLength` parameter appears in multiple operations ... This parameter follows
  // consistent semantics across all operations: Unset/undefined ... 0 ... > 0". A negative number is none of
  // them (§3.3.2: "Servers **MUST** validate all input parameters before processing").
  describe.each<Transport>(['JSONRPC', 'HTTP+JSON'])('through the SDK client over %s', (transport) => {
    let client: Client;
    beforeAll(async () => {
      client = await a2aClient(agent.url, KEYS.alice, transport);
    });

    it('refuses a negative historyLength on GetTask and on a send, before any turn runs', async () => {
      const turns = agent.core.turns.length;
      const get = await client
        .getTask({ tenant: '', id: done.id, historyLength: -1 })
        .catch((e: unknown) => e);
      expect(get).toMatchObject({
        name: 'RequestMalformedError',
        message: expect.stringContaining('historyLength'),
      });
      const sent = await client
        .sendMessage(send('hi', { configuration: { historyLength: -2 } }))
        .catch((error: unknown) => error);
      expect(sent).toMatchObject({
        name: 'RequestMalformedError',
        message: expect.stringContaining('historyLength'),
      });
      expect(agent.core.turns.length).toBe(turns);
      // And 0 still means what §3.2.4 says: "No history should be returned".
      const none = await client.getTask({ tenant: '', id: done.id, historyLength: 0 });
      expect(none.history).toEqual([]);
    });
  });

  it('names the field in a google.rpc.BadRequest on both bindings', async () => {
    const viaRpc = await rpc({
      jsonrpc: '2.0',
      id: 1,
      method: 'GetTask',
      params: { id: done.id, historyLength: 'x' },
    });
    expect(viaRpc.error?.code).toBe(-32602);
    expect(violatedField(viaRpc.error?.data)).toBe('historyLength');
    const viaRest = await rest(`/tasks/${done.id}?historyLength=-1`);
    expect(viaRest.status).toBe(400);
    expect(violatedField(viaRest.body.error?.details)).toBe('historyLength');
  });

  it('holds a v0.3 caller to the same rule', async () => {
    // v0.3's tasks/get and message/send carry historyLength under the same names.
    const get = { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: done.id, historyLength: -1 } };
    const answer = await rpc(get, '0.3');
    expect(answer.error?.code).toBe(-32602);
    expect(answer.error?.message).toContain('historyLength');
  });
});

describe("a send's returnImmediately", () => {
  // a2a.proto, SendMessageConfiguration: "bool return_immediately = 4"; "If `false` (default), the operation
  // MUST wait until the task reaches a terminal ... or interrupted ... state before returning." A string is
  // no bool (ProtoJSON), and read as one "false" would mean true: the caller would not get the wait it asked.
  it('refuses a returnImmediately that is not a JSON boolean, on both bindings, before any turn runs', async () => {
    const turns = agent.core.turns.length;
    const params = {
      message: { messageId: 'ri', role: 'ROLE_USER', parts: [{ text: 'hi' }] },
      configuration: { returnImmediately: 'false' },
    };
    const viaRpc = await rpc({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params });
    expect(viaRpc.error?.code).toBe(-32602);
    expect(violatedField(viaRpc.error?.data)).toBe('configuration.returnImmediately');
    const viaRest = await fetch(`${agent.url}/a2a/rest/message:send`, {
      method: 'POST',
      headers: { ...AUTH, 'A2A-Version': '1.0', 'Content-Type': 'application/a2a+json' },
      body: JSON.stringify(params),
    });
    expect(viaRest.status).toBe(400);
    const body = (await viaRest.json()) as RestBody;
    expect(violatedField(body.error?.details)).toBe('configuration.returnImmediately');
    expect(agent.core.turns.length).toBe(turns);
  });
});

describe('A2A-Version as a request parameter', () => {
  // §3.6.1: "Clients MAY provide the `A2A-Version` as a request parameter instead of a header."
  // §3.6.2: "If the version is not supported by the interface, agents MUST return a
  // [`VersionNotSupportedError`]". §5.4: VersionNotSupportedError is JSON-RPC -32009, HTTP 400.
  it('reads the version from the query when no header names it, on both bindings', async () => {
    const get = { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: done.id } };
    const future = await rpc(get, null, '/a2a/jsonrpc?A2A-Version=9.9');
    expect(future.error?.code).toBe(-32009);
    const current = await rpc(get, null, '/a2a/jsonrpc?A2A-Version=1.0');
    expect((current.result as { id: string }).id).toBe(done.id);

    const restFuture = await fetch(`${agent.url}/a2a/rest/tasks/${done.id}?A2A-Version=9.9`, {
      headers: AUTH,
    });
    expect(restFuture.status).toBe(400);
    expect(await restFuture.json()).toMatchObject({
      error: { details: [{ reason: 'VERSION_NOT_SUPPORTED' }] },
    });
    const restCurrent = await fetch(`${agent.url}/a2a/rest/tasks/${done.id}?A2A-Version=1.0`, {
      headers: AUTH,
    });
    expect(restCurrent.status).toBe(200);
  });
});

describe.each<Transport>(['JSONRPC', 'HTTP+JSON'])(
  'A2A errors through the SDK client over %s',
  (transport) => {
    let client: Client;
    beforeAll(async () => {
      client = await a2aClient(agent.url, KEYS.alice, transport);
    });

    it('refuses to cancel a completed task with TaskNotCancelableError', async () => {
      // §3.1.5: "TaskNotCancelableError: The task is not in a cancelable state (e.g., already completed,
      // failed, or canceled)." §5.4: "TaskNotCancelableError | -32002 | FAILED_PRECONDITION | 400 Bad Request".
      const refused = await client
        .cancelTask({ tenant: '', id: done.id, metadata: undefined })
        .catch((e: unknown) => e);
      expect(refused).toMatchObject({ name: 'TaskNotCancelableError' });
      if (transport === 'HTTP+JSON') expect(refused).toMatchObject({ statusCode: 400 });
      else expect(refused).toMatchObject({ envelopeCode: -32002 });
    });

    it('answers GetExtendedAgentCard with UnsupportedOperationError: the card declares none', async () => {
      // §3.3.4: "If `AgentCard.capabilities.extendedAgentCard` is `false` or not present, attempts to call the
      // Get Extended Agent Card operation **MUST** return [`UnsupportedOperationError`]". The Client itself
      // asks only when the card declares it, so its transport asks here.
      const refused = await client.transport
        .getExtendedAgentCard({ tenant: '' })
        .catch((error: unknown) => error);
      expect(refused).toMatchObject({ name: 'UnsupportedOperationError' });
      if (transport === 'HTTP+JSON') expect(refused).toMatchObject({ statusCode: 400 });
      else expect(refused).toMatchObject({ envelopeCode: -32004 });
    });
  },
);
