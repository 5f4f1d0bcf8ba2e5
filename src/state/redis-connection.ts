import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { writeFileAtomic } from '../lib/atomic-file.js';
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
  /**
   * Where this replica remembers which Redis data it worked with (the sentinel's id, in its data dir): a
   * sentinel missing or replaced later means Redis lost its data meanwhile, even across a restart of ours.
   */
  memoryFile?: string;
  now?: () => number;
}

/** Every key this product writes starts with this; one Redis database serves one agent. */
export const KEY_PREFIX = 'agent-bridge:';
const CHANNEL = `${KEY_PREFIX}changes`;
/** `<id> <created at ms>`, no expiry: gone (or another id) means Redis lost what the replicas wrote. */
export const SENTINEL = `${KEY_PREFIX}sentinel`;
/** Set, with an expiry, while calls wait out the nonce window after a loss: every replica reads it. */
export const HOLD = `${KEY_PREFIX}hold`;

/**
 * After a loss: a new sentinel and the hold, once (the first replica to notice sets both). KEYS: sentinel,
 * hold. ARGV: new sentinel value, hold ms, expected sentinel ('' when it must be missing).
 * Returns the hold's remaining ms.
 */
const MARK_LOSS = `
local current = redis.call('GET', KEYS[1])
if (ARGV[3] == '' and not current) or current == ARGV[3] then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
end
return redis.call('PTTL', KEYS[2])
`;
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
  private heldUntil = 0;
  private lastError: string | undefined;
  private reported: StateHealth;
  private holdTimer: NodeJS.Timeout | undefined;
  /** The sentinel id this process saw last (also kept in `memoryFile`). */
  private memory: string | undefined;
  private checkedEviction = false;

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
    const Redis = loadRedisClient();
    this.client = new Redis(options.url, { ...common, connectionName: 'agent-bridge' });
    this.client.defineCommand('agentBridgeMarkLoss', { numberOfKeys: 2, lua: MARK_LOSS });
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
      // Reached, but not usable (a wrong password, a read-only replica): say why rather than start refusing.
      if (!this.connected) throw new Error(this.lastError ?? 'Redis did not answer');
    } catch (error) {
      this.disconnect();
      throw new Error(
        `Cannot reach Redis at ${maskedRedisUrl(this.options.url)} (${this.lastError ?? (error as Error).message}): start Redis, or fix --redis-url.`,
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

  /**
   * A call's script found the sentinel gone (Redis lost its data while running) or the hold set: every
   * replica now waits out the nonce window. Returns the refusal to throw.
   */
  async lostState(holdMs?: number): Promise<ProtocolError> {
    if (holdMs === undefined) holdMs = await this.markLoss('').catch(() => this.wipeHoldMs);
    this.hold(holdMs);
    return unavailable(Math.ceil(holdMs / 1000));
  }

  /** Throws the refusal a call gets while Redis is down or its wipe is waited out. */
  assertUp(): void {
    if (this.connected && this.heldUntil <= this.now()) return;
    throw unavailable(this.heldUntil > this.now() ? Math.ceil((this.heldUntil - this.now()) / 1000) : 0);
  }

  /** True for the one replica that first imports a data dir's state into this Redis (a marker, set once). */
  async firstImport(): Promise<boolean> {
    return (await this.client.set(`${KEY_PREFIX}imported`, String(this.now()), 'NX')) === 'OK';
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

  /**
   * Compares the sentinel with the one this replica remembers: missing or replaced means Redis lost its data
   * (restarted without persistence, flushed, failed over to an empty replica), so calls wait out the nonce
   * window. A replica that never saw this Redis trusts what it finds (a first start on an empty Redis).
   */
  private async onReady(): Promise<void> {
    try {
      const remembered = this.remembered();
      let current = await this.client.get(SENTINEL);
      if (!current) {
        const created = `${randomUUID()} ${this.now()}`;
        if (remembered) this.hold(await this.markLoss('', created));
        else if ((await this.client.set(SENTINEL, created, 'NX')) === 'OK') current = created;
        current = (await this.client.get(SENTINEL)) ?? created;
      } else if (remembered && remembered !== current.split(' ')[0]) {
        // Another replica noticed the loss first and replaced the sentinel: its hold is already set.
        const hold = await this.client.pttl(HOLD);
        if (hold > 0) this.hold(hold);
      }
      this.remember(current.split(' ')[0] ?? '');
      const hold = await this.client.pttl(HOLD);
      if (hold > 0) this.hold(hold);
      await this.checkEviction();
      this.lastError = undefined;
      this.setConnected(true);
    } catch (error) {
      this.lastError = (error as Error).message;
      this.report();
    }
  }

  private async markLoss(expected: string, value = `${randomUUID()} ${this.now()}`): Promise<number> {
    const client = this.client as Redis & {
      agentBridgeMarkLoss(...args: (string | number)[]): Promise<number>;
    };
    const remaining = await client.agentBridgeMarkLoss(SENTINEL, HOLD, value, this.wipeHoldMs, expected);
    const now = (await this.client.get(SENTINEL))?.split(' ')[0];
    if (now) this.remember(now);
    return remaining > 0 ? remaining : 0;
  }

  private hold(ms: number): void {
    if (ms <= 0) return;
    this.heldUntil = Math.max(this.heldUntil, this.now() + ms);
    clearTimeout(this.holdTimer);
    this.holdTimer = setTimeout(() => this.report(), this.heldUntil - this.now() + 10).unref();
    this.report();
  }

  private remembered(): string | undefined {
    if (!this.options.memoryFile) return this.memory;
    try {
      return readFileSync(this.options.memoryFile, 'utf8').trim() || undefined;
    } catch {
      return this.memory;
    }
  }

  private remember(id: string): void {
    if (!id || id === this.memory) return;
    this.memory = id;
    if (this.options.memoryFile) writeFileAtomic(this.options.memoryFile, `${id}\n`);
  }

  // Nonces expire by TTL: a Redis that evicts keys with a TTL under memory pressure forgets nonces early.
  private async checkEviction(): Promise<void> {
    if (this.checkedEviction) return;
    this.checkedEviction = true;
    try {
      const [, policy] = (await this.client.config('GET', 'maxmemory-policy')) as [string, string];
      if (policy && policy !== 'noeviction')
        console.error(
          `Agent: Redis evicts keys under memory pressure (maxmemory-policy ${policy}), nonces among them, which would let a replay through: set maxmemory-policy noeviction.`,
        );
    } catch {
      // A managed Redis may not allow CONFIG: nothing to check then.
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

/**
 * The Redis client's code, loaded when a connection is built: an agent without `--redis-url` never loads it
 * (about 10 MB of resident memory for a feature that is off). A require, not import(): the app builds its
 * shared state in its constructor, and esbuild would hoist a static import of it to the bundle's top.
 */
function loadRedisClient(): typeof Redis {
  return (createRequire(import.meta.url)('ioredis') as { Redis: typeof Redis }).Redis;
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

/**
 * The URL as it may be shown (console, logs): scheme, host, port and database only. A password can sit in
 * the user part (`redis://:secret@host`) or in the query (`?password=secret`, which ioredis reads too).
 */
export function maskedRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const credentials = parsed.username || parsed.password || parsed.search ? '***@' : '';
    return `${parsed.protocol}//${credentials}${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return 'the configured URL (not a valid URL)';
  }
}
