import * as fs from 'node:fs';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { TaskStore } from '../../src/state/task-store.js';
import { a2aTaskMeta, answered as ended, dropOldestAtCap } from '../helpers/answered-tasks.js';

// Opening the rewritten journal or its temp file cannot be made to fail for real here (the open follows a
// rename in the same process; root ignores permissions; no disk to fill): node:fs's openSync is wrapped
// so that the one open fails.
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  return { ...real, openSync: vi.fn(real.openSync) };
});

const dirs: string[] = [];
afterEach(() => {
  vi.mocked(fs.openSync).mockRestore();
  vi.restoreAllMocks();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const meta = a2aTaskMeta();

it('keeps the journal open and working when the rewritten file cannot be opened', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'task-journal-reopen-'));
  dirs.push(dir);
  const path = join(dir, 'tasks', 'answered.jsonl');
  const store = new TaskStore(dir, { maxPerSender: 10_000 });
  const ids: string[] = [];
  for (let i = 0; i < 4200; i++) ids.push(store.create(meta, undefined, ended(`reply ${i}`)).taskId);
  const before = fs.readFileSync(path);
  const real = vi.mocked(fs.openSync).getMockImplementation()!;
  // The rewritten file's open for reading and appending (its temp name, before it replaces the journal).
  vi.mocked(fs.openSync).mockImplementation((at, ...rest) => {
    if (String(at).endsWith('.tmp') && rest[0] === 'a+')
      throw Object.assign(new Error(`EMFILE: too many open files, open '${String(at)}'`), { code: 'EMFILE' });
    return real(at, ...rest);
  });
  const report = vi.spyOn(console, 'error').mockImplementation(() => undefined);
  for (let i = 0; i < 4100; i++) expect(dropOldestAtCap(store, 'a2a-key:alice', 4200 - i)).toBe(true);
  await new Promise((resolve) => setImmediate(resolve)); // the rewrite runs after the dropping call
  expect(report).toHaveBeenCalledWith(
    expect.stringMatching(/answered\.jsonl could not be rewritten .*EMFILE.*tried again later/),
  );
  expect(store.getA2A(ids[4199]!)?.a2a?.doc).toEqual({ reply: 'reply 4199' });
  // Nothing was replaced, and no temp file is left beside it.
  expect(fs.readFileSync(path).equals(before)).toBe(true);
  expect(fs.readdirSync(join(dir, 'tasks')).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  const next = store.create(meta, undefined, ended('after the failed open'));
  expect(store.getA2A(next.taskId)?.a2a?.doc).toEqual({ reply: 'after the failed open' });
  // The process dies here: what was appended after the failed rewrite is in the journal, not in a
  // replaced file.
  vi.mocked(fs.openSync).mockImplementation(real);
  const again = new TaskStore(dir, { maxPerSender: 10_000 });
  expect(again.getA2A(next.taskId)?.a2a?.doc).toEqual({ reply: 'after the failed open' });
  again.close();
  expect(() => store.close()).not.toThrow();
});

it('opens even when the rewrite that leaves out unreadable lines fails, and says so', () => {
  const dir = mkdtempSync(join(tmpdir(), 'task-journal-faults-'));
  dirs.push(dir);
  const path = join(dir, 'tasks', 'answered.jsonl');
  const store = new TaskStore(dir);
  const kept = store.create(meta, undefined, ended('kept'));
  store.close();
  appendFileSync(path, 'not json\n');
  const real = vi.mocked(fs.openSync).getMockImplementation()!;
  vi.mocked(fs.openSync).mockImplementation((at, ...rest) => {
    if (String(at).endsWith('.tmp'))
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    return real(at, ...rest);
  });
  const report = vi.spyOn(console, 'error').mockImplementation(() => undefined);
  const again = new TaskStore(dir);
  expect(again.getA2A(kept.taskId)?.a2a?.doc).toEqual({ reply: 'kept' });
  expect(report).toHaveBeenCalledWith(
    expect.stringMatching(/answered\.jsonl could not be rewritten .*ENOSPC/),
  );
  again.close();
});
