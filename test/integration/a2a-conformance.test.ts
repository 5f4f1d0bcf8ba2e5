import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '@a2a-js/sdk';
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
