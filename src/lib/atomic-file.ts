import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  fchmodSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** A JSON file that exists but cannot be parsed. The message never quotes the file's content. */
export class CorruptFileError extends Error {
  constructor(
    readonly path: string,
    readonly detail: string,
  ) {
    super(`${path} ${detail}; delete or fix it`);
    this.name = 'CorruptFileError';
  }
}

/**
 * Replaces `path` so that readers see either the old or the new content, never a torn file:
 * write a temp file beside it, fsync, rename over the target, fsync the directory. `data` may come in
 * chunks (a large file written without one copy of it all).
 */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array | Iterable<Uint8Array>,
  mode = 0o600,
): void {
  replace(path, data, mode);
}

/**
 * writeFileAtomic, with the new file opened (`flags`) before it replaces the old one: when that open
 * fails, nothing is replaced, so a caller holding the old file open goes on with it. Returns the new
 * file's descriptor (the caller closes it).
 */
export function writeFileAtomicAndOpen(
  path: string,
  data: string | Uint8Array | Iterable<Uint8Array>,
  flags: string,
  mode = 0o600,
): number {
  return replace(path, data, mode, flags) as number;
}

function replace(
  path: string,
  data: string | Uint8Array | Iterable<Uint8Array>,
  mode: number,
  openFlags?: string,
): number | undefined {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number | undefined;
  let opened: number | undefined;
  try {
    // 'wx' refuses an existing file or symlink at the temp name; `mode` applies from creation,
    // so a secret is never world-readable, not even before the chmod.
    fd = openSync(temp, 'wx', mode);
    // The umask may have narrowed the mode; make it exactly what was asked.
    fchmodSync(fd, mode);
    if (typeof data === 'string' || data instanceof Uint8Array) writeFileSync(fd, data);
    else for (const chunk of data) writeFileSync(fd, chunk);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    // The descriptor follows the file through the rename.
    if (openFlags !== undefined) opened = openSync(temp, openFlags, mode);
    renameSync(temp, path);
  } catch (error) {
    if (fd !== undefined) closeQuietly(fd);
    if (opened !== undefined) closeQuietly(opened);
    unlinkQuietly(temp);
    throw error;
  }
  fsyncDirectory(dir);
  return opened;
}

/** Parsed JSON of `path`; undefined when the file does not exist. */
export function readJsonFile<T>(path: string): T | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    // V8's SyntaxError quotes the text around the fault, which may be a secret: keep only the position.
    const position = error instanceof Error ? /position (\d+)/.exec(error.message)?.[1] : undefined;
    throw new CorruptFileError(path, `is not valid JSON${position ? ` (at position ${position})` : ''}`);
  }
}

/** Creates the directory (and parents) when missing; new directories are private to the user. */
export function ensureDir(path: string, mode = 0o700): void {
  mkdirSync(path, { recursive: true, mode });
}

/** Narrows an existing file to `mode` when it allows more; no-op on Windows or when the file is missing. */
export function restrictFileMode(path: string, mode = 0o600): void {
  if (process.platform === 'win32') return;
  try {
    if ((statSync(path).mode & 0o777 & ~mode) !== 0) chmodSync(path, mode);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

// Some platforms (Windows, some network file systems) refuse to open or fsync a directory.
const DIR_FSYNC_UNSUPPORTED = new Set(['EISDIR', 'EPERM', 'EACCES', 'EINVAL', 'ENOTSUP', 'EBADF']);

function fsyncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch (error) {
    if (!DIR_FSYNC_UNSUPPORTED.has(errorCode(error) ?? '')) throw error;
  } finally {
    if (fd !== undefined) closeQuietly(fd);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already failing: the original error is the one worth reporting.
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // The temp file may never have been created.
  }
}

export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
