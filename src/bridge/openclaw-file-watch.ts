// When OpenClaw's config file changes, as the gateway learns it. OpenClaw watches the file and applies a valid
// edit about half a second after the last write (2026.9.6: chokidar, 200 ms of write stability, then a 300 ms
// debounce), while the bridge probes every 30 s; the tools callers reach are read from this file, so an edit
// that gives an agent `exec` must count from the next call, not the next probe (threat: a stranger driving a
// shell for up to 30 s). The file's folder is watched: one event per write, nothing per call. Where it cannot
// be (no folder yet, a watch that failed or lost its folder, a file that is a symlink, whose target lives
// elsewhere), a look stats the file instead, at most once per STAT_EVERY_MS: a stat on every call cost about
// 5% of an A2A call's CPU in the bench, and an edit is still seen before OpenClaw applies it.
import { lstatSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { performance } from 'node:perf_hooks';

/** Under OpenClaw's half second from a write to the edit applied: a stat this often still sees it first. */
export const STAT_EVERY_MS = 200;

export interface OpenClawFileWatchOptions {
  /** The config file (absolute: `openclawConfigPath`). */
  path: string;
  /** The file may have been written: soon after, once for a burst of writes (the gateway is worth asking). */
  onEdit(): void;
  /** At most one stat per this many ms while the folder is not watched (default STAT_EVERY_MS). */
  statEveryMs?: number;
  /** A monotonic clock in ms (tests). */
  now?: () => number;
}

export class OpenClawFileWatch {
  private count = 0;
  private watcher: FSWatcher | undefined;
  /** The file's stat as last seen, while it is not watched. */
  private stamp: string | undefined;
  /** When the file was last stat'ed (the clock's ms), while it is not watched. */
  private statAt: number | undefined;
  private telling = false;
  private closed = false;

  constructor(private readonly options: OpenClawFileWatchOptions) {}

  /**
   * A number that changes whenever the file may have been written since it was last taken: take it before
   * reading the file, and a look that finds another one knows that reading is stale. Free while the folder
   * is watched; otherwise one stat, at most once per `statEveryMs`.
   */
  version(): number {
    if (this.watcher || this.closed) return this.count;
    const now = (this.options.now ?? performance.now.bind(performance))();
    if (this.statAt !== undefined && now - this.statAt < (this.options.statEveryMs ?? STAT_EVERY_MS)) {
      return this.count;
    }
    this.statAt = now;
    const stamp = stampOf(this.options.path);
    if (stamp !== this.stamp) {
      const first = this.stamp === undefined;
      this.stamp = stamp;
      this.count += 1;
      // Something appeared or changed: the folder may be watchable now.
      this.watch();
      if (!first) this.tell();
    }
    return this.count;
  }

  close(): void {
    this.closed = true;
    this.unwatch();
  }

  private watch(): void {
    const { path } = this.options;
    const folder = dirname(path);
    try {
      if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) return;
      const watcher = watch(folder, { persistent: false }, (_event, name) => {
        // Its own name, or none: the folder itself was removed or moved; the watch sees nothing from now.
        if (name === null || name === basename(folder)) this.unwatch();
        else if (name !== basename(path)) return;
        this.changed();
      });
      watcher.on('error', () => {
        this.unwatch();
        this.changed();
      });
      this.watcher = watcher;
    } catch {
      // No folder, or no watch to be had here: each look stats the file.
    }
  }

  private unwatch(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.stamp = undefined;
    this.statAt = undefined;
  }

  private changed(): void {
    this.count += 1;
    this.tell();
  }

  private tell(): void {
    if (this.telling || this.closed) return;
    this.telling = true;
    setImmediate(() => {
      this.telling = false;
      if (!this.closed) this.options.onEdit();
    });
  }
}

/** What tells one version of the file from another without reading it, or why it has none. */
function stampOf(path: string): string {
  try {
    const stat = statSync(path, { bigint: true });
    return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
  } catch (error) {
    return `none:${(error as NodeJS.ErrnoException).code ?? 'error'}`;
  }
}
