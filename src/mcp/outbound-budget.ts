/**
 * Each agent the operator's own agent calls gets a daily budget (issue 28, item 4; openclaw/openclaw#37842:
 * 398 messages and about $19 overnight): calls (each samvad_call and a2a_send) and tokens (about four
 * characters of what was sent to it and read from it, as the bridge counts a gateway that reports none), per
 * UTC day. Past either, the MCP tools refuse to call that agent until UTC midnight, and say so. One budget per
 * host: an agent:// id and the A2A base URL of the same host are one agent. Kept in the data dir
 * (outbound-usage.json), so a restart hands out no fresh budget.
 */
import { join } from 'node:path';
import { readJsonFile, writeFileAtomic } from '../lib/atomic-file.js';
import type { OutboundBudgetView } from '../protocol/console-api.js';
import { secondsUntilUtcMidnight, utcDay } from '../state/token-ledger.js';
import { OutboundError } from './outbound-policy.js';

export interface BudgetSettings {
  /** 0: no limit. */
  outboundCallsPerDay: number;
  /** 0: no limit. */
  outboundTokensPerDay: number;
}

export interface OutboundBudgetOptions {
  /** Where today's use is kept; none: in memory (tests). */
  dataDir?: string;
  settings(): BudgetSettings;
  now?: () => number;
}

interface Usage {
  calls: number;
  tokens: number;
}

interface UsageFile {
  day: string;
  callees: Record<string, Usage>;
}

const CHARS_PER_TOKEN = 4;

/** Tokens for `bytes` sent and read: about four characters a token (bridge/gateway-turn.ts counts so too). */
export function tokensFor(bytes: number): number {
  return Math.ceil(Math.max(0, bytes) / CHARS_PER_TOKEN);
}

export class OutboundBudget {
  private readonly now: () => number;
  private readonly path: string | undefined;
  private day: string;
  private used = new Map<string, Usage>();
  private timer: NodeJS.Timeout | undefined;
  private dirty = false;

  constructor(private readonly options: OutboundBudgetOptions) {
    this.now = options.now ?? Date.now;
    this.day = utcDay(this.now());
    this.path = options.dataDir && join(options.dataDir, 'outbound-usage.json');
    const saved = this.path ? readJsonFile<UsageFile>(this.path) : undefined;
    if (saved?.day === this.day && typeof saved.callees === 'object' && saved.callees !== null) {
      for (const [callee, usage] of Object.entries(saved.callees)) {
        if (Number.isFinite(usage?.calls) && Number.isFinite(usage?.tokens))
          this.used.set(callee, { calls: usage.calls, tokens: usage.tokens });
      }
    }
  }

  /**
   * Refuses (429, verdict `rate-limit`) a call to `callee` (its agent:// id) once today's calls or tokens to
   * it reached the operator's budget; the message names the budget, the setting and when it resets.
   */
  check(callee: string): void {
    this.rollOver();
    const usage = this.used.get(callee) ?? { calls: 0, tokens: 0 };
    const { outboundCallsPerDay: calls, outboundTokensPerDay: tokens } = this.options.settings();
    const spent =
      calls > 0 && usage.calls >= calls
        ? `${usage.calls} of its ${calls} calls (setting outboundCallsPerDay)`
        : tokens > 0 && usage.tokens >= tokens
          ? `${usage.tokens} of its ${tokens} tokens (setting outboundTokensPerDay; about four characters sent to or read from it make a token)`
          : undefined;
    if (!spent) return;
    const wait = secondsUntilUtcMidnight(this.now());
    throw new OutboundError(
      'rate-limit',
      429,
      `The operator's daily budget for calls to ${callee} is spent: ${spent} today. It resets at UTC ` +
        `midnight (${this.resetsAt()}), in ${duration(wait)}. Do not call this agent again before then; tell ` +
        'the operator if this call matters (they can raise the budget on the console, Settings > Calls out).',
    );
  }

  /** One call to `callee` goes out now. */
  countCall(callee: string): void {
    this.usage(callee).calls++;
    this.changed();
  }

  /** Tokens sent to or read from `callee`. */
  addTokens(callee: string, tokens: number): void {
    if (tokens <= 0) return;
    this.usage(callee).tokens += tokens;
    this.changed();
  }

  /** Today's use per agent called, with the budgets (the console's Calls out). */
  view(): OutboundBudgetView {
    this.rollOver();
    const { outboundCallsPerDay: calls, outboundTokensPerDay: tokens } = this.options.settings();
    const callees = [...this.used].map(([callee, usage]) => {
      const row: OutboundBudgetView['callees'][number] = { callee, ...usage };
      if (calls > 0 && usage.calls >= calls) row.spent = 'calls';
      else if (tokens > 0 && usage.tokens >= tokens) row.spent = 'tokens';
      return row;
    });
    callees.sort((a, b) => b.calls - a.calls || b.tokens - a.tokens || a.callee.localeCompare(b.callee));
    return { day: this.day, resetsAt: this.resetsAt(), callsPerDay: calls, tokensPerDay: tokens, callees };
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.dirty || !this.path) return;
    this.dirty = false;
    const file: UsageFile = { day: this.day, callees: Object.fromEntries(this.used) };
    writeFileAtomic(this.path, JSON.stringify(file));
  }

  private usage(callee: string): Usage {
    this.rollOver();
    let usage = this.used.get(callee);
    if (!usage) this.used.set(callee, (usage = { calls: 0, tokens: 0 }));
    return usage;
  }

  private changed(): void {
    this.dirty = true;
    // Batched: every call adds to it.
    if (this.path) this.timer ??= setTimeout(() => this.flush(), 1000).unref();
  }

  private rollOver(): void {
    const day = utcDay(this.now());
    if (day === this.day) return;
    this.day = day;
    this.used.clear();
    this.dirty = true;
  }

  private resetsAt(): string {
    return new Date(this.now() + secondsUntilUtcMidnight(this.now()) * 1000).toISOString();
  }
}

function duration(seconds: number): string {
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.ceil((seconds % 3600) / 60);
  return hours > 0 ? `${hours} h ${minutes} min` : `${minutes} min`;
}
