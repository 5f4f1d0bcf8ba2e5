import type { Redis } from 'ioredis';
import {
  HELD_BUDGET_WAIT_S,
  strangersPerMinute,
  type CallCheck,
  type CallLimits,
  type CallRefusal,
  type CallVerdict,
} from './call-limits.js';
import { HOLD, KEY_PREFIX, SENTINEL, WRITES, unavailable, type RedisConnection } from './redis-connection.js';
import { secondsUntilUtcMidnight, utcDay } from './token-ledger.js';

/**
 * Reservations of calls in flight lapse this long after a sender's last one: a replica that dies mid-call
 * never gives its reservations back (a call lasts at most gatewayTimeoutMs, an hour at most).
 */
const RESERVED_TTL_MS = 2 * 3600_000;
const PROMPT_FLOOR = `${KEY_PREFIX}prompt-floor`;
const MAX_NEAR = 10_000;

/**
 * One round trip per call, atomic across replicas, on Redis's own clock (replicas' clocks may differ).
 * First what makes every check meaningless: the sentinel gone (Redis lost its data: code 5) or the hold
 * after such a loss (6, with its remaining ms). Then a replay (4) costs no allowance; then both token
 * buckets and the budget (spent and held for calls in flight) are read, and only when all pass are the
 * buckets charged, the nonce set (SET NX: a second replica seeing the same nonce at the same moment gets
 * nothing back, a replay too) and the call's tokens reserved.
 * A call that passes raises the count of writes (WRITES) in the same script: a Redis replica that has the
 * nonce has the count, and one that missed it has a lower count (redis-connection.ts).
 * KEYS: sentinel, hold, the shared bucket (all senders', or the strangers'), this sender's bucket,
 * budget, reserved, prompt floor, writes[, nonce]. ARGV: the shared bucket's per minute, this sender's,
 * budget, nonce TTL ms, tokens to reserve. Returns {code, detail}: 0 ok (detail: the prompt floor; then
 * what the sender has spent and holds, and the count of writes), 1 the shared limit, 2 this sender's
 * (detail: tokens left), 3 the budget spent, 7 the rest of it held by calls in flight.
 */
const CHECK_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {5, '0'} end
local hold = redis.call('PTTL', KEYS[2])
if hold > 0 then return {6, tostring(hold)} end
if #KEYS == 9 and redis.call('EXISTS', KEYS[9]) == 1 then return {4, '0'} end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local function level(key, per)
  local bucket = redis.call('HMGET', key, 't', 'u')
  if not bucket[1] then return per end
  local t = tonumber(bucket[1]) + (now - tonumber(bucket[2])) * per / 60000
  if t > per then t = per end
  return t
end
local gper = tonumber(ARGV[1])
local sper = tonumber(ARGV[2])
local g = level(KEYS[3], gper)
if g < 1 then return {1, tostring(g)} end
local s = level(KEYS[4], sper)
if s < 1 then return {2, tostring(s)} end
local budget = tonumber(ARGV[3])
local committed = 0
if budget > 0 then
  local spent = tonumber(redis.call('GET', KEYS[5]) or '0')
  if spent >= budget then return {3, '0'} end
  committed = spent + tonumber(redis.call('GET', KEYS[6]) or '0')
  if committed >= budget then return {7, '0'} end
end
redis.call('HSET', KEYS[3], 't', tostring(g - 1), 'u', tostring(now))
redis.call('PEXPIRE', KEYS[3], 120000)
redis.call('HSET', KEYS[4], 't', tostring(s - 1), 'u', tostring(now))
redis.call('PEXPIRE', KEYS[4], 120000)
if #KEYS == 9 and not redis.call('SET', KEYS[9], '1', 'PX', ARGV[4], 'NX') then return {4, '0'} end
local reserve = tonumber(ARGV[5])
if reserve > 0 then
  redis.call('INCRBY', KEYS[6], reserve)
  redis.call('PEXPIRE', KEYS[6], ${RESERVED_TTL_MS})
