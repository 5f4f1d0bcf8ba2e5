import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';
import { ProtocolError } from '../protocol/index.js';

/** Where shared state lives and whether it answers (the console and /metrics show it). */
export interface StateHealth {
  backend: 'data-dir' | 'redis';
  /** False while Redis does not answer, or while a wipe of its data is waited out: calls get 503. */
  up: boolean;
  /** Why it is down, and what to do. */
  problem?: string;
}

export interface RedisConnectionOptions {
  url: string;
  /** A command that takes longer fails (and the call it served is refused); default 1 s. */
  commandTimeoutMs?: number;
  /** How long calls stay refused after Redis comes back without its data (the nonce window). */
  wipeHoldMs?: number;
  now?: () => number;
}

/** Every key this product writes starts with this; one Redis database serves one agent. */
export const KEY_PREFIX = 'agent-bridge:';
const CHANNEL = `${KEY_PREFIX}changes`;
const SENTINEL = `${KEY_PREFIX}sentinel`;
/** Retry-After while Redis is down: it usually comes back within seconds. */
const DOWN_RETRY_SECONDS = 2;

export type ChangeTopic = 'access' | 'registration' | 'keys';

/**
 * The connection to Redis shared by every replica, and its health. Commands never queue while Redis is
 * unreachable (they fail at once, so a call is refused with 503 rather than accepted unchecked), and the
 * client reconnects by itself. A Redis that comes back empty (restarted without persistence, or flushed)
 * has forgotten the nonces of the last five minutes: calls stay refused until that window has passed, so
 * no envelope sent before the wipe can be replayed.
 */
export class RedisConnection extends EventEmitter<{ health: [StateHealth]; change: [ChangeTopic] }> {
  readonly client: Redis;
  private readonly subscriber: Redis;
  private readonly now: () => number;
  private readonly wipeHoldMs: number;
  private connected = false;
  private sawSentinel = false;
  private heldUntil = 0;
  private lastError: string | undefined;
  private reported: StateHealth;
  private holdTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: RedisConnectionOptions) {
    super();
    this.now = options.now ?? Date.now;
    this.wipeHoldMs = options.wipeHoldMs ?? 5 * 60_000 + 1000;
    const common = {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? 1000,
      connectTimeout: 2000,
      // Back off to one attempt a second: Redis restarts in seconds, and calls are refused meanwhile.
      retryStrategy: (attempt: number) => Math.min(100 * attempt, 1000),
      lazyConnect: true,
    };
    this.client = new Redis(options.url, { ...common, connectionName: 'agent-bridge' });
    this.subscriber = new Redis(options.url, { ...common, connectionName: 'agent-bridge-events' });
    this.reported = this.health();
    this.client.on('ready', () => void this.onReady());
    this.client.on('close', () => this.setConnected(false));
    this.client.on('error', (error: Error) => {
      this.lastError = error.message;
      this.report();
    });
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('ready', () => void this.subscriber.subscribe(CHANNEL).catch(() => undefined));
    this.subscriber.on('message', (_channel: string, topic: string) => {
      if (topic === 'access' || topic === 'registration' || topic === 'keys') this.emit('change', topic);
    });
  }

  /** Connects; resolves once Redis answered, rejects with a message that names the fix. */
  async connect(): Promise<void> {
    try {
      await Promise.all([this.client.connect(), this.subscriber.connect()]);
      await this.onReady();
    } catch (error) {
      this.disconnect();
      throw new Error(
        `Cannot reach Redis at ${maskedRedisUrl(this.options.url)} (${(error as Error).message}): start Redis, or fix --redis-url.`,
        { cause: error },
      );
    }
  }

  health(): StateHealth {
    if (!this.connected) {
      const why = this.lastError ? ` (${this.lastError})` : '';
      return {
        backend: 'redis',
        up: false,
        problem: `Redis at ${maskedRedisUrl(this.options.url)} does not answer${why}: calls are refused with 503 until it does. Start Redis; the agent reconnects by itself.`,
      };
    }
    if (this.heldUntil > this.now()) {
      const at = new Date(this.heldUntil).toISOString().slice(11, 19);
      return {
        backend: 'redis',
        up: false,
        problem: `Redis came back without its data (restarted without persistence, or flushed), so it forgot which nonces were used: calls are refused until ${at} UTC, when every envelope sent before has expired. Run Redis with appendonly yes to avoid this.`,
      };
    }
    return { backend: 'redis', up: true };
  }

  /** Throws the refusal a call gets while Redis is down or its wipe is waited out. */
  assertUp(): void {
    if (this.connected && this.heldUntil <= this.now()) return;
    throw unavailable(this.heldUntil > this.now() ? Math.ceil((this.heldUntil - this.now()) / 1000) : 0);
  }

  /** Tells the other replicas that `topic` changed (they reload it). Best effort: each also re-reads it. */
  async announce(topic: ChangeTopic): Promise<void> {
    await this.client.publish(CHANNEL, topic).catch(() => undefined);
  }

  disconnect(): void {
    clearTimeout(this.holdTimer);
    this.client.disconnect();
    this.subscriber.disconnect();
    this.setConnected(false);
  }

  private async onReady(): Promise<void> {
    try {
      // The sentinel has no expiry: if it is gone while we run, Redis lost everything we wrote.
      const created = await this.client.set(SENTINEL, String(this.now()), 'NX');
      if (created === 'OK' && this.sawSentinel) {
        this.heldUntil = this.now() + this.wipeHoldMs;
        clearTimeout(this.holdTimer);
        this.holdTimer = setTimeout(() => this.report(), this.wipeHoldMs + 10).unref();
      }
      this.sawSentinel = true;
      this.lastError = undefined;
      this.setConnected(true);
    } catch (error) {
      this.lastError = (error as Error).message;
      this.report();
    }
  }

  private setConnected(connected: boolean): void {
    this.connected = connected;
    this.report();
  }

  private report(): void {
    const health = this.health();
    if (health.up === this.reported.up && health.problem === this.reported.problem) return;
    this.reported = health;
    this.emit('health', health);
  }
}

/** The refusal for a call that cannot be checked against shared state. */
export function unavailable(retryAfterSeconds = 0): ProtocolError {
  return new ProtocolError(
    'AGENT_UNAVAILABLE',
    503,
    'This agent cannot check the request against its shared state right now; retry shortly.',
    { step: 'rate-limit', retryAfterSeconds: Math.max(DOWN_RETRY_SECONDS, retryAfterSeconds) },
  );
}

/** The URL without its password (it may be shown in the console and in logs). */
export function maskedRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return 'the configured URL (not a valid URL)';
  }
}
