import { describe, expect, it } from 'vitest';
import { OpenStreams } from '../../src/a2a/open-streams.js';
import { ProtocolError } from '../../src/protocol/index.js';

// The counts alone (through the SDK's client, on each transport and on replicas: a2a-stream-caps.test.ts).
function refusal(take: () => unknown): ProtocolError {
  try {
    take();
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('open streams', () => {
  it('caps a caller per task and in all, with a 429 that says which cap and what to do', () => {
    const streams = new OpenStreams({ perTask: 2, perCaller: 3 });
    streams.take('a', 'task-1');
    streams.take('a', 'task-1');
    const onTask = refusal(() => streams.take('a', 'task-1'));
    expect(onTask).toMatchObject({ code: 'RATE_LIMITED', httpStatus: 429, retryAfterSeconds: 10 });
    expect(onTask.message).toMatch(/^a holds 2 open streams on task task-1, the most one caller may hold/);
    streams.take('a');
    const inAll = refusal(() => streams.take('a', 'task-2'));
    expect(inAll.message).toMatch(
      /^a holds 3 open streams here .*Close one, or read your tasks with GetTask/,
    );
    // Another caller's count is its own, on the same task id too.
    streams.take('b', 'task-1');
    expect(streams.size).toBe(4);
  });

  it('counts a send on its task once the task is known; a place is given back once', () => {
    const streams = new OpenStreams({ perTask: 2, perCaller: 4 });
    const send = streams.take('a');
    send.onTask('task-1');
    send.onTask('task-2');
    streams.take('a', 'task-1');
    expect(() => streams.take('a', 'task-1')).toThrow(/on task task-1/);
    streams.take('a', 'task-2');
    send.release();
    send.release();
    expect(streams.size).toBe(2);
    streams.take('a', 'task-1');
    // A place given back before its task was known is counted nowhere afterwards.
    const early = streams.take('a');
    early.release();
    early.onTask('task-2');
    expect(streams.size).toBe(3);
    streams.take('a', 'task-2');
  });
});
