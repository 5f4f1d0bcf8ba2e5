import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Task, TaskState } from '@a2a-js/sdk';
import { callContext, scopeOf } from '../../src/a2a/call-context.js';
import { A2ATaskStore } from '../../src/a2a/task-store.js';
import { A2ARecords } from '../../src/state/a2a-records.js';
import { TaskStore } from '../../src/state/task-store.js';

// The SDK's TaskStore over the data dir's records, driven directly: what a request writes, and the places
// the caps hold for it.
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function stores(maxPerSender = 200) {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-writes-'));
  dirs.push(dir);
  const records = new A2ARecords(new TaskStore(dir, { maxPerSender }), { retentionMs: () => 3600_000 });
  return { records, store: new A2ATaskStore(records) };
}

const ALICE = { id: 'a2a-key:alice', name: 'alice' };
const ID = '0b6f7a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b';

function task(state: string): Task {
  return Task.fromJSON({
    id: ID,
    contextId: 'ctx-1',
    status: { state, timestamp: new Date().toISOString() },
    artifacts: [],
    history: [],
  });
}

describe('A2A task store', () => {
  it('writes a quiet task once: a later write in the same request (the SDK failing it after) changes nothing', async () => {
    const { records, store } = stores();
    const create = vi.spyOn(records, 'create');
    const context = callContext(ALICE, '1.0');
    scopeOf(context).quiet = true;
    await store.save(task('TASK_STATE_COMPLETED'), context);
    await store.save(task('TASK_STATE_FAILED'), context);
    expect(create).toHaveBeenCalledTimes(1);
    const stored = await store.load(ID, callContext(ALICE, '1.0'));
    expect(stored?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('holds a place under the cap per admission until it is given back, once however often it is given back', async () => {
    const { store } = stores(2);
    const first = await store.admit(ALICE.id);
    await store.admit(ALICE.id);
    await expect(store.admit(ALICE.id)).rejects.toMatchObject({ httpStatus: 429 });
    first();
    first();
    await store.admit(ALICE.id);
    await expect(store.admit(ALICE.id)).rejects.toMatchObject({ httpStatus: 429 });
    // Another caller's places are its own.
    await store.admit('a2a-key:bob');
  });
});
