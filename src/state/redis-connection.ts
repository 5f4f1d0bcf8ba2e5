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
   * Where this replica remembers which Redis data it worked with (the sentinel's id and the Redis run id, in
   * its data dir): a sentinel missing or replaced later means Redis lost its data meanwhile, and another run
   * id that it restarted, even across a restart of ours.
   */
  memoryFile?: string;
  /** How often the persistence settings are read again while connected; default 30 s. */
  persistenceCheckMs?: number;
  now?: () => number;
}

/** Every key this product writes starts with this; one Redis database serves one agent. */
export const KEY_PREFIX = 'agent-bridge:';
const CHANNEL = `${KEY_PREFIX}changes`;
/**
 * `<id> <created at ms> <run id> <always|not-always>`, no expiry: gone (or another id) means Redis lost what
 * the replicas wrote. The run id names the Redis process it was last stamped on, and the last field says
 * whether that process fsynced every write (`appendonly yes`, `appendfsync always`): a later process that
 * finds it knows Redis restarted since, and whether it can have come back without the newest writes.
 */
export const SENTINEL = `${KEY_PREFIX}sentinel`;
/** Set, with an expiry, while calls wait out the nonce window after a loss: every replica reads it (and why). */
export const HOLD = `${KEY_PREFIX}hold`;
/**
 * A count of the call checks that wrote (a nonce, the buckets), raised by the very script that writes them:
 * one atomic unit, so a Redis replica has both or neither. Lower than a replica of ours saw means the data
 * lost writes (a failover to a replica that was behind), whatever the process or its fsync.
 */
export const WRITES = `${KEY_PREFIX}writes`;

/**
 * After a loss (or a restart that lost nothing, with no hold): a new sentinel and the hold, once (the first
 * replica to notice sets both). KEYS: sentinel, hold. ARGV: new sentinel value, hold ms (0: none), expected
 * sentinel ('' when it must be missing), why. Returns the hold's remaining ms.
 */
const REPLACE_SENTINEL = `
local current = redis.call('GET', KEYS[1])
if (ARGV[3] == '' and not current) or current == ARGV[3] then
  redis.call('SET', KEYS[1], ARGV[1])
  if tonumber(ARGV[2]) > 0 then redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[2]) end
end
return redis.call('PTTL', KEYS[2])
`;

/**
 * Why calls are held: Redis came back empty, restarted without writing every change to disk first, or came
 * back with fewer writes than a replica saw.
 */
const LOSS_REASONS = ['wiped', 'restarted', 'restarted-unknown', 'behind'] as const;
type LossReason = (typeof LOSS_REASONS)[number];
const isLossReason = (value: unknown): value is LossReason => LOSS_REASONS.includes(value as LossReason);

/**
 * The sentinel id and Redis run id a replica saw last, and the highest count of writes it saw with that
 * sentinel; the run id and the count are missing from an older version's file.
 */
interface Memory {
  id: string;
  runId?: string;
  writes: number;
}

/** The Redis process that answers: its run id (new at every start) and whether it fsyncs every write. */
interface ServerFacts {
  runId: string;
  /** undefined: its settings cannot be read (CONFIG disabled or renamed, as on many managed services). */
  always: boolean | undefined;
}

/** Retry-After while Redis is down: it usually comes back within seconds. */
const DOWN_RETRY_SECONDS = 2;
/** The count of writes seen is written to the memory file at most this often (calls raise it all the time). */
const WRITES_SAVE_MS = 1000;

/** What replicas announce they changed: the access lists, the registration, the signing keys, the A2A keys. */
const TOPICS = ['access', 'registration', 'keys', 'a2a-keys'] as const;
export type ChangeTopic = (typeof TOPICS)[number];
/** A message for whichever replica it concerns (not a change to reload): its topic and subject. */
export type SignalTopic = 'a2a-cancel';
const SIGNAL = /^(a2a-cancel) (\S{1,200})$/;

/**
 * The connection to Redis shared by every replica, and its health. Commands never queue while Redis is
 * unreachable (they fail at once, so a call is refused with 503 rather than accepted unchecked), and the
 * client reconnects by itself. A Redis that comes back empty (restarted without persistence, or flushed),
 * or restarted at all unless it fsyncs every write (an older snapshot forgets the newest nonces), may have
 * forgotten nonces of the last five minutes: calls stay refused until that window has passed, so no envelope
 * sent before can be replayed.
 */
