import {
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  closeSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CorruptFileError,
  ensureDir,
  readJsonFile,
  restrictFileMode,
  writeFileAtomic,
} from '../../src/lib/atomic-file.js';

const posixOnly = process.platform === 'win32' ? it.skip : it;
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agent-bridge-atomic-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('writeFileAtomic', () => {
  it('writes the content and leaves no temp file behind', () => {
    const target = join(dir, 'a.json');
    writeFileAtomic(target, '{"a":1}');
    writeFileAtomic(target, new TextEncoder().encode('{"a":2}'));
    expect(readFileSync(target, 'utf8')).toBe('{"a":2}');
    expect(readdirSync(dir)).toEqual(['a.json']);
  });

  posixOnly('creates the file with mode 0600 by default, whatever the umask', () => {
    const previous = process.umask(0);
    try {
      const target = join(dir, 'secret.json');
      writeFileAtomic(target, 'x');
      expect(statSync(target).mode & 0o777).toBe(0o600);
    } finally {
      process.umask(previous);
    }
  });

  posixOnly('applies the exact mode asked for, even when the umask is narrower', () => {
    const previous = process.umask(0o077);
    try {
      const target = join(dir, 'public.txt');
      writeFileAtomic(target, 'x', 0o644);
      expect(statSync(target).mode & 0o777).toBe(0o644);
    } finally {
      process.umask(previous);
    }
  });

  it('replaces the file by rename: a reader holding the old file still sees the old content whole', () => {
    const target = join(dir, 'state.json');
    writeFileAtomic(target, 'old content');
    const fd = openSync(target, 'r');
    try {
      writeFileAtomic(target, 'new content, longer than before');
      const buffer = Buffer.alloc(64);
      const read = readSync(fd, buffer, 0, buffer.length, 0);
      expect(buffer.subarray(0, read).toString()).toBe('old content');
    } finally {
      closeSync(fd);
    }
    expect(readFileSync(target, 'utf8')).toBe('new content, longer than before');
  });

  it('leaves the old file intact and removes its temp file when writing fails', () => {
    const target = join(dir, 'keep.json');
    writeFileAtomic(target, 'precious');
    // Not a string or bytes: fails after the temp file was created.
    expect(() => writeFileAtomic(target, { bad: true } as unknown as string)).toThrow();
    expect(readFileSync(target, 'utf8')).toBe('precious');
    expect(readdirSync(dir)).toEqual(['keep.json']);
  });

  it('removes its temp file when the final rename fails', () => {
    const target = join(dir, 'occupied');
    mkdirSync(join(target, 'child'), { recursive: true });
    expect(() => writeFileAtomic(target, 'x')).toThrow();
    expect(readdirSync(dir)).toEqual(['occupied']);
    expect(statSync(target).isDirectory()).toBe(true);
  });
});

describe('readJsonFile', () => {
  it('returns undefined when the file is missing', () => {
    expect(readJsonFile(join(dir, 'missing.json'))).toBeUndefined();
  });

  it('parses JSON', () => {
    writeFileSync(join(dir, 'ok.json'), '{"a":[1,2]}');
    expect(readJsonFile<{ a: number[] }>(join(dir, 'ok.json'))).toEqual({ a: [1, 2] });
  });

  it('names the file and says to delete or fix it when corrupt, without quoting its content', () => {
    const path = join(dir, 'bad.json');
    writeFileSync(path, '{"token": "hunter2-secret" oops');
    let caught: unknown;
    try {
      readJsonFile(path);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CorruptFileError);
    const message = (caught as Error).message;
    expect(message).toContain(path);
    expect(message).toContain('delete or fix it');
    expect(message).not.toContain('hunter2');
  });
});

describe('ensureDir and restrictFileMode', () => {
  posixOnly('creates nested directories private to the user', () => {
    const nested = join(dir, 'a', 'b');
    ensureDir(nested);
    expect(statSync(nested).mode & 0o777).toBe(0o700);
    ensureDir(nested); // already there: no error
  });

  posixOnly('narrows a looser file to 0600 and ignores a missing one', () => {
    const path = join(dir, 'loose');
    writeFileSync(path, 'x', { mode: 0o644 });
    restrictFileMode(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(() => restrictFileMode(join(dir, 'missing'))).not.toThrow();
  });
});
