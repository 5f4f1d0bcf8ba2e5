import { appendFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ensureDir, errorCode, restrictFileMode } from '../lib/atomic-file.js';

export interface RotatingFileOptions {
  /** e.g. `<dataDir>/logs/traffic.jsonl`; old files become `traffic.1.jsonl` (newest) ... `traffic.N.jsonl`. */
  path: string;
  maxBytes: number;
  /** How many old files to keep. */
  keep: number;
  onError(error: unknown): void;
}

/**
 * An append-only JSON-lines file that rotates before it passes `maxBytes`. Writes are asynchronous and run
 * one after another, so the request path never waits on the disk.
 */
export class RotatingFile {
  private size: number | undefined;
  private chain: Promise<void> = Promise.resolve();
  private readonly reported = new Set<string>();

  constructor(private readonly options: RotatingFileOptions) {
    ensureDir(dirname(options.path));
    // The log may hold operator data (senders, previews): private to the user, like the rest of the data dir.
    restrictFileMode(options.path, 0o600);
  }

  /** Appends whole lines (each ending in "\n"); resolves once they are written (or the failure reported). */
  write(lines: string[]): Promise<void> {
    if (lines.length === 0) return this.chain;
    this.chain = this.chain.then(() => this.append(lines)).catch((error: unknown) => this.report(error));
    return this.chain;
  }

  /** The file holding the entries `generation` rotations ago (0: the current one). */
  fileAt(generation: number): string {
    if (generation === 0) return this.options.path;
    const name = basename(this.options.path).replace(/(\.jsonl)?$/, (ext) => `.${generation}${ext}`);
    return join(dirname(this.options.path), name);
  }

  private async append(lines: string[]): Promise<void> {
    const { maxBytes } = this.options;
    let size = this.size ?? (await sizeOf(this.options.path));
    let chunk = '';
    let chunkBytes = 0;
    for (const line of lines) {
      const bytes = Buffer.byteLength(line);
      // A line larger than the limit still goes into a file of its own rather than being lost.
      if (size + chunkBytes + bytes > maxBytes && size + chunkBytes > 0) {
        if (chunk) await this.appendChunk(chunk);
        await this.rotate();
        [size, chunk, chunkBytes] = [0, '', 0];
      }
      chunk += line;
      chunkBytes += bytes;
    }
    if (chunk) await this.appendChunk(chunk);
    this.size = size + chunkBytes;
  }

  private async appendChunk(chunk: string): Promise<void> {
    // A failed write leaves the size unknown: measure the file again next time.
    this.size = undefined;
    try {
      await appendFile(this.options.path, chunk, { mode: 0o600 });
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
      // Someone removed the logs folder while we run: make it again rather than stop logging.
      ensureDir(dirname(this.options.path));
      await appendFile(this.options.path, chunk, { mode: 0o600 });
    }
  }

  private async rotate(): Promise<void> {
    if (this.options.keep === 0) return unlinkIfPresent(this.options.path);
    for (let generation = this.options.keep - 1; generation >= 0; generation--) {
      await renameIfPresent(this.fileAt(generation), this.fileAt(generation + 1));
    }
  }

  // Disk full or permissions: the in-memory log goes on; say so once per kind of failure, not per batch.
  private report(error: unknown): void {
    this.size = undefined;
    const code = errorCode(error) ?? 'unknown';
    if (this.reported.has(code)) return;
    this.reported.add(code);
    this.options.onError(error);
  }
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return 0;
    throw error;
  }
}

async function renameIfPresent(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

async function unlinkIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}
