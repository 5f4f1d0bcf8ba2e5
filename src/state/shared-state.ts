import { join } from 'node:path';
import { RedisA2AKeyRecords } from './redis-a2a-key-store.js';
import { RedisCallLimits } from './redis-call-limits.js';
import { RedisConnection, type StateHealth } from './redis-connection.js';
import { RedisRecords } from './redis-records.js';
import { RedisTaskStore } from './redis-task-store.js';

export interface SharedStateOptions {
  redisUrl: string;
  limits: { perMinute: number; perSender: number };
  tasks: { maxPerSender?: number; maxTotal?: number; leaseMs: number; retentionMs(): number };
  now?: () => number;
  /** Tests shorten how long calls stay refused after Redis comes back empty. */
  wipeHoldMs?: number;
  /** Where this replica remembers which Redis data it saw (RedisConnectionOptions.memoryFile). */
  memoryFile?: string;
}

/** The settings that say whether state is shared, and how. */
export interface SharedSettings {
  redisUrl?: string;
  rpm: number;
  perSender: number;
  taskLeaseSeconds: number;
  taskRetentionHours: number;
}

/**
 * Everything several replicas of one agent share on one Redis: the call limits and nonce window, the
 * tasks with their leases, the access lists, the A2A keys and the registration record. The identity key is shared as a
 * file (`--keys-file`), not here: a private key never goes to Redis.
 */
export class SharedState {
  readonly connection: RedisConnection;
  readonly limits: RedisCallLimits;
  readonly tasks: RedisTaskStore;
  readonly access: RedisRecords;
  readonly registration: RedisRecords;
  readonly a2aKeys: RedisA2AKeyRecords;
  /** How often each replica looks for lapsed leases: twice per lease, so a task is failed soon after. */
  readonly recoverEveryMs: number;

  constructor(options: SharedStateOptions) {
    this.connection = new RedisConnection({
      url: options.redisUrl,
      now: options.now,
      wipeHoldMs: options.wipeHoldMs,
      memoryFile: options.memoryFile,
    });
    this.limits = new RedisCallLimits(this.connection, options.limits, options.now);
    this.tasks = new RedisTaskStore(this.connection, { ...options.tasks, now: options.now });
    this.access = new RedisRecords(this.connection, 'access', ['approved', 'pending', 'denied']);
    this.registration = new RedisRecords(this.connection, 'registration', ['record']);
    this.a2aKeys = new RedisA2AKeyRecords(this.connection);
    this.recoverEveryMs = Math.max(200, Math.floor(options.tasks.leaseMs / 2));
  }

  /** Shared state as the settings ask for it (read live where they may change), or none without `redisUrl`. */
  static fromSettings(
    settings: () => SharedSettings,
    options: {
      dataDir: string;
      taskLimits?: { maxPerSender?: number; maxTotal?: number };
      now?: () => number;
      /** How long calls stay refused after Redis comes back without its data (tests shorten the 5 min). */
      stateWipeHoldMs?: number;
    },
  ): SharedState | undefined {
    const { redisUrl, rpm, perSender, taskLeaseSeconds } = settings();
    if (!redisUrl) return undefined;
    return new SharedState({
      redisUrl,
      limits: { perMinute: rpm, perSender },
      tasks: {
        ...options.taskLimits,
        leaseMs: taskLeaseSeconds * 1000,
        retentionMs: () => settings().taskRetentionHours * 3600_000,
      },
      now: options.now,
      wipeHoldMs: options.stateWipeHoldMs,
      memoryFile: join(options.dataDir, 'redis-sentinel'),
    });
  }

  /** Why a change cannot be saved now (Redis does not answer), if so: made then, it would hold here only. */
  unwritable(): string | undefined {
    const health = this.health();
    return health.up ? undefined : health.problem;
  }

  health(): StateHealth {
    return this.connection.health();
  }

  close(): void {
    this.tasks.close();
    this.access.close();
    this.registration.close();
    this.connection.disconnect();
  }
}
