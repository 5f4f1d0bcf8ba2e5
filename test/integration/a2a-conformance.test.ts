import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '@a2a-js/sdk';
import { a2aClient, KEYS, startA2AAgent, type A2AAgent } from '../helpers/a2a-agent.js';
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
