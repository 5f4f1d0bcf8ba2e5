import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/protocol/index.js';
import { A2ATaskFiles, type A2ATaskRecord } from '../../src/state/a2a-task-store.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'a2a-task-files-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function task(owner: string, at: string, overrides: Partial<A2ATaskRecord> = {}): A2ATaskRecord {
  const id = randomUUID();
  return {
    id,
    owner,
    contextId: 'ctx-1',
    state: 'TASK_STATE_COMPLETED',
    terminal: true,
    updatedAt: at,
    doc: { id, note: `task of ${owner}` },
    ...overrides,
  };
}

describe('A2A task files', () => {
  it('keeps a task across a reopen, and the first terminal state stands', () => {
    const files = new A2ATaskFiles(dir);
    const working = task('alice', '2026-01-01T00:00:01.000Z', {
      state: 'TASK_STATE_WORKING',
      terminal: false,
    });
    expect(files.put(working)).toBe(true);
    expect(files.put({ ...working, state: 'TASK_STATE_CANCELED', terminal: true })).toBe(true);
    expect(files.put({ ...working, state: 'TASK_STATE_COMPLETED', terminal: true })).toBe(false);
    const again = new A2ATaskFiles(dir);
    expect(again.get(working.id)).toMatchObject({ state: 'TASK_STATE_CANCELED', doc: working.doc });
    expect(() => again.put({ ...working, owner: 'bob' })).toThrow(/owner/);
    expect(again.get('not-a-uuid')).toBeUndefined();
  });

  it('lists an owner’s tasks newest first, filtered, in pages that meet exactly', () => {
    const files = new A2ATaskFiles(dir);
    const mine = ['01', '02', '03', '04', '05'].map((s) => task('alice', `2026-01-01T00:00:${s}.000Z`));
    for (const record of mine) files.put(record);
    files.put(task('bob', '2026-01-01T00:00:09.000Z'));
    files.put(task('alice', '2026-01-01T00:00:06.000Z', { contextId: 'ctx-2', state: 'TASK_STATE_FAILED' }));

    const first = files.list('alice', { contextId: 'ctx-1', limit: 2 });
    expect(first.total).toBe(5);
    expect(first.records.map((r) => r.updatedAt.slice(17, 19))).toEqual(['05', '04']);
    const last = first.records.at(-1)!;
    const second = files.list('alice', { contextId: 'ctx-1', limit: 10, after: last });
    expect(second.records.map((r) => r.updatedAt.slice(17, 19))).toEqual(['03', '02', '01']);
    expect(files.list('alice', { state: 'TASK_STATE_FAILED', limit: 10 }).records).toHaveLength(1);
    expect(files.list('alice', { updatedAfter: '2026-01-01T00:00:04.000Z', limit: 10 }).total).toBe(2);
    expect(files.list('bob', { limit: 10 }).records.map((r) => r.owner)).toEqual(['bob']);
  });

  it('hands back the unfinished tasks it found on opening, once', () => {
    const files = new A2ATaskFiles(dir);
    const running = task('alice', '2026-01-01T00:00:01.000Z', {
      state: 'TASK_STATE_WORKING',
      terminal: false,
    });
    files.put(running);
    files.put(task('alice', '2026-01-01T00:00:02.000Z'));
    expect(files.interrupted()).toEqual([]);
    writeFileSync(join(dir, 'a2a-tasks', `${randomUUID()}.json`), '{"torn": ');
    const reopened = new A2ATaskFiles(dir);
    expect(reopened.interrupted().map((r) => r.id)).toEqual([running.id]);
    expect(reopened.interrupted()).toEqual([]);
  });

  it('caps tasks per owner and in all, and forgets finished tasks past the retention', () => {
    let now = Date.parse('2026-01-02T00:00:00.000Z');
    const files = new A2ATaskFiles(dir, { maxPerOwner: 2, maxTotal: 3, now: () => now });
    files.put(task('alice', '2026-01-01T00:00:00.000Z'));
    files.put(task('alice', '2026-01-01T12:00:00.000Z'));
    const capped = (() => {
      try {
        files.admit('alice', 24 * 3600_000);
      } catch (error) {
        return error;
      }
    })();
    expect(capped).toBeInstanceOf(ProtocolError);
    expect(capped).toMatchObject({ httpStatus: 429, code: 'RATE_LIMITED' });
    files.put(task('bob', '2026-01-01T12:00:00.000Z'));
    expect(() => files.admit('carol', 24 * 3600_000)).toThrow(/retry later/);

    now = Date.parse('2026-01-02T06:00:00.000Z');
    files.sweep(24 * 3600_000);
    expect(files.list('alice', { limit: 10 }).total).toBe(1);
    expect(() => files.admit('alice', 24 * 3600_000)).not.toThrow();
    expect(new A2ATaskFiles(dir).list('alice', { limit: 10 }).total).toBe(1);
  });
});
