import { describe, expect, it } from 'vitest';
import {
  audienceRefusal,
  callerLimits,
  skillAccount,
  type SkillGrant,
} from '../../src/calls/skill-access.js';
import type { SkillAudience } from '../../src/protocol/skills.js';

// Who may call what (issue 27, item 3): every grant against every audience, as both front doors ask it.
const stranger: SkillGrant = { approved: false, open: false };
const keyless: SkillGrant = { approved: false, open: true };
const approved: SkillGrant = { approved: true, open: false };
const scoped: SkillGrant = { approved: true, skills: ['research'], open: false };
const scopedOpen: SkillGrant = { approved: true, skills: ['research'], open: true };

const admits = (id: string, audience: SkillAudience, grant: SkillGrant) =>
  audienceRefusal({ id, audience }, grant, 'trust') === undefined;

describe('a skill audience', () => {
  it.each([
    // grant,        public chat, approved research, named research, approved summary, named shell
    ['a stranger', stranger, [true, false, false, false, false]],
    ['a keyless caller under open', keyless, [true, false, false, false, false]],
    ['an unscoped approval or key', approved, [true, true, false, true, false]],
    ['a scope naming research', scoped, [false, true, true, false, false]],
    ['that scope under open', scopedOpen, [true, true, true, false, false]],
  ] as const)('%s', (_who, grant, expected) => {
    expect([
      admits('chat', 'public', grant),
      admits('research', 'approved', grant),
      admits('research', 'named', grant),
      admits('summary', 'approved', grant),
      admits('shell', 'named', grant),
    ]).toEqual(expected);
  });

  it('refuses with AUTH_FAILED 403 at the step asked, saying which skill to ask the operator for', () => {
    const refusal = audienceRefusal({ id: 'research', audience: 'approved' }, stranger, 'access');
    expect(refusal).toMatchObject({ code: 'AUTH_FAILED', httpStatus: 403, step: 'access' });
    expect(refusal?.message).toBe(
      'Skill "research" is open only to callers this agent\'s operator approved: ask this agent\'s operator for access to skill "research".',
    );
    expect(audienceRefusal({ id: 'shell', audience: 'named' }, approved, 'trust')?.message).toMatch(
      /named for it one by one: ask this agent's operator for access to skill "shell"\.$/,
    );
    expect(audienceRefusal({ id: 'chat', audience: 'public' }, scoped, 'trust')?.message).toBe(
      'Your access to this agent opens "research" only, not skill "chat": ask this agent\'s operator for access to skill "chat".',
    );
  });
});

describe('where a skill is counted', () => {
  it("is the caller's own account for chat, and one account per other skill", () => {
    expect(skillAccount('agent://a.example', 'chat')).toBe('agent://a.example');
    expect(skillAccount('agent://a.example', 'research')).toBe('skill:research:agent://a.example');
    expect(skillAccount('a2a-key:0123456789ab', 'research')).not.toBe(
      skillAccount('a2a-key:0123456789ab', 'summary'),
    );
  });

  it("under the stricter of the skill's limits and the caller's own, each unset one the default", () => {
    expect(callerLimits(undefined, undefined)).toEqual({});
    expect(callerLimits({ requestsPerMinute: 5 }, undefined)).toEqual({ requestsPerMinute: 5 });
    expect(callerLimits(undefined, { tokensPerDay: 900 })).toEqual({ tokensPerDay: 900 });
    expect(
      callerLimits(
        { requestsPerMinute: 5, tokensPerDay: 2000 },
        { requestsPerMinute: 3, tokensPerDay: 9000 },
      ),
    ).toEqual({
      requestsPerMinute: 3,
      tokensPerDay: 2000,
    });
  });
});
