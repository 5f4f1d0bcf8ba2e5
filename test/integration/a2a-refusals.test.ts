import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import { InMemoryTaskStore } from '@a2a-js/sdk/server';
import { a2aClient, KEYS, startA2AAgent, type A2AAgent } from '../helpers/a2a-agent.js';
import { asTask, send } from '../helpers/a2a-messages.js';

// Who may call, and what a caller hears when refused, on both transports. The chat core and the gate are
// fakes (tests/helpers/a2a-agent.ts): the real admission core comes later; the mapping is what is tested.
let agent: A2AAgent;
const reported: unknown[] = [];

beforeAll(async () => {
  agent = await startA2AAgent({ onError: (error) => reported.push(error) });
});

afterAll(async () => {
  await agent.close();
});

function rpc(body: object, headers: Record<string, string> = { Authorization: `Bearer ${KEYS.alice}` }) {
  return fetch(`${agent.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...body }),
  });
}

const message = (text: string, extra: object = {}) => ({
  message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }], ...extra },
});

async function rpcError(response: Response) {
  return ((await response.json()) as { error: { code: number; message: string; data?: unknown } }).error;
}

describe('keys', () => {
  it('refuses a call without a key, or with a wrong one, with 401 on both transports', async () => {
    const none = await rpc({ method: 'SendMessage', params: message('hi') }, {});
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="a2a"');
    expect(await rpcError(none)).toMatchObject({
      code: -32000,
      message: 'This agent needs an A2A key: ask its operator for one.',
      data: [{ reason: 'AUTH_FAILED', domain: 'agent-bridge' }],
    });
    const wrong = await rpc({ method: 'GetTask', params: { id: 'x' } }, { Authorization: 'Bearer nope' });
    expect(wrong.status).toBe(401);

    const rest = await a2aClient(agent.url, undefined, 'HTTP+JSON');
    const refused = await rest.sendMessage(send('hi')).catch((error: unknown) => error);
    expect(refused).toMatchObject({
      statusCode: 401,
      message: 'This agent needs an A2A key: ask its operator for one.',
    });
    const jsonRpc = await a2aClient(agent.url, 'not-a-key');
    await expect(jsonRpc.getTask({ tenant: '', id: 'x' })).rejects.toMatchObject({ envelopeCode: -32000 });
    expect(agent.core.turns).toEqual([]);
  });

  it('answers a v0.3 caller without a key in v0.3 shapes', async () => {
    const response = await rpc({ method: 'message/send', params: {} }, { 'A2A-Version': '0.3' });
    expect(response.status).toBe(401);
    expect(await rpcError(response)).toMatchObject({ code: -32000, data: { reason: 'AUTH_FAILED' } });
  });
});

describe('admission', () => {
  it('refuses a rate-limited turn with 429 and Retry-After, before any task exists', async () => {
    const response = await rpc({ method: 'SendMessage', params: message('too often') });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(await rpcError(response)).toMatchObject({
      code: -32000,
      message: 'Too many messages; wait a moment.',
      data: [{ reason: 'RATE_LIMITED', metadata: { retryAfterSeconds: '7' } }],
    });

    const rest = await a2aClient(agent.url, KEYS.alice, 'HTTP+JSON');
    const refused = await rest.sendMessage(send('too often')).catch((error: unknown) => error);
    expect(refused).toMatchObject({
      statusCode: 429,
      headers: expect.objectContaining({ 'retry-after': '7' }),
    });
    const stream = rest.sendMessageStream(send('too often'));
    await expect(stream.next()).rejects.toMatchObject({ statusCode: 429 });
    const streamed = await rpc({ method: 'SendStreamingMessage', params: message('too often') });
    expect(streamed.status).toBe(429);

    const all = {
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '',
      statusTimestampAfter: undefined,
    };
    expect((await rest.listTasks(all)).tasks).toEqual([]);
    expect(agent.core.turns).toEqual([]);
  });

  it('refuses what the chat skill cannot take, with the A2A error that says so', async () => {
    const file = await rpc({
      method: 'SendMessage',
      params: { message: { messageId: 'f', role: 'ROLE_USER', parts: [{ url: 'https://x/y.pdf' }] } },
    });
    expect((await rpcError(file)).code).toBe(-32005);
    const longContext = await rpc({
      method: 'SendMessage',
      params: message('hi', { contextId: 'c'.repeat(129) }),
    });
    expect(await rpcError(longContext)).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/contextId/),
    });
    const tenant = await rpc({ method: 'SendMessage', params: { tenant: 'other', ...message('hi') } });
    expect(await rpcError(tenant)).toMatchObject({ code: -32602, message: expect.stringMatching(/tenant/) });
    const unknownTask = await rpc({
      method: 'SendMessage',
      params: message('hi', { taskId: 'no-such-task' }),
    });
    expect((await rpcError(unknownTask)).code).toBe(-32001);

    const client = await a2aClient(agent.url, KEYS.alice);
    const done = asTask(await client.sendMessage(send('hi')));
    const followUp = await rpc({ method: 'SendMessage', params: message('more', { taskId: done.id }) });
    expect(await rpcError(followUp)).toMatchObject({
      code: -32004,
      message: expect.stringMatching(/same contextId/),
    });
  });

  it('caps push configs per task and refuses header-breaking values', async () => {
    const client = await a2aClient(agent.url, KEYS.alice);
    const task = asTask(await client.sendMessage(send('hi')));
    const config = {
      tenant: '',
      id: '',
      taskId: task.id,
      url: 'https://hooks.example.com/a',
      token: '',
      authentication: undefined,
    };
    for (let i = 0; i < 4; i++) await client.createTaskPushNotificationConfig(config);
    await expect(client.createTaskPushNotificationConfig(config)).rejects.toThrow(/at most 4/);
    const injected = await rpc({
      method: 'CreateTaskPushNotificationConfig',
      params: { taskId: task.id, url: 'https://hooks.example.com/b', token: 'ok\r\nX-Evil: 1' },
    });
    expect(await rpcError(injected)).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/visible ASCII/),
    });
  });
});

describe('failures', () => {
  it('ends the task failed: a gateway refusal says why, a bug says nothing of itself', async () => {
    const client = await a2aClient(agent.url, KEYS.alice);
    const down = asTask(await client.sendMessage(send('gateway down')));
    expect(down.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(down.status?.message?.parts[0]?.content?.value).toBe(
      'The gateway did not answer; try again later.',
    );
    const crash = asTask(await client.sendMessage(send('crash')));
    expect(crash.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(JSON.stringify(crash)).not.toMatch(/openclaw|secret/);
    expect(String(reported.at(-1))).toMatch(/secret internal detail/);
  });

  it('answers a store failure with a generic error, the detail only in the operator log', async () => {
    class BrokenStore extends InMemoryTaskStore {
      override async save(): Promise<void> {
        throw new Error("ENOSPC: no space left on device, open '/home/operator/.agent-bridge/a2a/x.json'");
      }
    }
    const errors: unknown[] = [];
    const broken = await startA2AAgent({ tasks: new BrokenStore(), onError: (error) => errors.push(error) });
    try {
      const response = await fetch(`${broken.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'A2A-Version': '1.0',
          Authorization: `Bearer ${KEYS.alice}`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: message('hi') }),
      });
      expect(response.status).toBe(500);
      const error = await rpcError(response);
      expect(error).toMatchObject({ code: -32603 });
      expect(error.message).not.toMatch(/ENOSPC|home/);
      expect(String(errors[0])).toMatch(/ENOSPC/);
    } finally {
      await broken.close();
    }
  });
});

