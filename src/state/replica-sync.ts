import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { errorCode } from '../lib/atomic-file.js';
import { A2A_KEYS_FILE } from './a2a-key-store.js';
import type { StateHealth } from './redis-connection.js';
import type { SharedState } from './shared-state.js';

/** One kind of state replicas share, as the room that owns it keeps it (access lists, registration, keys). */
export interface Replicated {
  /** Reads what the replicas share now and takes it (another replica announced a change, or a look). */
  reload(): unknown;
  /**
   * The first replica on an empty Redis: brings what this data dir's file held before there were
   * replicas (then retires the file with `retireFile`, so it is never read again).
   */
  importLocal?(): Promise<void>;
}

export interface ReplicaSyncOptions {
  shared: SharedState;
  dataDir: string;
  /**
   * The pieces, reloaded in this order at every look; each imported once, on an empty Redis. A change of
   * the signing keys here is announced, so a rotation at one replica reaches the others' cards within a second.
   */
  keys: Replicated & { onChange(listener: () => void): unknown };
  access: Replicated;
  registration: Replicated;
  /** Shared state went down or came back (the console says so). */
  onHealth(health: StateHealth): void;
  /** How often every piece is read again, in case an announcement was missed; default 30 s. */
  everyMs?: number;
}

/**
 * Keeps this replica's copy of what replicas share current: connects to Redis (refusing to start without
 * it: nothing could be checked), brings a data dir's state into an empty Redis once, reloads a piece when
 * another replica announces a change of it, and reads everything again after an outage and every 30 s.
 * The A2A keys follow their own announcements (access/a2a-keys.ts); the limits and tasks live on Redis.
 */
export class ReplicaSync {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ReplicaSyncOptions) {
    options.keys.onChange(() => void options.shared.connection.announce('keys'));
  }

  async start(): Promise<void> {
    const { shared } = this.options;
    await shared.connection.connect();
    await this.importLocal();
    await this.refresh();
    shared.connection.on('change', (topic) => {
      if (topic !== 'a2a-keys') void this.reload(topic);
    });
    shared.connection.on('health', (health) => {
      this.options.onHealth(health);
      // Back after an outage: what the others changed meanwhile was announced while we could not hear it.
      if (health.up) void this.refresh();
    });
    this.timer = setInterval(() => void this.refresh(), this.options.everyMs ?? 30_000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Everything replicas share, read again: keys, access lists, registration. */
  private async refresh(): Promise<void> {
    await this.reload('keys');
    await this.reload('access');
    await this.reload('registration');
  }

  private async reload(topic: 'keys' | 'access' | 'registration'): Promise<void> {
    const { shared } = this.options;
    try {
      await this.options[topic].reload();
    } catch (error) {
      // Redis down: the console says so already; the next look (or Redis's return) reads it again.
      if (shared.health().up)
        console.error(`Agent: could not read the shared ${topic}: ${(error as Error).message}`);
    }
  }

  /**
   * The first replica on an empty Redis brings what this data dir knew (an agent that ran alone before):
   * its approvals, requests and denials, its A2A keys and its registration, so moving to replicas loses
   * none. Once only: a marker in Redis says it was done, and the files are renamed, so a later start (or a
   * Redis that lost its data) never brings back an approval revoked since.
   */
  private async importLocal(): Promise<void> {
    const { shared, dataDir, access, registration } = this.options;
    if (!(await shared.connection.firstImport())) return;
    await access.importLocal?.();
    const keysPath = join(dataDir, A2A_KEYS_FILE);
    if ((await shared.a2aKeys.importFile(keysPath)) > 0) retireFile(keysPath);
    await registration.importLocal?.();
  }
}

/** A data dir file whose content moved to Redis: renamed, not deleted (the operator keeps a copy). */
export function retireFile(path: string): void {
  try {
    renameSync(path, `${path}.imported`);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}
