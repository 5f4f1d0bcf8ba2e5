// Each agent the operator's agent calls has a daily budget of calls and tokens (issue 28, item 4).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OutboundBudget, tokensFor } from '../../src/mcp/outbound-budget.js';
import { OutboundError } from '../../src/mcp/outbound-policy.js';

const NOON = Date.parse('2026-05-04T12:00:00.000Z');

function budget(limits = { outboundCallsPerDay: 3, outboundTokensPerDay: 1000 }, dataDir?: string) {
  let now = NOON;
  const settings = { ...limits };
  const it = new OutboundBudget({ dataDir, settings: () => settings, now: () => now });
  return { budget: it, settings, at: (time: number) => (now = time) };
}

function refusal(run: () => void): OutboundError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(OutboundError);
    return error as OutboundError;
  }
  throw new Error('expected a refusal');
}

describe('OutboundBudget', () => {
  it('counts calls per agent and refuses the one past the budget, naming it, the setting and the reset', () => {
    const { budget: b } = budget();
    for (let i = 0; i < 3; i++) {
      b.check('agent://a.example');
      b.countCall('agent://a.example');
    }
    const error = refusal(() => b.check('agent://a.example'));
    expect(error).toMatchObject({ verdict: 'rate-limit', status: 429 });
    expect(error.message).toBe(
      "The operator's daily budget for calls to agent://a.example is spent: 3 of its 3 calls (setting " +
        'outboundCallsPerDay) today. It resets at UTC midnight (2026-05-05T00:00:00.000Z), in 12 h 0 min. Do ' +
        'not call this agent again before then; tell the operator if this call matters (they can raise the ' +
        'budget on the console, Settings > Calls out).',
    );
    // Another agent has its own budget.
    expect(() => b.check('agent://b.example')).not.toThrow();
  });

  it('refuses once the tokens sent and read reach the budget', () => {
    const { budget: b } = budget();
    b.countCall('agent://a.example');
    b.addTokens('agent://a.example', tokensFor(3995));
    expect(() => b.check('agent://a.example')).not.toThrow();
    b.addTokens('agent://a.example', 1);
    expect(refusal(() => b.check('agent://a.example')).message).toMatch(
      /1000 of its 1000 tokens \(setting outboundTokensPerDay;/,
    );
  });

  it('takes 0 as no limit, and follows the settings as they change', () => {
    const { budget: b, settings } = budget({ outboundCallsPerDay: 0, outboundTokensPerDay: 0 });
    for (let i = 0; i < 50; i++) b.countCall('agent://a.example');
    b.addTokens('agent://a.example', 10_000_000);
    expect(() => b.check('agent://a.example')).not.toThrow();
    settings.outboundCallsPerDay = 50;
    expect(() => b.check('agent://a.example')).toThrow(/50 of its 50 calls/);
  });

  it('starts again at UTC midnight', () => {
    const { budget: b, at } = budget();
    for (let i = 0; i < 3; i++) b.countCall('agent://a.example');
    at(Date.parse('2026-05-04T23:59:30.000Z'));
    expect(refusal(() => b.check('agent://a.example')).message).toMatch(/in 1 min\./);
    at(Date.parse('2026-05-05T00:00:01.000Z'));
    expect(() => b.check('agent://a.example')).not.toThrow();
    expect(b.view().callees).toEqual([]);
  });

  it("shows today's use per agent, the budgets and which one is spent", () => {
    const { budget: b } = budget();
    for (let i = 0; i < 3; i++) b.countCall('agent://a.example');
    b.countCall('agent://b.example');
    b.addTokens('agent://b.example', 1500);
    b.addTokens('agent://a.example', 20);
    expect(b.view()).toEqual({
      day: '2026-05-04',
      resetsAt: '2026-05-05T00:00:00.000Z',
      callsPerDay: 3,
      tokensPerDay: 1000,
      callees: [
        { callee: 'agent://a.example', calls: 3, tokens: 20, spent: 'calls' },
        { callee: 'agent://b.example', calls: 1, tokens: 1500, spent: 'tokens' },
      ],
    });
  });

  it('keeps the day in the data dir: a restart hands out no fresh budget', () => {
    const dir = mkdtempSync(join(tmpdir(), 'budget-'));
    const first = budget(undefined, dir).budget;
    for (let i = 0; i < 3; i++) first.countCall('agent://a.example');
    first.flush();
    expect(JSON.parse(readFileSync(join(dir, 'outbound-usage.json'), 'utf8'))).toEqual({
      day: '2026-05-04',
      callees: { 'agent://a.example': { calls: 3, tokens: 0 } },
    });
    const again = budget(undefined, dir).budget;
    expect(() => again.check('agent://a.example')).toThrow(/3 of its 3 calls/);
  });
});
