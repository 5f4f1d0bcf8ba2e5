import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { a2aClient, KEYS, startA2AAgent, type A2AAgent, type Transport } from '../helpers/a2a-agent.js';
import { asTask, collect, describeEvent, replyText, send } from '../helpers/a2a-messages.js';
import { until } from '../helpers/polling.js';

// The SDK's own client (ClientFactory, v0.3 compatibility on) against the front door mounted in a real Koa
// server. The chat core is a fake (tests/helpers/a2a-agent.ts): the real core and gateway come later.
let agent: A2AAgent;

beforeAll(async () => {
  agent = await startA2AAgent();
});

afterAll(async () => {
  await agent.close();
});

const listAll = {
  tenant: '',
  contextId: '',
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageToken: '',
  statusTimestampAfter: undefined,
};

describe.each<Transport>(['JSONRPC', 'HTTP+JSON'])('the SDK client over %s', (transport) => {
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    alice = await a2aClient(agent.url, KEYS.alice, transport);
    bob = await a2aClient(agent.url, KEYS.bob, transport);
    expect(alice.transport.protocolName).toBe(transport);
    expect(alice.protocolVersion).toBe('1.0');
  });

  it('sends a blocking message and gets the completed task, the reply as one text part', async () => {
    const task = asTask(await alice.sendMessage(send('hi')));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyText(task)).toBe('Hello, alice.');
    expect(task.artifacts[0]?.parts).toHaveLength(1);
    expect(task.history.map((m) => m.parts[0]?.content?.value)).toContain('hi');
    expect(task.metadata?.usage).toEqual({ promptTokens: 3, completionTokens: 4, totalTokens: 7 });
    expect(agent.core.turns.at(-1)).toMatchObject({
      caller: { id: 'a2a-key:alice' },
      turn: { message: 'hi', taskId: task.id, contextId: task.contextId },
    });
  });

  it('sends a non-blocking message: the task comes back working, then polling finds it completed', async () => {
    const sent = asTask(
      await alice.sendMessage(send('hold', { configuration: { returnImmediately: true } })),
    );
    expect(sent.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect((await alice.getTask({ tenant: '', id: sent.id })).status?.state).toBe(
      TaskState.TASK_STATE_WORKING,
    );
    agent.core.release();
    let task: Task | undefined;
    await until(async () => {
      task = await alice.getTask({ tenant: '', id: sent.id });
      return task.status?.state === TaskState.TASK_STATE_COMPLETED;
    });
    expect(replyText(task!)).toBe('HoldingHello, alice.');
  });

  it('streams each reply delta as its own artifact update, then the whole reply, then completed', async () => {
    const events = (await collect(alice.sendMessageStream(send('hi')))).map(describeEvent);
    expect(events).toEqual([
      'task:working',
      'artifact:=Hello',
      'artifact:+, ',
      'artifact:+alice',
      'artifact:+.',
      'artifact:=Hello, alice.|last',
      'status:completed',
    ]);
  });

  it('gets a task with the history length asked for, and lists only the caller’s own tasks', async () => {
    const first = asTask(await alice.sendMessage(send('hi')));
    const second = asTask(await alice.sendMessage(send('again', { contextId: first.contextId })));
    expect(second.contextId).toBe(first.contextId);
    expect(agent.core.turns.at(-1)?.turn.contextId).toBe(first.contextId);

    expect((await alice.getTask({ tenant: '', id: first.id, historyLength: 0 })).history).toEqual([]);
    const inContext = await alice.listTasks({
      ...listAll,
      contextId: first.contextId,
      includeArtifacts: true,
    });
    expect(inContext.tasks.map((t) => t.id).sort()).toEqual([first.id, second.id].sort());
    expect(inContext.tasks.map(replyText)).toEqual(['Hello, alice.', 'Hello, alice.']);
    expect(inContext.nextPageToken).toBe('');

    const bobs = await bob.listTasks({ ...listAll });
    expect(bobs.tasks.map((t) => t.id)).not.toContain(first.id);
    await expect(bob.getTask({ tenant: '', id: first.id })).rejects.toThrow(/not found/i);
    await expect(bob.cancelTask({ tenant: '', id: first.id, metadata: undefined })).rejects.toThrow(
      /not found/i,
    );
  });

  it('cancels in the middle of a stream: the core sees the abort and the task ends canceled', async () => {
    const stream = alice.sendMessageStream(send('hold'));
    const task = (await stream.next()).value;
    expect(describeEvent(task!)).toBe('task:working');
    expect(describeEvent((await stream.next()).value!)).toBe('artifact:=Holding');
    const id = task!.payload!.$case === 'task' ? task!.payload!.value.id : '';

    const canceled = await alice.cancelTask({ tenant: '', id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await collect(stream)).map(describeEvent)).toEqual(['status:canceled']);
    const turn = agent.core.turns.find((t) => t.turn.taskId === id);
    expect(turn?.aborted).toBe(true);
    // A late reply from the core changes nothing.
    agent.core.release();
    expect((await alice.getTask({ tenant: '', id })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('resubscribes to a running task after the client dropped its stream', async () => {
    const dropped = new AbortController();
    const stream = alice.sendMessageStream(send('hold'), { signal: dropped.signal });
    const first = (await stream.next()).value!;
    const id = first.payload!.$case === 'task' ? first.payload!.value.id : '';
    expect(describeEvent((await stream.next()).value!)).toBe('artifact:=Holding');
    dropped.abort();
    await stream.return(undefined);

    const again = alice.resubscribeTask({ tenant: '', id });
    const current = (await again.next()).value!;
    expect(describeEvent(current)).toBe('task:working');
    agent.core.release();
    const rest = (await collect(again)).map(describeEvent);
    expect(rest.at(-1)).toBe('status:completed');
    expect(rest).toContain('artifact:=HoldingHello, alice.|last');
    await expect(collect(bob.resubscribeTask({ tenant: '', id }))).rejects.toThrow(/not found/i);
  });

  it('sets and gets a push notification config; a private address is refused', async () => {
    const task = asTask(await alice.sendMessage(send('hi')));
    const created = await alice.createTaskPushNotificationConfig({
      tenant: '',
      id: '',
      taskId: task.id,
      url: 'https://hooks.example.com/a2a',
      token: 'receiver-token',
      authentication: { scheme: 'Bearer', credentials: 'receiver-secret' },
    });
    expect(created.id).not.toBe('');
    const got = await alice.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id });
    expect(got).toMatchObject({
      url: 'https://hooks.example.com/a2a',
      token: 'receiver-token',
      taskId: task.id,
    });
    expect(got.authentication).toEqual({ scheme: 'Bearer', credentials: 'receiver-secret' });
    const listed = await alice.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    expect(listed.configs.map((c) => c.id)).toEqual([created.id]);
    await expect(
      bob.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id }),
    ).rejects.toThrow(/not found/i);
    await expect(
      alice.createTaskPushNotificationConfig({ ...created, id: '', url: 'https://10.0.0.8/hook' }),
    ).rejects.toThrow(/public address/);
    await alice.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id });
    const after = await alice.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    expect(after.configs).toEqual([]);
  });
});