describe('the wire', () => {
  it('answers malformed requests as the caller’s error, never as the agent’s failure', async () => {
    const before = reported.length;
    const v1Null = await rpc({
      method: 'SendMessage',
      params: { message: { messageId: 'n', role: 'ROLE_USER', parts: [null] } },
    });
    expect(await rpcError(v1Null)).toMatchObject({ code: -32602 });
    const v03File = await rpc(
      {
        method: 'message/send',
        params: {
          message: { kind: 'message', messageId: 'f', role: 'user', parts: [{ kind: 'file', file: 5 }] },
        },
      },
      { Authorization: `Bearer ${KEYS.alice}`, 'A2A-Version': '0.3' },
    );
    expect(await rpcError(v03File)).toMatchObject({ code: -32602 });
    const v03Id = await rpc(
      { method: 'tasks/resubscribe', params: { id: 5 } },
      { Authorization: `Bearer ${KEYS.alice}`, 'A2A-Version': '0.3' },
    );
    expect(await rpcError(v03Id)).toMatchObject({ code: -32602 });
    const batch = await fetch(`${agent.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEYS.alice}`, 'Content-Type': 'application/json' },
      body: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }]),
    });
    expect(await rpcError(batch)).toMatchObject({ code: -32600 });
    const restNull = await fetch(`${agent.url}/a2a/rest/message:send`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEYS.alice}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: { messageId: 'n', role: 'ROLE_USER', parts: [null] } }),
    });
    expect(restNull.status).toBe(400);
    expect(reported.length).toBe(before);
  });

  it('refuses bodies past the limit with 413, and answers what is not JSON', async () => {
    const big = await rpc({ method: 'SendMessage', params: message('x'.repeat(70 * 1024)) });
    expect(big.status).toBe(413);
    expect(big.headers.get('connection')).toBe('close');
    const restBig = await fetch(`${agent.url}/a2a/rest/message:send`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEYS.alice}`, 'Content-Type': 'application/json' },
      body: 'x'.repeat(70 * 1024),
    });
    expect(restBig.status).toBe(413);
    const notJson = await fetch(`${agent.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEYS.alice}`, 'Content-Type': 'application/json' },
      body: '{"jsonrpc": "2.0", "method": "SendMessage", "params": {"token": "s3cret"',
    });
    expect(await rpcError(notJson)).toMatchObject({ code: -32700 });
    const xml = await fetch(`${agent.url}/a2a/rest/message:send`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEYS.alice}`, 'Content-Type': 'text/xml' },
      body: '<message/>',
    });
    expect(xml.status).toBe(400);
  });

  it('answers wrong methods, unknown paths and v0.3 HTTP+JSON with what to use instead', async () => {
    const get = await fetch(`${agent.url}/a2a/jsonrpc`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const wrongMethod = await fetch(`${agent.url}/a2a/rest/message:send`);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    const v03Path = await fetch(`${agent.url}/a2a/rest/v1/message:send`, { method: 'POST' });
    expect(v03Path.status).toBe(404);
    expect(await v03Path.text()).toMatch(/JSON-RPC/);
    const v03Header = await fetch(`${agent.url}/a2a/rest/tasks`, {
      headers: { Authorization: `Bearer ${KEYS.alice}`, 'A2A-Version': '0.3' },
    });
    expect(v03Header.status).toBe(400);
    expect(await v03Header.json()).toMatchObject({
      error: { details: [{ reason: 'VERSION_NOT_SUPPORTED' }] },
    });
  });
});