end
local writes = redis.call('INCR', KEYS[8])
return {0, redis.call('GET', KEYS[7]) or '0', tostring(committed + reserve), tostring(writes)}
`;

/** Gives a reservation back, never below zero (one that lapsed with its key is not taken from others). */
const RELEASE_SCRIPT = `
local left = redis.call('DECRBY', KEYS[1], ARGV[1])
if left <= 0 then redis.call('DEL', KEYS[1]) end
return left
`;

/** Lowers the shared prompt floor, never raises it. */
const FLOOR_SCRIPT = `
local floor = tonumber(redis.call('GET', KEYS[1]) or '0')
local seen = tonumber(ARGV[1])
if floor == 0 or seen < floor then redis.call('SET', KEYS[1], ARGV[1]) end
return 0
`;

/**
 * The nonce outlives its envelope's acceptance window by the 60 s a timestamp may be ahead, so a replica
 * whose clock runs behind the one that stored it cannot accept a replay in between.
 */
const NONCE_MARGIN_MS = 60_000;

const REFUSALS: Record<number, CallRefusal> = {
  1: 'global',
  2: 'sender',
  3: 'budget',
  4: 'replay',
  7: 'budget-held',
};
const OK: CallVerdict = { ok: true };

type CheckReply = [number, string, string?, string?];
type CheckCommand = (numKeys: number, ...args: (string | number)[]) => Promise<CheckReply>;
type Scripted = (numKeys: number, ...args: (string | number)[]) => unknown;

/** The limits, budget and nonce window shared by every replica on one Redis. */
export class RedisCallLimits implements CallLimits {
  private readonly client: Redis & { agentBridgeCheck?: CheckCommand; agentBridgePromptFloor?: Scripted };
  private perMinute: number;
  private perSender: number;
  private warnedUsage = false;
  private unwritten = new Map<string, number>();
  /** Reservations to give back, by reserved key: written with the usage. */
  private unreserved = new Map<string, number>();
  /** The shared floor as the last check read it, or lower as this replica saw (written at once: rare). */
  private floor = 0;
  /**
   * Accounts past half their budget at their last check (bounded, oldest out): the end of their calls is
   * written at once, so that a reservation waiting for the next batch cannot refuse their next call.
   */
  private readonly near = new Map<string, true>();
  private flushTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly redis: RedisConnection,
    limits: { perMinute: number; perSender: number },
    private readonly now: () => number = Date.now,
  ) {
    this.perMinute = limits.perMinute;
    this.perSender = limits.perSender;
    this.client = redis.client;
    this.client.defineCommand('agentBridgeCheck', { lua: CHECK_SCRIPT });
    this.client.defineCommand('agentBridgeUnreserve', { lua: RELEASE_SCRIPT });
    this.client.defineCommand('agentBridgePromptFloor', { lua: FLOOR_SCRIPT });
  }

  async check(call: CallCheck): Promise<CallVerdict> {
    this.redis.assertUp();
    const now = this.now();
    // A stranger's call is charged to a bucket of its own: the same script, another key and rate.
    const shared = call.stranger ? strangersPerMinute(this.perMinute) : this.perMinute;
    // The rate and the budget are the account's (a caller with one skill); the nonce is the sender's.
    const account = call.account ?? call.sender;
    const keys = [
      SENTINEL,
      HOLD,
      call.stranger ? `${KEY_PREFIX}rate:strangers` : `${KEY_PREFIX}rate:*`,
      `${KEY_PREFIX}rate:sender:${account}`,
      budgetKey(now, account),
      reservedKey(now, account),
      PROMPT_FLOOR,
      WRITES,
    ];
    if (call.nonce !== undefined) keys.push(`${KEY_PREFIX}nonce:${call.sender} ${call.nonce}`);
    const ttl = Math.max(1000, call.nonceExpiresAt - now) + NONCE_MARGIN_MS;
    let reply: CheckReply;
    try {
      reply = await (this.client.agentBridgeCheck as CheckCommand)(
        keys.length,
        ...keys,
        shared,
        call.perSender ?? this.perSender,
        call.tokensPerDay,
        ttl,
        call.reserve ?? 0,
      );
    } catch {
      // Unchecked is never accepted: Redis did not answer, so neither the nonce nor the limits are known.
      throw unavailable();
    }
    if (reply[0] === 5) throw await this.redis.lostState();
    if (reply[0] === 6) throw await this.redis.lostState(Number(reply[1]));
    const [code, left] = reply;
    if (code === 0) {
      // Fewer writes than seen before: this call's own check ran on data that lost some (a replay may pass).
      if (this.redis.writesLost(Number(reply[3]))) throw await this.redis.lostWrites();
      // The floor another replica learned comes with every call's answer: no round trip of its own.
      const shared = Number(left);
      if (shared > 0 && (this.floor === 0 || shared < this.floor)) this.floor = shared;
      if (call.tokensPerDay > 0) this.noteNear(account, Number(reply[2]) * 2 >= call.tokensPerDay);
      return OK;
    }
    const refusal = REFUSALS[code] ?? 'replay';
    if (refusal === 'global') {
      const waitSeconds = waitFor(Number(left), shared);
      return { ok: false, refusal: call.stranger ? 'strangers' : 'global', waitSeconds };
    }
    if (refusal === 'sender')
      return { ok: false, refusal, waitSeconds: waitFor(Number(left), call.perSender ?? this.perSender) };
    if (refusal === 'budget') return { ok: false, refusal, waitSeconds: secondsUntilUtcMidnight(now) };
    if (refusal === 'budget-held') return { ok: false, refusal, waitSeconds: HELD_BUDGET_WAIT_S };
    return { ok: false, refusal, waitSeconds: 0 };
  }

  /**
   * Counted in memory and written every 200 ms, one pipeline for every sender: a command per call would cost
   * more than the check itself. The call's reservation holds its place in the budget until then.
   */
  addTokens(account: string, tokens: number): void {
    if (!(tokens > 0)) return;
    // Keyed by the day of the call, not of the write (a call just before midnight counts for its own day).
    const key = budgetKey(this.now(), account);
    this.unwritten.set(key, (this.unwritten.get(key) ?? 0) + Math.ceil(tokens));
    if (!this.closed) this.flushTimer ??= setTimeout(() => void this.flush(), 200).unref();
  }

  /**
   * Given back with the next write of the usage (the usage of the same call comes first in it): at once for
   * a sender past half its budget (before its reply leaves), else with the batch.
   */
  release(account: string, tokens: number, reservedAt: number): void {
    if (!(tokens > 0)) return;
    const key = reservedKey(reservedAt, account);
    this.unreserved.set(key, (this.unreserved.get(key) ?? 0) + Math.ceil(tokens));
    if (this.closed) return;
    if (this.near.has(account)) void this.flush();
    else this.flushTimer ??= setTimeout(() => void this.flush(), 200).unref();
  }

  private noteNear(sender: string, near: boolean): void {
    if (!near) {
      if (this.near.size > 0) this.near.delete(sender);
      return;
    }
    if (this.near.size >= MAX_NEAR && !this.near.has(sender)) {
      const oldest = this.near.keys().next().value;
      if (oldest !== undefined) this.near.delete(oldest);
    }
    this.near.set(sender, true);
  }

  promptFloor(): number {
    return this.floor;
  }

  notePrompt(tokens: number): void {
    if (!(tokens > 0) || (this.floor > 0 && tokens >= this.floor)) return;
    this.floor = tokens;
    // Rare (a smaller prompt than any before): written at once, for the replicas that have not seen one.
    void Promise.resolve(this.client.agentBridgePromptFloor?.(1, PROMPT_FLOOR, Math.ceil(tokens))).catch(
      () => undefined,
    );
  }

  /** Writes the tokens counted since the last write; kept for the next one when Redis does not answer. */
  async flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.unwritten.size === 0 && this.unreserved.size === 0) return;
    const batch = this.unwritten;
    const released = this.unreserved;
    this.unwritten = new Map();
    this.unreserved = new Map();
    const write = this.client.pipeline() as ReturnType<Redis['pipeline']> & {
      agentBridgeUnreserve: Scripted;
    };
    for (const [key, tokens] of batch) write.incrby(key, tokens).expire(key, 2 * 86_400);
    for (const [key, tokens] of released) write.agentBridgeUnreserve(1, key, tokens);
    try {
      const replies = (await write.exec()) ?? [];
      const failed = replies.find(([error]) => error);
      if (failed) throw failed[0];
      this.warnedUsage = false;
    } catch (error) {
      // Kept for the next write (a timed-out write that Redis did apply is then counted twice: the budget
      // errs on the caller's side of strict).
      for (const [key, tokens] of batch) this.unwritten.set(key, (this.unwritten.get(key) ?? 0) + tokens);
      for (const [key, tokens] of released)
        this.unreserved.set(key, (this.unreserved.get(key) ?? 0) + tokens);
      if (!this.closed) this.flushTimer ??= setTimeout(() => void this.flush(), 1000).unref();
      if (this.warnedUsage) return;
      this.warnedUsage = true;
      console.error(
        `Agent: could not count tokens in Redis (${(error as Error).message}); kept, and written when it answers.`,
      );
    }
  }

  setLimits(perMinute: number, perSender: number): void {
    this.perMinute = perMinute;
    this.perSender = perSender;
  }

  secondsUntilReset(): number {
    return secondsUntilUtcMidnight(this.now());
  }

  /** Redis expires buckets, budgets and nonces by itself. */
  sweep(): void {}

  /** A last write of the counted tokens; then no timer is left behind, whether Redis answered or not. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
  }
}

function budgetKey(now: number, sender: string): string {
  return `${KEY_PREFIX}budget:${utcDay(now)}:${sender}`;
}

function reservedKey(now: number, sender: string): string {
  return `${KEY_PREFIX}reserved:${utcDay(now)}:${sender}`;
}

// The same rounding as the data-dir limiter: whole seconds, at least one.
function waitFor(tokensLeft: number, perMinute: number): number {
  return Math.max(1, Math.ceil((1 - tokensLeft) / (perMinute / 60_000) / 1000));
}
