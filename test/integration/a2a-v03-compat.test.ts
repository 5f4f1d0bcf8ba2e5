import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { clientFactory, KEYS, startA2AAgent, type A2AAgent } from '../helpers/a2a-agent.js';
import { asTask, collect, describeEvent, replyText, send } from '../helpers/a2a-messages.js';

// v0.3 callers: the SDK's client on its compatibility path (LegacyJsonRpcTransport, chosen from the v0.3
// card this agent serves), and raw header-less requests as OpenClaw's A2A channel sends them (GATEWAY.md).
// The chat core is a fake (tests/helpers/a2a-agent.ts): the real core and gateway come later.
let agent: A2AAgent;

beforeAll(async () => {
  agent = await startA2AAgent();
});

afterAll(async () => {
  await agent.close();
});

/** The card a v0.3 caller reads: no A2A-Version header (§3.6.2). */
async function legacyCard(): Promise<Record<string, unknown>> {
  const response = await fetch(`${agent.url}/.well-known/agent-card.json`);
  expect(response.headers.get('vary')).toBe('A2A-Version');
  return (await response.json()) as Record<string, unknown>;
}

describe('the SDK client on its v0.3 compatibility path', () => {
  let client: Client;

  beforeAll(async () => {
    const { supportedInterfaces: _v1Only, ...v03 } = await legacyCard();
    expect(v03).toMatchObject({
      protocolVersion: '0.3',
      preferredTransport: 'JSONRPC',
      url: `${agent.url}/a2a/jsonrpc`,
    });
    client = await clientFactory(KEYS.alice).createFromAgentCard(v03 as never);
    expect(client.protocolVersion).toBe('0.3');
  });

  it('the hybrid v0.3 card leads a v1.0 client to the v1.0 interface', async () => {
    const hybrid = await clientFactory(KEYS.alice).createFromAgentCard((await legacyCard()) as never);
    expect(hybrid.protocolVersion).toBe('1.0');
  });

  it('sends blocking, and streams deltas as separate artifact updates', async () => {
    const task = asTask(await client.sendMessage(send('hi')));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyText(task)).toBe('Hello, alice.');
    const events = (await collect(client.sendMessageStream(send('hi')))).map(describeEvent);
    expect(events).toEqual([
      'task:working',
      'artifact:=Hello',
      'artifact:+, ',
      'artifact:+alice',
      'artifact:+.',
      'artifact:=Hello, alice.|last',
      'status:completed',
    ]);
    expect((await client.getTask({ tenant: '', id: task.id })).id).toBe(task.id);
  });

  it('cancels mid-stream and resubscribes after dropping a stream', async () => {
    const stream = client.sendMessageStream(send('hold'));
    const first = (await stream.next()).value!;
    const id = first.payload!.$case === 'task' ? first.payload!.value.id : '';
    expect(describeEvent((await stream.next()).value!)).toBe('artifact:=Holding');
    expect((await client.cancelTask({ tenant: '', id, metadata: undefined })).status?.state).toBe(
      TaskState.TASK_STATE_CANCELED,
    );
    expect((await collect(stream)).map(describeEvent)).toEqual(['status:canceled']);
    expect(agent.core.turns.find((t) => t.turn.taskId === id)?.aborted).toBe(true);

    const dropped = new AbortController();
    const held = client.sendMessageStream(send('hold'), { signal: dropped.signal });
    const task = (await held.next()).value!;
    const heldId = task.payload!.$case === 'task' ? task.payload!.value.id : '';
    await held.next();
    dropped.abort();
    await held.return(undefined);
    const again = client.resubscribeTask({ tenant: '', id: heldId });
    expect(describeEvent((await again.next()).value!)).toBe('task:working');
    agent.core.release();
    expect((await collect(again)).map(describeEvent).at(-1)).toBe('status:completed');
  });

  it('sets and gets a push notification config; v0.3 has no task list', async () => {
    const task = asTask(await client.sendMessage(send('hi')));
    const created = await client.createTaskPushNotificationConfig({
      tenant: '',
      id: '',
      taskId: task.id,
      url: 'https://hooks.example.com/v03',
      token: 'v03-token',
      authentication: undefined,
    });
    const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id });
    expect(got).toMatchObject({ url: 'https://hooks.example.com/v03', token: 'v03-token' });
    await expect(
      client.listTasks({
        tenant: '',
        contextId: '',
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageToken: '',
        statusTimestampAfter: undefined,
      }),
    ).rejects.toThrow();
  });
});

describe('JSON-RPC without an A2A-Version header', () => {
  const post = (body: object) =>
    fetch(`${agent.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${KEYS.alice}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, ...body }),
    });

  it('takes v1.0 method names as v1.0, as OpenClaw sends them', async () => {
    const response = await post({
      method: 'SendMessage',
      params: {
        message: { messageId: 'openclaw-1', role: 'ROLE_USER', parts: [{ text: 'hi' }] },
        configuration: { returnImmediately: true },
      },
    });
    expect(response.status).toBe(200);
    const reply = (await response.json()) as {
      id: number;
      result: { task: { id: string; status: { state: string } } };
    };
    expect(reply.id).toBe(7);
    expect(reply.result.task.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']).toContain(reply.result.task.status.state);
  });

  it('takes v0.3 method names as v0.3, as the spec says of a missing header', async () => {
    const response = await post({
      method: 'message/send',
      params: {
        message: {
          kind: 'message',
          messageId: 'legacy-1',
          role: 'user',
          parts: [{ kind: 'text', text: 'hi' }],
        },
        configuration: { blocking: true },
      },
    });
    const reply = (await response.json()) as { result: { kind: string; status: { state: string } } };
    expect(reply.result).toMatchObject({ kind: 'task', status: { state: 'completed' } });
  });

  it('answers an unknown method as v0.3 does, and an unknown version with VersionNotSupported', async () => {
    const unknown = (await (await post({ method: 'tasks/teleport', params: {} })).json()) as {
      error: { code: number };
    };
    expect(unknown.error.code).toBe(-32601);
    const future = await fetch(`${agent.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Authorization: `Bearer ${KEYS.alice}`,
        'A2A-Version': '2.0',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {} }),
    });
    expect(((await future.json()) as { error: { code: number } }).error.code).toBe(-32009);
  });
});
