import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskJournal } from '../../src/state/task-journal.js';
import { TaskStore } from '../../src/state/task-store.js';
import { a2aTaskMeta as meta, answered as ended, dropOldestAtCap } from '../helpers/answered-tasks.js';

// The data dir's journal of answered tasks (A2A blocking sends, created ended): one line each, what a
// restart reads back, what a crash may cut, what dropping and sweeping leave, and when it is rewritten.
const dirs: string[] = [];
const stores: TaskStore[] = [];

afterEach(() => {
  vi.restoreAllMocks();
  for (const store of stores.splice(0)) store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'task-journal-'));
  dirs.push(dir);
  return dir;
}

function open(dir: string, options: ConstructorParameters<typeof TaskStore>[1] = {}): TaskStore {
  const store = new TaskStore(dir, options);
  stores.push(store);
  return store;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const journal = (dir: string) => join(dir, 'tasks', 'answered.jsonl');
const taskFiles = (dir: string) => readdirSync(join(dir, 'tasks')).filter((name) => name.endsWith('.json'));

describe('the journal of answered tasks', () => {
  it('holds a task created ended as one line, no file of its own, and reads it back after a restart', () => {
    const dir = dataDir();
    const store = open(dir);
    // Offsets are bytes: a reply of multi-byte characters, then one after it, read back at their places.
    const task = store.create(meta(), undefined, ended('Héllo 👋.'));
    const after = store.create(meta(), undefined, ended('next'));
    expect(taskFiles(dir)).toEqual([]);
    expect(readFileSync(journal(dir), 'utf8').split('\n')).toHaveLength(3);
    expect(statSync(journal(dir)).mode & 0o777).toBe(0o600);
    expect(store.getA2A(task.taskId)?.a2a?.doc).toEqual({ reply: 'Héllo 👋.' });
    expect(store.getA2A(after.taskId)?.a2a?.doc).toEqual({ reply: 'next' });
    store.close();

    const again = open(dir);
    expect(again.getA2A(task.taskId)).toMatchObject({ status: 'done', a2a: { doc: { reply: 'Héllo 👋.' } } });
    expect(again.getA2A(after.taskId)?.a2a?.doc).toEqual({ reply: 'next' });
    expect(again.listA2A('a2a-key:alice', { limit: 10 }).total).toBe(2);
    expect(again.activeCount).toBe(0);
  });

  it('drops a line a crash cut short, and appends after it as usual', () => {
    const dir = dataDir();
    const store = open(dir);
    const kept = store.create(meta(), undefined, ended('kept'));
    store.close();
    appendFileSync(journal(dir), '{"task":{"taskId":"9b1deb4d-3b7d');
    vi.spyOn(console, 'error').mockImplementation(() => undefined); // the cut is reported: see below

    const again = open(dir);
    expect(again.getA2A(kept.taskId)?.a2a?.doc).toEqual({ reply: 'kept' });
    const next = again.create(meta(), undefined, ended('next'));
    again.close();
    const third = open(dir);
    expect(third.getA2A(next.taskId)?.a2a?.doc).toEqual({ reply: 'next' });
    expect(third.listA2A('a2a-key:alice', { limit: 10 }).total).toBe(2);
  });

  it('forgets what the cap drops and what the sweep removes, across a restart too', () => {
    const dir = dataDir();
    let now = Date.now();
    const store = open(dir, { now: () => now, maxPerSender: 2 });
    const first = store.create(meta(), undefined, ended('first'));
    now += 1000;
    const second = store.create(meta(), undefined, ended('second'));
    expect(dropOldestAtCap(store)).toBe(true);
    expect(store.getA2A(first.taskId)).toBeUndefined();
    now += 3600_000;
    store.sweep(1800_000);
    expect(store.getA2A(second.taskId)).toBeUndefined();
    store.close();
    const again = open(dir, { now: () => now });
    expect(again.listA2A('a2a-key:alice', { limit: 10 }).total).toBe(0);
  });

  it('drops the task that finished first at the cap, whether a file or a line holds it, after a restart too', () => {
    const dir = dataDir();
    let now = 1_000_000;
    const store = open(dir, { now: () => now });
    const slow = store.create(meta()); // runs, in a file of its own
    now += 1000;
    const answered = store.create(meta(), undefined, ended('answered first'));
    now += 1000;
    store.finish(slow, ended('finished later'));
    store.close();
    const again = open(dir, { now: () => now });
    expect(dropOldestAtCap(again)).toBe(true);
    expect(again.getA2A(answered.taskId)).toBeUndefined();
    expect(again.getA2A(slow.taskId)?.a2a?.doc).toEqual({ reply: 'finished later' });
  });

  it('moves a task to a file of its own when it changes again (a push config added once answered)', () => {
    const dir = dataDir();
    const store = open(dir);
    const task = store.create(meta(), undefined, ended('answered'));
    const entry = { id: 'p1', config: { url: 'https://hooks.example.com/p1' }, wireVersion: '1.0' };
    expect(store.savePushConfig(task.taskId, entry, 4)).toBe('saved');
    expect(taskFiles(dir)).toEqual([`${task.taskId}.json`]);
    // The process dies here (no close): the move is already in the journal.
    const again = open(dir);
    expect(again.getA2A(task.taskId)).toMatchObject({ a2a: { doc: { reply: 'answered' } } });
    expect(again.pushConfigs(task.taskId).map((kept) => kept.id)).toEqual(['p1']);
    // Dropped from its file, it is gone: the journal's old line does not bring it back.
    expect(dropOldestAtCap(again)).toBe(true);
    again.close();
    expect(open(dir).getA2A(task.taskId)).toBeUndefined();
  });

  it('writes a drop with the next task, so a crash before it brings the dropped task back', () => {
    const dir = dataDir();
    const store = open(dir);
    const first = store.create(meta(), undefined, ended('first'));
    expect(dropOldestAtCap(store)).toBe(true);
    const lines = () => readFileSync(journal(dir), 'utf8').split('\n').filter(Boolean);
    expect(lines()).toHaveLength(1);
    // The process dies here: the drop was not written.
    expect(open(dir).getA2A(first.taskId)?.a2a?.doc).toEqual({ reply: 'first' });
    const second = store.create(meta(), undefined, ended('second'));
    expect(lines().map((line) => Object.keys(JSON.parse(line) as object)[0])).toEqual([
      'task',
      'drop',
      'task',
    ]);
    const after = open(dir);
    expect(after.getA2A(first.taskId)).toBeUndefined();
    expect(after.getA2A(second.taskId)?.a2a?.doc).toEqual({ reply: 'second' });
  });

  it('lets a file of its own win over a line left by a crash between writing the file and dropping the line', () => {
    const dir = dataDir();
    const store = open(dir);
    const task = store.create(meta(), undefined, ended('answered'));
    const line = readFileSync(journal(dir), 'utf8');
    const entry = { id: 'p1', config: { url: 'https://hooks.example.com/p1' }, wireVersion: '1.0' };
    expect(store.savePushConfig(task.taskId, entry, 4)).toBe('saved');
    store.close();
    writeFileSync(journal(dir), line); // the drop line never made it
    const again = open(dir);
    expect(again.pushConfigs(task.taskId).map((kept) => kept.id)).toEqual(['p1']);
    expect(dropOldestAtCap(again)).toBe(true);
    again.close();
    expect(open(dir).getA2A(task.taskId)).toBeUndefined();
  });

  it('is rewritten without its dead lines once they outnumber the live ones, after the call that dropped them', async () => {
    const dir = dataDir();
    const store = open(dir, { maxPerSender: 10_000 });
    const ids: string[] = [];
    for (let i = 0; i < 4200; i++) ids.push(store.create(meta(), undefined, ended(`reply ${i}`)).taskId);
    const full = statSync(journal(dir)).size;
    for (let i = 0; i < 4100; i++) expect(dropOldestAtCap(store, 'a2a-key:alice', 4200 - i)).toBe(true);
    // Not in the dropping call's own path: once it has returned.
    expect(statSync(journal(dir)).size).toBe(full);
    await tick();
    expect(statSync(journal(dir)).size).toBeLessThan(full / 10);
    expect(store.getA2A(ids[4199]!)?.a2a?.doc).toEqual({ reply: 'reply 4199' });
    const next = store.create(meta(), undefined, ended('after the rewrite'));
    store.close();
    const again = open(dir, { maxPerSender: 10_000 });
    expect(again.listA2A('a2a-key:alice', { limit: 200 }).total).toBe(101);
    expect(again.getA2A(ids[4150]!)?.a2a?.doc).toEqual({ reply: 'reply 4150' });
    expect(again.getA2A(next.taskId)?.a2a?.doc).toEqual({ reply: 'after the rewrite' });
  });

  it('may be closed twice (the second close does nothing)', () => {
    const dir = dataDir();
    const store = open(dir);
    store.create(meta(), undefined, ended('kept'));
    store.close();
    expect(() => store.close()).not.toThrow();
  });

  it('drops at open a line whose task id is not a task id: it is not held, read or handed on', () => {
    const dir = dataDir();
    const store = open(dir);
    const kept = store.create(meta(), undefined, ended('kept'));
    store.close();
    const good = JSON.parse(readFileSync(journal(dir), 'utf8')) as { task: { taskId: string } };
    appendFileSync(journal(dir), `${JSON.stringify({ task: { ...good.task, taskId: '../not-a-task' } })}\n`);
    const found: string[] = [];
    const lines = new TaskJournal(journal(dir), (task) => found.push(task.taskId));
    expect(found).toEqual([kept.taskId]);
    expect(lines.has('../not-a-task')).toBe(false);
    expect(lines.read('../not-a-task')).toBeUndefined();
    lines.close();
  });

  it('tells the operator what to do when it cannot be read', () => {
    const dir = dataDir();
    mkdirSync(journal(dir), { recursive: true }); // something else at its path
    expect(() => open(dir)).toThrow(
      `${journal(dir)} could not be read (EISDIR): it holds the A2A tasks already answered. Fix it`,
    );
  });

  it('reports at start how many bytes of a cut line and how many unreadable lines it dropped', () => {
    const dir = dataDir();
    const store = open(dir);
    const kept = store.create(meta(), undefined, ended('kept'));
    store.close();
    appendFileSync(journal(dir), 'not json\n{"task":{"taskId":"nope"}}\n\n{"task":{"taskId":"9b1d');
    const report = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const again = open(dir);
    expect(again.getA2A(kept.taskId)?.a2a?.doc).toEqual({ reply: 'kept' });
    expect(report.mock.calls).toEqual([
      [
        `Agent: ${journal(dir)}: dropped a last line cut short (23 bytes) and 2 unreadable lines at start; the tasks on them are forgotten.`,
      ],
    ]);
    // Nothing left to report the next time.
    again.close();
    open(dir);
    expect(report).toHaveBeenCalledTimes(1);
  });

  it('cuts a line written short (file size limit) back off and throws, so no partial line is left', () => {
    const dir = dataDir();
    // A real short write: a child process under `ulimit -f 2` (2 KiB) appends ~600-byte lines until one
    // does not fit (Node ignores SIGXFSZ, so write() returns the bytes that fit).
    const child = `
      import { TaskStore } from ${JSON.stringify(resolve('src/state/task-store.ts'))};
      const store = new TaskStore(${JSON.stringify(dir)});
      const meta = ${JSON.stringify(meta())};
      const ended = ${JSON.stringify(ended('x'.repeat(400)))};
      let written = 0;
      try {
        for (;;) { store.create(meta, undefined, ended); written++; }
      } catch (error) {
        console.log(JSON.stringify({ written, error: error.message }));
      }`;
    const out = execFileSync(
      'bash',
      ['-c', 'ulimit -f 2 && exec node --import tsx --input-type=module -e "$0"', child],
      { encoding: 'utf8' },
    );
    const { written, error } = JSON.parse(out) as { written: number; error: string };
    expect(error).toMatch(
      /answered\.jsonl: only \d+ of \d+ bytes could be written \(the disk is full, or a file size limit was reached\); free some space/,
    );
    const text = readFileSync(journal(dir), 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    expect(text.split('\n').filter(Boolean)).toHaveLength(written);
    expect(open(dir).listA2A('a2a-key:alice', { limit: 10 }).total).toBe(written);
  });

  it('keeps every live line whole through a rewrite, lines longer than a write chunk too', () => {
    const dir = dataDir();
    const store = open(dir);
    const replies = [
      'small',
      'x'.repeat(100_000),
      ...Array.from({ length: 300 }, (_, i) => `${i}`.repeat(300)),
    ];
    const ids = replies.map((reply) => store.create(meta(), undefined, ended(reply)).taskId);
    store.close();
    appendFileSync(journal(dir), 'not json\n'); // an unreadable line: the open rewrites the file
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const before = statSync(journal(dir)).size;
    open(dir).close();
    expect(statSync(journal(dir)).size).toBe(before - 'not json\n'.length);
    const again = open(dir);
    ids.forEach((id, i) => expect(again.getA2A(id)?.a2a?.doc).toEqual({ reply: replies[i] }));
  });

  it('writes the drop lines of a sweep at its end, all in one go, so a crash after it keeps them swept', () => {
    const dir = dataDir();
    let now = 1_000_000;
    const store = open(dir, { now: () => now });
    const old = [1, 2, 3].map((i) => store.create(meta(), undefined, ended(`old ${i}`)).taskId);
    now += 3600_000;
    const kept = store.create(meta(), undefined, ended('kept')).taskId;
    store.sweep(1800_000);
    const kinds = readFileSync(journal(dir), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => Object.keys(JSON.parse(line) as object)[0]);
    expect(kinds).toEqual(['task', 'task', 'task', 'task', 'drop', 'drop', 'drop']);
    // The process dies here (no close): the swept tasks stay gone.
    const again = open(dir, { now: () => now });
    for (const id of old) expect(again.getA2A(id)).toBeUndefined();
    expect(again.getA2A(kept)?.a2a?.doc).toEqual({ reply: 'kept' });
  });

  it('leaves a waiting drop for the next task when a task in a file of its own is saved', () => {
    const dir = dataDir();
    const store = open(dir);
    store.create(meta(), undefined, ended('first'));
    expect(dropOldestAtCap(store)).toBe(true);
    const running = store.create(meta()); // in a file of its own
    store.finish(running, ended('done'));
    store.sweep(3600_000); // nothing old enough
    // One write per call: the drop still waits for the next line.
    expect(readFileSync(journal(dir), 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
  });
});
