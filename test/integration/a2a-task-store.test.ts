import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import { TaskStore } from '../../src/state/task-store.js';
import type { A2APart, TaskOutcome, TaskState as Tasks } from '../../src/state/tasks.js';
import { a2aClient, KEYS, startA2AAgent, type A2AAgent } from '../helpers/a2a-agent.js';
import { asTask, collect, replyText, send } from '../helpers/a2a-messages.js';
import { startGatewayDouble } from '../fixtures/gateway-double.js';
import { startAgent } from '../helpers/agents.js';
import { envelope, post, sign } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';

// A2A tasks in the data dir, through the SDK's client: what survives a restart, what a stream costs the
// store, and the caps. The chat core is a fake (test/helpers/a2a-agent.ts); the real core behind this door
// is tested in a2a-app*.test.ts.
const agents: A2AAgent[] = [];
const dirs: string[] = [];

const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
  for (const cleanup of cleanups.splice(0)) await cleanup();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function start(options: Parameters<typeof startA2AAgent>[0]) {
  const agent = await startA2AAgent(options);
  agents.push(agent);
  return agent;
}

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-restart-'));
  dirs.push(dir);
  return dir;
}

describe('A2A tasks in the data dir', () => {
  it('keep a finished task across a restart; one cut short by it ends failed', async () => {
    const dir = dataDir();
    const before = await start({ dataDir: dir });
    const alice = await a2aClient(before.url, KEYS.alice);
    const done = asTask(await alice.sendMessage(send('hi')));
    const cut = asTask(await alice.sendMessage(send('hold', { configuration: { returnImmediately: true } })));
    expect(cut.status?.state).toBe(TaskState.TASK_STATE_WORKING);

    // The first agent never finishes (as if its process died); a second one opens the same data dir.
    const after = await start({ dataDir: dir });
    const again = await a2aClient(after.url, KEYS.alice);
    const kept = await again.getTask({ tenant: '', id: done.id });
    expect(kept.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyText(kept)).toBe('Hello, alice.');
    const failed = await again.getTask({ tenant: '', id: cut.id });
    expect(failed.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(failed.status?.message?.parts[0]?.content?.value).toMatch(/restarted/);
    const listed = await again.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '',
      statusTimestampAfter: undefined,
    });
    expect(listed.tasks.map((t) => t.id).sort()).toEqual([done.id, cut.id].sort());
    const bob = await a2aClient(after.url, KEYS.bob);
    await expect(bob.getTask({ tenant: '', id: done.id })).rejects.toThrow(/not found/i);
  });

  it('share the task store with SAMVAD, each door serving its own tasks only', async () => {
    const gateway = await startGatewayDouble({ token: 'gw-token' });
    const samvad = await startAgent({ env: { GATEWAY_URL: gateway.url, GATEWAY_TOKEN: 'gw-token' } });
    const peer = await startAgent();
    cleanups.push(
      () => gateway.close(),
      () => samvad.close(),
      () => peer.close(),
    );
    const door = await start({ taskState: samvad.app.server.tasks });
    const alice = await a2aClient(door.url, KEYS.alice);
    const a2aTask = asTask(await alice.sendMessage(send('hi')));
    const polled = await fetch(`${samvad.url}/agent/task/${a2aTask.id}`);
    expect(polled.status).toBe(404);
    const accepted = await post(
      samvad.url,
      '/agent/task',
      sign(envelope(peer.id, samvad.id, 'async', { message: 'hi' }), peer.app.keys.signer),
    );
    expect(accepted.status, accepted.text).toBe(202);
    const samvadId = accepted.json.taskId as string;
    expect((await fetch(`${samvad.url}/agent/task/${samvadId}`)).status).toBe(200);
    await expect(alice.getTask({ tenant: '', id: samvadId })).rejects.toThrow(/not found/i);
    await expect(alice.cancelTask({ tenant: '', id: samvadId, metadata: undefined })).rejects.toThrow(
      /not found/i,
    );
  });

  it('write a streamed task on its changes of state, not on each reply token', async () => {
    const dir = dataDir();
    const { writes, counting } = countingWrites(dir);
    const agent = await start({ dataDir: dir, taskState: counting });
    const alice = await a2aClient(agent.url, KEYS.alice);
    const events = await collect(alice.sendMessageStream(send('hi')));
    expect(events.length).toBe(7);
    expect(agent.core.turns[0]?.streamed).toBe(true);
    expect(writes.map((w) => w.state)).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
    const stored = writes.at(-1)!.doc as { artifacts: { parts: { text: string }[] }[] };
    expect(stored.artifacts[0]?.parts).toEqual([{ text: 'Hello, alice.', mediaType: 'text/plain' }]);
  });

  it('write a blocking send once, finished, and ask the core for the whole reply (nobody sees pieces)', async () => {
    const dir = dataDir();
    const { writes, counting } = countingWrites(dir);
    const agent = await start({ dataDir: dir, taskState: counting });
    const alice = await a2aClient(agent.url, KEYS.alice);
    const task = asTask(await alice.sendMessage(send('hi')));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyText(task)).toBe('Hello, alice.');
    expect(agent.core.turns[0]?.streamed).toBe(false);
    expect(writes.map((w) => w.state)).toEqual(['TASK_STATE_COMPLETED']);
    expect(replyText(await alice.getTask({ tenant: '', id: task.id }))).toBe('Hello, alice.');
    // A send that returns at once is read while it runs: written when it starts, and streamed.
    writes.length = 0;
    const later = asTask(await alice.sendMessage(send('hi', { configuration: { returnImmediately: true } })));
    await until(
      async () =>
        (await alice.getTask({ tenant: '', id: later.id })).status?.state === TaskState.TASK_STATE_COMPLETED,
      2000,
      'the non-blocking task to end',
    );
    expect(agent.core.turns[1]?.streamed).toBe(true);
    expect(writes.map((w) => w.state)).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
  });

  it('refuse a task past the caller’s cap of unfinished tasks with 429, before the core runs', async () => {
    const dir = dataDir();
    const agent = await start({ dataDir: dir, taskState: new TaskStore(dir, { maxPerSender: 2 }) });
    const alice = await a2aClient(agent.url, KEYS.alice, 'HTTP+JSON');
    const later = { configuration: { returnImmediately: true } };
    const held = [
      asTask(await alice.sendMessage(send('hold', later))),
      asTask(await alice.sendMessage(send('hold', later))),
    ];
    const refused = await alice.sendMessage(send('hi')).catch((error: unknown) => error);
    expect(refused).toMatchObject({ statusCode: 429, message: expect.stringMatching(/already has 2 tasks/) });
    expect(agent.core.turns).toHaveLength(2);
    const bob = await a2aClient(agent.url, KEYS.bob, 'HTTP+JSON');
    expect(asTask(await bob.sendMessage(send('hi'))).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // Once they finish, the oldest finished task makes room: a busy caller is not refused for a day.
    agent.core.release();
    for (const { id } of held) {
      const state = async () => (await alice.getTask({ tenant: '', id })).status?.state;
      await until(async () => (await state()) === TaskState.TASK_STATE_COMPLETED, 2000, `task ${id} to end`);
    }
    for (let i = 0; i < 3; i++) {
      expect(asTask(await alice.sendMessage(send('hi'))).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    }
  });

  it('count blocking sends still running against the cap, though they are written only when they end', async () => {
    const dir = dataDir();
    const agent = await start({ dataDir: dir, taskState: new TaskStore(dir, { maxPerSender: 2 }) });
    const alice = await a2aClient(agent.url, KEYS.alice, 'HTTP+JSON');
    // A refusal by the gate gives back the place it held: it never counts.
    await expect(alice.sendMessage(send('too often'))).rejects.toMatchObject({ statusCode: 429 });
    const running = [alice.sendMessage(send('hold')), alice.sendMessage(send('hold'))];
    await until(async () => agent.core.turns.length === 2, 2000, 'both blocking sends to reach the core');
    const refused = await alice.sendMessage(send('hi')).catch((error: unknown) => error);
    expect(refused).toMatchObject({ statusCode: 429, message: expect.stringMatching(/already has 2 tasks/) });
    expect(agent.core.turns).toHaveLength(2);
    agent.core.release();
    for (const task of await Promise.all(running)) {
      expect(asTask(task).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    }
    // Written and finished, they make room as any finished task does; nothing is held any more.
    const more = await Promise.all([alice.sendMessage(send('hi')), alice.sendMessage(send('hi'))]);
    expect(more.map((task) => asTask(task).status?.state)).toEqual([
      TaskState.TASK_STATE_COMPLETED,
      TaskState.TASK_STATE_COMPLETED,
    ]);
  });

  it('end failed when the agent stops with their runs in flight, whether the core listens or not', async () => {
    const agent = await start({ dataDir: dataDir() });
    const alice = await a2aClient(agent.url, KEYS.alice);
    const later = { configuration: { returnImmediately: true } };
    const held = asTask(await alice.sendMessage(send('hold', later)));
    const deaf = asTask(await alice.sendMessage(send('deaf', later)));
    // A blocking send in flight gets its task, ended, on its open request.
    const blocking = alice.sendMessage(send('hold'));
    await until(async () => agent.core.turns.length === 3, 2000, 'the blocking send to reach the core');
    agent.door.close();
    const cut = asTask(await blocking);
    expect(cut.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(cut.status?.message?.parts[0]?.content?.value).toMatch(/agent stopped/);
    expect(cut.history?.map((message) => message.parts[0]?.content?.value)).toEqual([
      'hold',
      expect.stringMatching(/agent stopped/),
    ]);
    agent.core.release();
    for (const id of [held.id, deaf.id]) {
      const state = async () => (await alice.getTask({ tenant: '', id })).status?.state;
      await until(async () => (await state()) !== TaskState.TASK_STATE_WORKING, 2000, `task ${id} to end`);
      const task = await alice.getTask({ tenant: '', id });
      expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      expect(task.status?.message?.parts[0]?.content?.value).toMatch(/agent stopped/);
    }
  });
});

/** A data-dir task store that notes each A2A write (its part) as it passes it on. */
function countingWrites(dir: string): { writes: A2APart[]; counting: Tasks } {
  const writes: A2APart[] = [];
  const tasks = new TaskStore(dir);
  const counting = Object.assign(Object.create(tasks) as Tasks, {
    create: (meta: Parameters<Tasks['create']>[0], id?: string, outcome?: TaskOutcome) => {
      writes.push(outcome && 'a2a' in outcome ? outcome.a2a : meta.a2a!);
      return tasks.create(meta, id, outcome);
    },
    saveA2A: (task: Parameters<Tasks['saveA2A']>[0], part: A2APart) => {
      writes.push(part);
      return tasks.saveA2A(task, part);
    },
    finish: (task: Parameters<Tasks['finish']>[0], outcome: TaskOutcome) => {
      if ('a2a' in outcome) writes.push(outcome.a2a);
      return tasks.finish(task, outcome);
    },
  });
  return { writes, counting };
}
