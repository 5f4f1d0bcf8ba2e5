import { NonceStore, nonceKey } from './nonce-store.js';
import { RateLimiter } from './rate-limits.js';
import { TokenLedger } from './token-ledger.js';

/** One verified call, at the pipeline's limits and nonce steps. */
export interface CallCheck {
  sender: string;
  /**
   * Where its requests per minute and daily tokens are counted: a caller's account with one skill
   * (calls/skill-access.ts `skillAccount`); absent: the sender's own, as for the default skill. The nonce
   * stays the sender's: a sender's nonces are unique whatever skill it calls (PROTOCOL.md §4, step 6).
   */
  account?: string;
  /** Absent for the unsigned calls some SDKs make (they carry no nonce). */
  nonce?: string;
  /** When the nonce may be forgotten: its envelope's timestamp has left the acceptance window by then. */
  nonceExpiresAt: number;
  /** 0: no daily token budget. */
  tokensPerDay: number;
  /** The sender's own requests per minute (an A2A key issued with a limit); absent: the per-sender setting. */
  perSender?: number;
  /**
   * Tokens held against the daily budget from this check until the call's `release` (an estimate of what it
   * will cost): calls a sender starts together cannot all pass a budget none of them is charged to yet.
   */
  reserve?: number;
  /**
   * A sender the operator has not decided on yet (pairing): charged to the strangers' bucket instead of the
   * agent-wide one, so that new senders cannot use up an approved sender's service (issue 15).
   */
  stranger?: boolean;
}

export type CallRefusal = 'global' | 'strangers' | 'sender' | 'budget' | 'budget-held' | 'replay' | 'full';

/** A sender whose calls in flight hold the rest of its budget may try again this soon (they may end). */
export const HELD_BUDGET_WAIT_S = 5;

/** The strangers' bucket holds a tenth of the card's requests per minute (at least one). */
export function strangersPerMinute(perMinute: number): number {
  return Math.max(1, Math.ceil(perMinute / 10));
}

/** `waitSeconds`: when the caller may try again (rate limits and budget); 0 when retrying will not help. */
export type CallVerdict = { ok: true } | { ok: false; refusal: CallRefusal; waitSeconds: number };

/**
 * The shared counters every verified call passes: the request limits (all senders, or all strangers; and
 * per sender), the daily token budget, and the nonce window. `check` counts the call only when it passes
 * every limit, and records the nonce only then. The data-dir version answers at once; the Redis one in one
 * round trip.
 */
export interface CallLimits {
  check(call: CallCheck): CallVerdict | Promise<CallVerdict>;
  /**
   * Tokens an account spent (as the gateway reported them, or estimated from the reply's size): the
   * check's `account`, or its sender when it had none.
   */
  addTokens(account: string, tokens: number): void;
  /**
   * A call is over (its usage added): the `tokens` its check reserved at `reservedAt` for `account` are
   * given back. A reservation of a UTC day that has ended went with that day's budget.
   */
  release(account: string, tokens: number, reservedAt: number): void;
  /**
   * The smallest prompt the gateway reported for a turn (the agent's system prompt and tools, which every
   * turn costs before the caller's words): 0 until one is known. Kept with the budgets (in the data dir, or
   * shared by the replicas), so a restart does not forget it.
   */
  promptFloor(): number;
  /** A prompt size the gateway reported: the floor if it is the smallest so far. */
  notePrompt(tokens: number): void;
  setLimits(perMinute: number, perSender: number): void;
  /** Seconds until the daily budget resets (UTC midnight). */
  secondsUntilReset(): number;
  sweep(): void;
  close(): void | Promise<void>;
}

const OK: CallVerdict = { ok: true };

/** The single-process version: in memory, with the nonces and the ledger kept in the data dir. */
export class LocalCallLimits implements CallLimits {
  readonly nonces: NonceStore;
  readonly ledger: TokenLedger;
  readonly globalLimit: RateLimiter;
  readonly strangerLimit: RateLimiter;
  readonly senderLimit: RateLimiter;

  constructor(
    dataDir: string,
    limits: { perMinute: number; perSender: number },
    now: () => number = Date.now,
  ) {
    this.nonces = new NonceStore(dataDir, { now });
    this.ledger = new TokenLedger(dataDir, now);
    this.globalLimit = new RateLimiter(limits.perMinute, now);
    this.strangerLimit = new RateLimiter(strangersPerMinute(limits.perMinute), now);
    this.senderLimit = new RateLimiter(limits.perSender, now);
  }

  check(call: CallCheck): CallVerdict {
    // A replay is refused before it costs its sender anything: a captured envelope sent again must not
    // use up the real sender's allowance.
    const nonce = call.nonce === undefined ? undefined : nonceKey(call.sender, call.nonce);
    if (nonce && this.nonces.has(nonce)) return { ok: false, refusal: 'replay', waitSeconds: 0 };
    // Both limits are checked before either counts, so a refused request costs no one's allowance.
    const shared = call.stranger ? this.strangerLimit : this.globalLimit;
    const sharedWait = shared.wait('*');
    if (sharedWait > 0)
      return { ok: false, refusal: call.stranger ? 'strangers' : 'global', waitSeconds: sharedWait };
    const account = call.account ?? call.sender;
    const senderWait = this.senderLimit.wait(account, call.perSender);
    if (senderWait > 0) return { ok: false, refusal: 'sender', waitSeconds: senderWait };
    if (call.tokensPerDay > 0 && this.ledger.committed(account) >= call.tokensPerDay) {
      if (this.ledger.spent(account) >= call.tokensPerDay)
        return { ok: false, refusal: 'budget', waitSeconds: this.ledger.secondsUntilReset() };
      return { ok: false, refusal: 'budget-held', waitSeconds: HELD_BUDGET_WAIT_S };
    }
    shared.take('*');
    this.senderLimit.take(account, call.perSender);
    if (nonce) {
      if (this.nonces.full) return { ok: false, refusal: 'full', waitSeconds: 5 };
      if (!this.nonces.record(nonce, call.nonceExpiresAt))
        return { ok: false, refusal: 'replay', waitSeconds: 0 };
    }
    if (call.reserve) this.ledger.reserve(account, call.reserve);
    return OK;
  }

  addTokens(account: string, tokens: number): void {
    this.ledger.add(account, tokens);
  }

  release(account: string, tokens: number, reservedAt: number): void {
    this.ledger.release(account, tokens, reservedAt);
  }

  promptFloor(): number {
    return this.ledger.promptFloor;
  }

  notePrompt(tokens: number): void {
    this.ledger.notePrompt(tokens);
  }

  setLimits(perMinute: number, perSender: number): void {
    this.globalLimit.setLimit(perMinute);
    this.strangerLimit.setLimit(strangersPerMinute(perMinute));
    this.senderLimit.setLimit(perSender);
  }

  secondsUntilReset(): number {
    return this.ledger.secondsUntilReset();
  }

  sweep(): void {
    this.nonces.sweep();
    this.globalLimit.sweep();
    this.strangerLimit.sweep();
    this.senderLimit.sweep();
  }

  close(): void {
    this.nonces.close();
    this.ledger.flush();
  }
}
