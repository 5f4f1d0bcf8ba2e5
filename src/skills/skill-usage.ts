import type { SkillUsageSink } from '../bridge/chat-skill.js';
import { utcDay } from '../state/token-ledger.js';

/**
 * Each skill's turns and the tokens they cost since UTC midnight, for the Skills page: counted in this
 * process as turns run (both doors), never a write per call. A restart or another replica starts from zero:
 * the budgets that limit callers are the call limits' (data dir or Redis), not these.
 */
export class SkillUsage implements SkillUsageSink {
  private day: string;
  private counts = new Map<string, { calls: number; tokens: number }>();

  constructor(private readonly now: () => number = Date.now) {
    this.day = utcDay(now());
  }

  turn(skill: string): void {
    this.of(skill).calls += 1;
  }

  tokens(skill: string, tokens: number): void {
    if (tokens > 0) this.of(skill).tokens += Math.ceil(tokens);
  }

  today(skill: string): { calls: number; tokens: number } {
    this.rollOver();
    const count = this.counts.get(skill);
    return { calls: count?.calls ?? 0, tokens: count?.tokens ?? 0 };
  }

  private of(skill: string): { calls: number; tokens: number } {
    this.rollOver();
    let count = this.counts.get(skill);
    if (!count) this.counts.set(skill, (count = { calls: 0, tokens: 0 }));
    return count;
  }

  private rollOver(): void {
    const day = utcDay(this.now());
    if (day === this.day) return;
    this.day = day;
    this.counts = new Map();
  }
}
