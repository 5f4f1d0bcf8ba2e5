import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import type { EnvelopeEvent } from '../../src/agent/events.js';
import { a2aClient, KEYS, startA2AAgent, type A2AAgent } from '../helpers/a2a-agent.js';
import { asTask, send } from '../helpers/a2a-messages.js';
import { until } from '../helpers/polling.js';
import { readSse, type SseBlock } from '../helpers/sse.js';

// The wire under the SDK client: SSE framing and the agent's SSE conventions (push notifications:
// a2a-push.test.ts). The chat core is a fake (test/helpers/a2a-agent.ts); the real core and gateway: a2a-app*.test.ts.
let agent: A2AAgent;

beforeAll(async () => {
  agent = await startA2AAgent();
});

afterAll(async () => {
  await agent.close();
});

const auth = { Authorization: `Bearer ${KEYS.alice}` };
const hold = { message: { messageId: 'hold-1', role: 'ROLE_USER', parts: [{ text: 'hold' }] } };

/**
 * An agent of its own, and a caller that opened a stream on it and left once it learnt the task's id; done
 * when the server has noticed the caller leave (its traffic entry, 499).
 */
async function leftStream(): Promise<{ own: A2AAgent; taskId: string }> {
  const calls: EnvelopeEvent[] = [];
  const own = await startA2AAgent({ onCall: (event) => calls.push(event) });
  onTestFinished(() => own.close());
  const leaving = new AbortController();
  const response = await fetch(`${own.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'SendStreamingMessage', params: hold }),
    signal: leaving.signal,
  });
  let taskId = '';
  for await (const block of readSse(response)) {
    taskId = (block.data as { result?: { task?: { id: string } } } | undefined)?.result?.task?.id ?? '';
    if (taskId) break;
  }
  leaving.abort();
  await until(() => calls.some((call) => call.status === 499), 5000, 'the server to see the caller leave');
  return { own, taskId };
}

describe('streams', () => {
  it('frames JSON-RPC events as SSE with the agent’s headers and keep-alive comments', async () => {
    const response = await fetch(`${agent.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'req-9', method: 'SendStreamingMessage', params: hold }),
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    const blocks: SseBlock[] = [];
    const reading = (async () => {
      for await (const block of readSse(response)) blocks.push(block);
    })();
    // The helper's agent sends a keep-alive comment after 50 ms without events.
    await until(() => blocks.some((b) => b.comment === 'keep-alive'), 5000, 'a keep-alive comment');
    agent.core.release();
    await reading;
    const events = blocks.filter((b) => b.data !== undefined).map((b) => b.data as Record<string, unknown>);
    expect(events.every((e) => e.jsonrpc === '2.0' && e.id === 'req-9' && 'result' in e)).toBe(true);
    expect(Object.keys((events[0] as { result: object }).result)).toEqual(['task']);
    expect(events.at(-1)).toMatchObject({
      result: { statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } } },
    });
  });

  it('frames HTTP+JSON events as bare StreamResponses', async () => {
    const response = await fetch(`${agent.url}/a2a/rest/message:stream`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/a2a+json' },
      body: JSON.stringify({ message: { messageId: 'r-1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }),
    });
    const events: unknown[] = [];
    for await (const block of readSse(response)) if (block.data !== undefined) events.push(block.data);
    expect(Object.keys(events[0] as object)).toEqual(['task']);
    expect(events.at(-1)).toMatchObject({ statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } } });
  });

  it('keeps the task going when the caller leaves a stream, and answers the next stream as usual', async () => {
    const { own, taskId } = await leftStream();
    // The reply comes only after the server let the stream go: its events are still saved.
    await new Promise((resolve) => setTimeout(resolve, 50));
    own.core.release();
    const client = await a2aClient(own.url, KEYS.alice);
    await until(
      async () => {
        const task = await client.getTask({ tenant: '', id: taskId });
        return task.status?.state === TaskState.TASK_STATE_COMPLETED;
      },
      3000,
      'the task to end completed',
    );
    const next = asTask(await client.sendMessage(send('hi')));
    expect(next.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  // Shutdown waits while activeRuns() is above 0: the task state must not close under a task's last write.
  it.each([
    ['completes', TaskState.TASK_STATE_COMPLETED],
    ['is aborted by the agent stopping', TaskState.TASK_STATE_FAILED],
  ])(
    'counts a stream whose caller left as running until its last write, when its run %s',
    async (_how, last) => {
      const { own, taskId } = await leftStream();
      // The task's last write waits until the test lets it go.
      const store = own.a2a.door.tasks;
      const save = store.save.bind(store);
      let lastWriteCame = false;
      let letSave!: () => void;
      const saved = new Promise<void>((resolve) => (letSave = resolve));
      vi.spyOn(store, 'save').mockImplementation(async (task, context) => {
        if (task.status?.state === last) {
          lastWriteCame = true;
          await saved;
        }
        return save(task, context);
      });
      if (last === TaskState.TASK_STATE_COMPLETED) own.core.release();
      else own.door.close();
      await until(() => lastWriteCame, 3000, 'the last write');
      expect(own.door.executor.activeCount).toBe(0);
      expect(own.door.activeRuns()).toBe(1);
      letSave();
      await until(() => own.door.activeRuns() === 0, 3000, 'the stream to be read to its end');
      const task = await (await a2aClient(own.url, KEYS.alice)).getTask({ tenant: '', id: taskId });
      expect(task.status?.state).toBe(last);
    },
  );
});
