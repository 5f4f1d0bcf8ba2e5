import type { Redis } from 'ioredis';
import type { CallCheck, CallLimits, CallRefusal, CallVerdict } from './call-limits.js';
import { KEY_PREFIX, unavailable, type RedisConnection } from './redis-connection.js';
import { secondsUntilUtcMidnight, utcDay } from './token-ledger.js';

/**
 * One round trip per call, atomic across replicas: both token buckets are read, then the budget; only when
 * all pass are the buckets charged and the nonce set (SET NX: a second replica seeing the same nonce gets
 * nothing back, which is a replay). Buckets refill continuously, as the data-dir version does.
 * Returns {code, tokensLeft}: 0 ok, 1 all senders' limit, 2 this sender's, 3 budget, 4 replay.
 */
const CHECK_SCRIPT = `
local now = tonumber(ARGV[1])
local function level(key, per)
  local bucket = redis.call('HMGET', key, 't', 'u')
  if not bucket[1] then return per end
  local t = tonumber(bucket[1]) + (now - tonumber(bucket[2])) * per / 60000
  if t > per then t = per end
  return t
end
local gper = tonumber(ARGV[2])
local sper = tonumber(ARGV[3])
local g = level(KEYS[1], gper)
if g < 1 then return {1, tostring(g)} end
local s = level(KEYS[2], sper)
if s < 1 then return {2, tostring(s)} end
local budget = tonumber(ARGV[4])
if budget > 0 and tonumber(redis.call('GET', KEYS[3]) or '0') >= budget then return {3, '0'} end
redis.call('HSET', KEYS[1], 't', tostring(g - 1), 'u', ARGV[1])
redis.call('PEXPIRE', KEYS[1], 120000)
redis.call('HSET', KEYS[2], 't', tostring(s - 1), 'u', ARGV[1])
redis.call('PEXPIRE', KEYS[2], 120000)
if #KEYS == 4 and not redis.call('SET', KEYS[4], '1', 'PX', ARGV[5], 'NX') then return {4, '0'} end
return {0, '0'}
`;

const REFUSALS: Record<number, CallRefusal> = { 1: 'global', 2: 'sender', 3: 'budget', 4: 'replay' };
const OK: CallVerdict = { ok: true };

type CheckCommand = (numKeys: number, ...args: (string | number)[]) => Promise<[number, string]>;

/** The limits, budget and nonce window shared by every replica on one Redis. */
export class RedisCallLimits implements CallLimits {
  private readonly client: Redis & { agentBridgeCheck?: CheckCommand };
  private perMinute: number;
  private perSender: number;
  private warnedUsage = false;
  private unwritten = new Map<string, number>();
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisConnection,
    limits: { perMinute: number; perSender: number },
    private readonly now: () => number = Date.now,
  ) {
    this.perMinute = limits.perMinute;
    this.perSender = limits.perSender;
    this.client = redis.client;
    this.client.defineCommand('agentBridgeCheck', { lua: CHECK_SCRIPT });
  }

  async check(call: CallCheck): Promise<CallVerdict> {
    this.redis.assertUp();
    const now = this.now();
    const keys = [
      `${KEY_PREFIX}rate:*`,
      `${KEY_PREFIX}rate:sender:${call.sender}`,
      budgetKey(now, call.sender),
    ];
    if (call.nonce !== undefined) keys.push(`${KEY_PREFIX}nonce:${call.sender} ${call.nonce}`);
    const ttl = Math.max(1000, call.nonceExpiresAt - now);
    let reply: [number, string];
    try {
      reply = await (this.client.agentBridgeCheck as CheckCommand)(
        keys.length,
        ...keys,
        now,
        this.perMinute,
        this.perSender,
        call.tokensPerDay,
        ttl,
      );
    } catch {
      // Unchecked is never accepted: Redis did not answer, so neither the nonce nor the limits are known.
      throw unavailable();
    }
    const [code, left] = reply;
    if (code === 0) return OK;
    const refusal = REFUSALS[code] ?? 'replay';
    if (refusal === 'global')
      return { ok: false, refusal, waitSeconds: waitFor(Number(left), this.perMinute) };
    if (refusal === 'sender')
      return { ok: false, refusal, waitSeconds: waitFor(Number(left), this.perSender) };
    if (refusal === 'budget') return { ok: false, refusal, waitSeconds: secondsUntilUtcMidnight(now) };
    return { ok: false, refusal, waitSeconds: 0 };
  }

  /**
   * Counted in memory and written every 200 ms, one pipeline for every sender: a command per call would cost
   * more than the check itself. The budget is checked before a call and counted after it, so a lag of a
   * fraction of a second changes nothing a caller could use.
   */
  addTokens(sender: string, tokens: number): void {
    if (!(tokens > 0)) return;
    this.unwritten.set(sender, (this.unwritten.get(sender) ?? 0) + Math.ceil(tokens));
    this.flushTimer ??= setTimeout(() => void this.flush(), 200).unref();
  }

  /** Writes the tokens counted since the last write; kept for the next one when Redis does not answer. */
  async flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.unwritten.size === 0) return;
    const batch = this.unwritten;
    this.unwritten = new Map();
    const now = this.now();
    const write = this.client.pipeline();
    for (const [sender, tokens] of batch) {
      const key = budgetKey(now, sender);
      write.incrby(key, tokens).expire(key, 2 * 86_400);
    }
    try {
      const replies = (await write.exec()) ?? [];
      const failed = replies.find(([error]) => error);
      if (failed) throw failed[0];
      this.warnedUsage = false;
    } catch (error) {
      for (const [sender, tokens] of batch)
        this.unwritten.set(sender, (this.unwritten.get(sender) ?? 0) + tokens);
      this.flushTimer ??= setTimeout(() => void this.flush(), 1000).unref();
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

  close(): Promise<void> {
    return this.flush();
  }
}

function budgetKey(now: number, sender: string): string {
  return `${KEY_PREFIX}budget:${utcDay(now)}:${sender}`;
}

// The same rounding as the data-dir limiter: whole seconds, at least one.
function waitFor(tokensLeft: number, perMinute: number): number {
  return Math.max(1, Math.ceil((1 - tokensLeft) / (perMinute / 60_000) / 1000));
}
