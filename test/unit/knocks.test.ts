import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Knocks, KNOCKS_FILE, type KnockRecord } from '../../src/access/knocks.js';
import { tempDir } from '../helpers/agents.js';

// The knocks' list (src/access/knocks.ts): its bounds, what it keeps on disk, and the key it holds for a
// caller until that caller's first read.
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function list(now = { t: 1_000_000 }, limits = { maxWaiting: 3, maxPerAddress: 2 }) {
  const dir = tempDir('knocks-unit-');
  dirs.push(dir);
  return { dir, now, knocks: new Knocks(dir, { ...limits, now: () => now.t }) };
}

const record = (address: string, taskId: string, now: number): Omit<KnockRecord, 'code'> => ({
  taskId,
  owner: 'a2a-anon:127.0.0.1',
  address,
  contextId: 'ctx',
  preview: 'hi',
  messages: 1,
  chars: 2,
  firstAt: now,
  lastAt: now,
  expiresAt: now + 1000,
  path: '/a2a/jsonrpc',
  transport: 'jsonrpc',
});

describe('Knocks', () => {
  it('counts places taken and not yet added, per address and in all, and counts what it refuses', () => {
    const { knocks } = list();
    const a1 = knocks.admit('fwd:1.1.1.1');
    const a2 = knocks.admit('fwd:1.1.1.1');
    expect('release' in a1 && 'release' in a2).toBe(true);
    expect(knocks.admit('fwd:1.1.1.1')).toEqual({ reason: 'address', max: 2 });
    const b = knocks.admit('fwd:2.2.2.2');
    expect(knocks.admit('fwd:3.3.3.3')).toEqual({ reason: 'full', max: 3 });
    // A place given back (its task could not be written) is free again.
    if ('release' in b) b.release();
    expect('release' in knocks.admit('fwd:3.3.3.3')).toBe(true);
    expect(knocks.refused).toBe(2);
  });

  it('keeps its lists in a 0600 file, read again at start', () => {
    const { dir, now, knocks } = list();
    const place = knocks.admit('local');
    if (!('release' in place)) throw new Error('refused');
    const added = knocks.add(record('local', 'task-1', now.t), place);
    expect(added.code).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    expect(statSync(join(dir, KNOCKS_FILE)).mode & 0o777).toBe(0o600);
    const again = new Knocks(dir, { now: () => now.t });
    expect(again.waiting()).toEqual([added]);
    expect(again.byTask('task-1')?.code).toBe(added.code);
  });

  it("holds an approved knock's key for its task's owner alone, once; drops it unread at its time", () => {
    const { dir, now, knocks } = list();
    const place = knocks.admit('local');
    if (!('release' in place)) throw new Error('refused');
    const { code } = knocks.add(record('local', 'task-2', now.t), place);
    knocks.approve(code, { keyId: 'abcdefabcdef', secret: 'abk_secret', dropAt: now.t + 500 });
    expect(knocks.waiting()).toEqual([]);
    expect(readFileSync(join(dir, KNOCKS_FILE), 'utf8')).toContain('abk_secret');
    expect(knocks.claim('task-2', 'a2a-anon:10.0.0.1')).toBeUndefined();
    expect(knocks.claim('task-2', 'a2a-anon:127.0.0.1')?.secret).toBe('abk_secret');
    expect(knocks.claim('task-2', 'a2a-anon:127.0.0.1')).toBeUndefined();
    expect(readFileSync(join(dir, KNOCKS_FILE), 'utf8')).not.toContain('abk_secret');

    const second = knocks.admit('local');
    if (!('release' in second)) throw new Error('refused');
    const { code: other } = knocks.add(record('local', 'task-3', now.t), second);
    knocks.approve(other, { keyId: '123456123456', secret: 'abk_other', dropAt: now.t + 500 });
    now.t += 501;
    expect(knocks.sweep().dropped.map((key) => key.keyId)).toEqual(['123456123456']);
    expect(knocks.claim('task-3', 'a2a-anon:127.0.0.1')).toBeUndefined();
  });

  it('refuses an address turned down until its time, then takes it again; expired knocks leave', () => {
    const { now, knocks } = list();
    const place = knocks.admit('fwd:9.9.9.9');
    if (!('release' in place)) throw new Error('refused');
    const { code } = knocks.add(record('fwd:9.9.9.9', 'task-4', now.t), place);
    knocks.deny(code, 1000);
    expect(knocks.admit('fwd:9.9.9.9')).toEqual({ reason: 'blocked', until: now.t + 1000 });
    now.t += 1000;
    knocks.sweep();
    const later = knocks.admit('fwd:9.9.9.9');
    expect('release' in later).toBe(true);
    if (!('release' in later)) return;
    knocks.add(record('fwd:9.9.9.9', 'task-5', now.t), later);
    now.t += 1000;
    expect(knocks.sweep().expired.map((r) => r.taskId)).toEqual(['task-5']);
    expect(knocks.waiting()).toEqual([]);
  });

  it('refuses to start on a damaged file, saying what it holds and what to do', () => {
    const { dir } = list();
    writeFileSync(join(dir, KNOCKS_FILE), '{"waiting": [');
    expect(() => new Knocks(dir)).toThrow(
      /lists the A2A callers waiting for your approval. Fix it, or delete it/,
    );
  });
});
