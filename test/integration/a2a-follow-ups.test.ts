// A follow-up message: one that names its task (issue 28, item 3). A2A 1.0 (§3.1.1, CORE-SEND-002): a task in
// an interrupted state (input-required, auth-required) takes one, and goes on with it as its next turn; a
// task in a terminal state refuses it with UnsupportedOperationError. A task still working takes none either
// (a second turn would run inside it, beside the first). The SDK's own client on both bindings, against the
// front door in a real Koa server, tasks in the data dir; the chat core is the fake one.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { callContext } from '../../src/a2a/call-context.js';
import { agentMessage } from '../../src/a2a/message-text.js';
import { a2aClient, KEYS, startA2AAgent, type A2AAgent, type Transport } from '../helpers/a2a-agent.js';
import { asTask, collect, describeEvent, replyText, send } from '../helpers/a2a-messages.js';
import { until } from '../helpers/polling.js';

let agent: A2AAgent;

beforeAll(async () => {
  agent = await startA2AAgent();
});

afterAll(async () => {
  await agent.close();
});

/** A task of `owner` that waits in `state`, as an agent that asked a question leaves it (in the records). */
async function waitingTask(owner: 'alice' | 'bob', state: TaskState, question: string): Promise<Task> {
  const id = randomUUID();
  const contextId = randomUUID();
  const task: Task = {
    id,
    contextId,
    status: { state, message: agentMessage(id, contextId, question), timestamp: new Date().toISOString() },
    artifacts: [],
    history: [
      {
        messageId: randomUUID(),
        contextId,
        taskId: id,
        role: Role.ROLE_USER,
        parts: [
          {
            content: { $case: 'text', value: 'book a table' },
            mediaType: '',
            filename: '',
            metadata: undefined,
          },
        ],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
    ],
    metadata: undefined,
  };
  await agent.a2a.store.save(task, callContext({ id: `a2a-key:${owner}`, name: owner }, '1.0'));
  return task;
}

const texts = (task: Task) =>
  task.history.map((m) => (m.parts[0]?.content?.$case === 'text' ? m.parts[0].content.value : ''));

describe.each<Transport>(['JSONRPC', 'HTTP+JSON'])('the SDK client over %s', (transport) => {
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    alice = await a2aClient(agent.url, KEYS.alice, transport);
    bob = await a2aClient(agent.url, KEYS.bob, transport);
  });

  it('a task waiting for input takes the follow-up, runs it as its next turn and keeps its history', async () => {
    const task = await waitingTask('alice', TaskState.TASK_STATE_INPUT_REQUIRED, 'For how many?');
    const answered = asTask(await alice.sendMessage(send('four', { taskId: task.id })));
    expect(answered.id).toBe(task.id);
    expect(answered.contextId).toBe(task.contextId);
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyText(answered)).toBe('Hello, alice.');
    expect(texts(answered)).toEqual(['book a table', 'four']);
    expect(agent.core.turns.at(-1)).toMatchObject({
      caller: { id: 'a2a-key:alice' },
      turn: { message: 'four', taskId: task.id, contextId: task.contextId },
    });
    // Read again later, it is the same (written as it ended).
    expect(texts(await alice.getTask({ tenant: '', id: task.id }))).toEqual(['book a table', 'four']);
  });

  it('a task waiting for authentication takes one too, over a stream', async () => {
    const task = await waitingTask('alice', TaskState.TASK_STATE_AUTH_REQUIRED, 'Sign in first.');
    const events = (await collect(alice.sendMessageStream(send('signed in', { taskId: task.id })))).map(
      describeEvent,
    );
    expect(events[0]).toBe('task:working');
    expect(events.at(-1)).toBe('status:completed');
    expect(texts(await alice.getTask({ tenant: '', id: task.id }))).toEqual(['book a table', 'signed in']);
  });

  it("a task that ended refuses it (UnsupportedOperation); another caller's task is not found", async () => {
    const done = asTask(await alice.sendMessage(send('hi')));
    await expect(alice.sendMessage(send('more', { taskId: done.id }))).rejects.toThrow(
      /has ended and takes no more messages/,
    );
    const waiting = await waitingTask('alice', TaskState.TASK_STATE_INPUT_REQUIRED, 'Which day?');
    await expect(bob.sendMessage(send('friday', { taskId: waiting.id }))).rejects.toThrow(
      /No task .* of yours/,
    );
    expect((await alice.getTask({ tenant: '', id: waiting.id })).status?.state).toBe(
      TaskState.TASK_STATE_INPUT_REQUIRED,
    );
  });

  it('a task still working refuses it, and goes on as it was', async () => {
    const running = asTask(
      await alice.sendMessage(send('hold', { configuration: { returnImmediately: true } })),
    );
    expect(running.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    await expect(alice.sendMessage(send('and this', { taskId: running.id }))).rejects.toThrow(
      /still working/,
    );
    agent.core.release();
    await until(
      async () =>
        (await alice.getTask({ tenant: '', id: running.id })).status?.state ===
        TaskState.TASK_STATE_COMPLETED,
    );
    expect(agent.core.turns.filter((turn) => turn.turn.message === 'and this')).toEqual([]);
  });
});