export class RedisConnection extends EventEmitter<{
  health: [StateHealth];
  change: [ChangeTopic];
  signal: [SignalTopic, string];
}> {
  readonly client: Redis;
  private readonly subscriber: Redis;
  private readonly now: () => number;
  private readonly wipeHoldMs: number;
  private connected = false;
  private heldUntil = 0;
  private holdReason: LossReason = 'wiped';
  private lastError: string | undefined;
  private reported: StateHealth;
  private holdTimer: NodeJS.Timeout | undefined;
  /** What this process saw last (also kept in `memoryFile`). */
  private memory: Memory | undefined;
  private saveTimer: NodeJS.Timeout | undefined;
  private persistenceTimer: NodeJS.Timeout | undefined;
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
    this.client.defineCommand('agentBridgeReplaceSentinel', { numberOfKeys: 2, lua: REPLACE_SENTINEL });
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
      const signal = SIGNAL.exec(topic);
      if ((TOPICS as readonly string[]).includes(topic)) this.emit('change', topic as ChangeTopic);
      else if (signal) this.emit('signal', signal[1] as SignalTopic, signal[2]!);
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
      return { backend: 'redis', up: false, problem: holdProblem(this.holdReason, at) };
    }
    return { backend: 'redis', up: true };
  }

  /**
   * A call's script found the sentinel gone (Redis lost its data while running) or the hold set: every
   * replica now waits out the nonce window. Returns the refusal to throw.
   */
  async lostState(holdMs?: number): Promise<ProtocolError> {
    let reason: LossReason = 'wiped';
    if (holdMs === undefined) {
      holdMs = await this.markWipe().catch(() => this.wipeHoldMs);
    } else {
      // Another replica set the hold: it wrote why.
      reason = (await this.readHold().catch(() => undefined))?.reason ?? reason;
    }
    this.hold(holdMs, reason);
    return unavailable(Math.ceil(holdMs / 1000));
  }

  /**
   * The count of writes a call's check left (its own included): no higher than one seen before, and Redis
   * lost writes since (a failover to a replica that was behind); then `lostWrites`. No round trip.
   */
  writesLost(writes: number): boolean {
    const memory = this.memory;
    if (!memory) return false;
    if (writes <= memory.writes) return true;
    this.noteWrites(memory, writes);
    return false;
  }

  /** After `writesLost`: every replica holds for the nonce window. Returns the refusal to throw. */
  async lostWrites(): Promise<ProtocolError> {
    const holdMs = await this.markBehind().catch(() => this.wipeHoldMs);
    this.hold(holdMs, 'behind');
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

  /** Tells every replica `topic` about `subject` (e.g. cancel this task); rejects while Redis is down. */
  async signal(topic: SignalTopic, subject: string): Promise<void> {
    this.assertUp();
    await this.client.publish(CHANNEL, `${topic} ${subject}`);
  }

  disconnect(): void {
    clearTimeout(this.holdTimer);
    clearInterval(this.persistenceTimer);
    if (this.saveTimer) this.saveWrites();
    this.client.disconnect();
    this.subscriber.disconnect();
    this.setConnected(false);
  }

  /**
   * At every (re)connection: did Redis lose what the replicas wrote since this replica last saw it? The
   * sentinel missing or replaced (restarted without persistence, flushed, failed over to an empty replica)
   * says so; so does a new Redis process since the sentinel was stamped, unless both it and the one before
   * fsync every write (an RDB snapshot, or `appendfsync everysec`, forgets the newest nonces: a replay of an
   * envelope accepted after them would pass). Then calls wait out the nonce window. A plain reconnection (a
   * network blip) finds the same process and holds nothing. A replica that never saw this Redis trusts an
   * empty one (a first start). Whatever the process, fewer writes than this replica saw with the same
   * sentinel say that Redis lost the newest ones (a failover to a replica that was behind: fsync on the old
   * primary does not cover what replication had not sent yet).
   */
  private async onReady(): Promise<void> {
    try {
      const server = await this.serverFacts();
      const remembered = this.remembered();
      const [current, writesText] = await this.client.mget(SENTINEL, WRITES);
      const writes = Number(writesText ?? 0);
      if (!current) {
        const created = stamp(randomUUID(), this.now(), server);
        if (remembered) await this.replaceSentinel('', created, this.wipeHoldMs, 'wiped');
        else await this.client.set(SENTINEL, created, 'NX');
      } else {
        const found = parseSentinel(current);
        // A sentinel from a version of the bridge that kept no run id (a snapshot from before an upgrade):
        // the run this replica saw with it, if any.
        const lastRun = found.runId ?? (remembered?.id === found.id ? remembered.runId : undefined);
        const behind = remembered?.id === found.id && writes < remembered.writes;
        // The same process (a reconnection), a restart that lost nothing, or a run never seen (stamped now,
        // as at a first start): the stamp is brought up to date, unless writes this replica saw are gone.
        if (lastRun === undefined || lastRun === server.runId || (found.always && server.always)) {
          const restamped = behind
            ? stamp(randomUUID(), this.now(), server)
            : stamp(found.id, found.createdAt, server);
          if (restamped !== current)
            await this.replaceSentinel(current, restamped, behind ? this.wipeHoldMs : 0, 'behind');
        } else {
          const why = server.always === undefined ? 'restarted-unknown' : 'restarted';
          await this.replaceSentinel(current, stamp(randomUUID(), this.now(), server), this.wipeHoldMs, why);
        }
      }
      const seen = parseSentinel((await this.client.get(SENTINEL)) ?? '');
      if (remembered && seen.id !== remembered.id) await this.holdRestOfWindow(seen.createdAt);
      this.remember(seen.id, server.runId, writes);
      const { ms, reason } = await this.readHold();
      this.hold(ms, reason);
      await this.checkEviction();
      this.persistenceTimer ??= setInterval(
        () => void this.recheckPersistence(),
        this.options.persistenceCheckMs ?? 30_000,
      ).unref();
      this.lastError = undefined;
      this.setConnected(true);
    } catch (error) {
      this.lastError = (error as Error).message;
      this.report();
    }
  }

  /**
   * The stamp says the process fsynced every write since it was stamped; an operator may turn that off while
   * it runs (CONFIG SET appendfsync everysec), and a crash then loses writes: the stamp follows, never back
   * for the same process. Seen within `persistenceCheckMs`, not sooner.
   */
  private async recheckPersistence(): Promise<void> {
    if (!this.connected) return;
    try {
      const server = await this.serverFacts();
      const current = await this.client.get(SENTINEL);
      if (!current) return; // gone: the next call finds out
      const found = parseSentinel(current);
      if (found.runId !== server.runId || !found.always || server.always === true) return;
      await this.replaceSentinel(current, stamp(found.id, found.createdAt, server), 0, 'wiped');
    } catch {
      // Not answering now: the next check, or the reconnection, reads them again.
    }
  }

  /** The sentinel vanished while Redis ran (flushed): a new one and the hold. Returns the hold's ms left. */
  private async markWipe(): Promise<number> {
    const server = await this.serverFacts();
    const left = await this.replaceSentinel(
      '',
      stamp(randomUUID(), this.now(), server),
      this.wipeHoldMs,
      'wiped',
    );
    this.remember(parseSentinel((await this.client.get(SENTINEL)) ?? '').id, server.runId, 0);
    return left;
  }

  /**
   * A call's check found fewer writes than this replica saw: a new sentinel and the hold, once (so that the
   * replicas that saw nothing of it hold too); the count Redis has now is the one to compare with from now.
   */
  private async markBehind(): Promise<number> {
    const server = await this.serverFacts();
    const [current, writesText] = await this.client.mget(SENTINEL, WRITES);
    const left = await this.replaceSentinel(
      current ?? '',
      stamp(randomUUID(), this.now(), server),
      this.wipeHoldMs,
      'behind',
    );
    const seen = parseSentinel((await this.client.get(SENTINEL)) ?? '');
    this.remember(seen.id, server.runId, Number(writesText ?? 0));
    return left;
  }

  /**
   * The sentinel this replica knew was replaced while it was away. If that happened within the nonce window
   * and nobody holds, a replica that never saw this Redis trusted it as a first start: the rest of the window
   * is held now, for every replica.
   */
  private async holdRestOfWindow(createdAt: number): Promise<void> {
    const left = createdAt + this.wipeHoldMs - this.now();
    if (left > 0) await this.client.set(HOLD, 'wiped', 'PX', Math.ceil(left), 'NX');
  }

  /** The Redis process answering now: INFO server's run id, and its persistence settings when readable. */
  private async serverFacts(): Promise<ServerFacts> {
    const runId = /^run_id:(\w+)/m.exec(await this.client.info('server'))?.[1];
    if (!runId)
      throw new Error('Redis did not report its run_id (INFO server), which tells its restarts apart');
    try {
      const [appendonly, fsync] = await Promise.all(
        ['appendonly', 'appendfsync'].map(
          async (name) => ((await this.client.config('GET', name)) as string[])[1],
        ),
      );
      return { runId, always: appendonly === 'yes' && fsync === 'always' };
    } catch {
      // A managed Redis may disable CONFIG: its persistence is unknown, so a restart counts as a loss.
      return { runId, always: undefined };
    }
  }

  /** Swaps the sentinel if it still is `expected` (and holds calls for `holdMs`); returns the hold's ms left. */
  private async replaceSentinel(
    expected: string,
    value: string,
    holdMs: number,
    why: LossReason,
  ): Promise<number> {
    const client = this.client as Redis & {
      agentBridgeReplaceSentinel(...args: (string | number)[]): Promise<number>;
    };
    const left = await client.agentBridgeReplaceSentinel(SENTINEL, HOLD, value, holdMs, expected, why);
    return left > 0 ? left : 0;
  }

  /** The hold every replica reads, and why, as the replica that set it wrote. */
  private async readHold(): Promise<{ ms: number; reason: LossReason }> {
    const [ms, reason] = await Promise.all([this.client.pttl(HOLD), this.client.get(HOLD)]);
    return { ms: Math.max(0, ms), reason: isLossReason(reason) ? reason : 'wiped' };
  }

  private hold(ms: number, reason: LossReason): void {
    if (ms <= 0) return;
    // The reason shown is the one whose hold ends last.
    if (this.now() + ms >= this.heldUntil) this.holdReason = reason;
    this.heldUntil = Math.max(this.heldUntil, this.now() + ms);
    clearTimeout(this.holdTimer);
    this.holdTimer = setTimeout(() => this.report(), this.heldUntil - this.now() + 10).unref();
    this.report();
  }

  /** What this replica saw: in memory, or (a restart since) in its file; the higher count of the two. */
  private remembered(): Memory | undefined {
    if (!this.options.memoryFile) return this.memory;
    let text: string;
    try {
      text = readFileSync(this.options.memoryFile, 'utf8');
    } catch {
      return this.memory;
    }
    // `<sentinel id> <run id> <writes>`; a file an older version wrote holds the id alone, or the two first.
    const [id, runId, writes] = text.trim().split(' ');
    if (!id) return undefined;
    const saved = { id, runId, writes: Number(writes) || 0 };
    if (this.memory?.id === id) saved.writes = Math.max(saved.writes, this.memory.writes);
    return saved;
  }

  /** The data this replica works with now; with another sentinel, counting writes starts from `writes`. */
  private remember(id: string, runId: string, writes: number): void {
    if (!id) return;
    const same = id === this.memory?.id;
    const counted = same ? Math.max(writes, this.memory?.writes ?? 0) : writes;
    if (same && runId === this.memory?.runId && counted === this.memory?.writes) return;
    this.memory = { id, runId, writes: counted };
    this.saveMemory();
  }

  /** A higher count of writes seen: kept in memory at once, in the file within WRITES_SAVE_MS. */
  private noteWrites(memory: Memory, writes: number): void {
    memory.writes = writes;
    if (!this.options.memoryFile || this.saveTimer) return;
    this.saveTimer = setTimeout(() => this.saveWrites(), WRITES_SAVE_MS).unref();
  }

  // Off a call's path: a disk that refuses the write is reported, and the next count tries again.
  private saveWrites(): void {
    try {
      this.saveMemory();
    } catch (error) {
      console.error(`Agent: could not write ${this.options.memoryFile}: ${(error as Error).message}`);
    }
  }

  private saveMemory(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    const memory = this.memory;
    if (!memory || !this.options.memoryFile) return;
    writeFileAtomic(this.options.memoryFile, `${memory.id} ${memory.runId ?? ''} ${memory.writes}\n`);
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

/** The console's and `serve`'s words for a hold, by what caused it. */
function holdProblem(reason: LossReason, until: string): string {
  const wait = `calls are refused until ${until} UTC, when every envelope sent before has expired`;
  if (reason === 'wiped')
    return `Redis came back without its data (restarted without persistence, or flushed), so it forgot which nonces were used: ${wait}. Run Redis with appendonly yes and appendfsync always to avoid this.`;
  if (reason === 'restarted')
    return `Redis restarted, and it did not (or does not now) write every change to disk before answering (appendonly yes with appendfsync always), so it may have come back without the nonces used since its last save: ${wait}. Run Redis with appendonly yes and appendfsync always to avoid this.`;
  if (reason === 'behind')
    return `Redis came back with fewer writes than this replica saw (a failover to a replica that was behind?), so it may have forgotten nonces used since: ${wait}. Replication is asynchronous: a failover can lose the newest writes, whatever the fsync settings.`;
  return `Redis restarted and its persistence settings cannot be read (CONFIG is disabled, as on many managed services), so it may have come back without the nonces used since its last save: ${wait}. If it runs appendonly yes with appendfsync always, allow CONFIG GET to the bridge's Redis user to avoid this.`;
}

/** The sentinel's parts; `runId` is missing from one that a version without run ids wrote. */
function parseSentinel(value: string): { id: string; createdAt: number; runId?: string; always: boolean } {
  const [id = '', createdAt, runId, fsync] = value.split(' ');
  return { id, createdAt: Number(createdAt) || 0, runId, always: fsync === 'always' };
}

function stamp(id: string, createdAt: number, server: ServerFacts): string {
  return `${id} ${createdAt} ${server.runId} ${server.always === true ? 'always' : 'not-always'}`;
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
