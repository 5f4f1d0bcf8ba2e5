// The one gateway state (issue 16 item 3): each transition, from probes and from calls, and which newer
// evidence replaces which older. Pure: a clock the test moves, findings written by hand.
import { describe, expect, it } from 'vitest';
import {
  GatewayStateMachine,
  type CallFinding,
  type GatewayCondition,
  type ProbeFindings,
  type ProblemText,
} from '../../src/bridge/gateway-state.js';
import type { GatewayProblem } from '../../src/bridge/diagnosis.js';

const problem = (kind: GatewayProblem): ProblemText => ({
  kind,
  diagnosis: `${kind} here.`,
  fix: `Fix ${kind}.`,
});

const healthy: ProbeFindings = {
  health: { live: true, reachable: true },
  listing: { ok: true },
  agent: { check: 'present' },
};
const refused: ProbeFindings = {
  health: { live: false, reachable: false, problem: problem('unreachable') },
  listing: { ok: false, problem: problem('unreachable') },
  agent: { check: 'unknown' },
};
const wrongToken: ProbeFindings = {
  health: { live: true, reachable: true },
  listing: { ok: false, problem: problem('unauthorized') },
  agent: { check: 'unknown' },
};
const agentMissing: ProbeFindings = {
  health: { live: true, reachable: true },
  listing: { ok: true },
  agent: { check: 'missing', problem: problem('agent-missing') },
};
const ok: CallFinding = { ok: true };
const failed = (kind: GatewayProblem): CallFinding => ({ ok: false, problem: problem(kind) });

function machine(start: ProbeFindings | null = healthy) {
  let now = Date.UTC(2026, 0, 1);
  const state = new GatewayStateMachine('configured', () => (now += 1000));
  if (start) state.probed(start);
  return state;
}

/** The condition each step leads to, and whether it was a transition (news) or not. */
function walk(state: GatewayStateMachine, steps: (ProbeFindings | CallFinding)[]) {
  return steps.map((step) => {
    const transition = 'listing' in step ? state.probed(step) : state.called(step);
    return `${state.snapshot.condition}${transition ? '!' : ''}`;
  });
}

describe('the gateway state', () => {
  it('starts unknown (not-configured without URL or token), and the first probe decides', () => {
    expect(machine(null).snapshot).toMatchObject({ condition: 'unknown', status: 'configured' });
    expect(new GatewayStateMachine('missing GATEWAY_TOKEN').snapshot.condition).toBe('not-configured');
    const state = machine(null);
    expect(state.probed(healthy)).toMatchObject({ from: 'unknown', to: 'up' });
    expect(state.snapshot).toMatchObject({ probe: { live: true } });
    expect(state.snapshot.problem).toBeUndefined();
  });

  it.each<[string, ProbeFindings, GatewayCondition, GatewayProblem]>([
    ['down', refused, 'down', 'unreachable'],
    ['token wrong', wrongToken, 'token-wrong', 'unauthorized'],
    ['agent missing', agentMissing, 'agent-missing', 'agent-missing'],
  ])('probe: up -> %s -> back, each transition once', (_name, findings, condition, kind) => {
    const state = machine();
    expect(walk(state, [findings, findings, healthy, healthy])).toEqual([
      `${condition}!`,
      condition,
      'up!',
      'up',
    ]);
    state.probed(findings);
    expect(state.snapshot.problem).toMatchObject({ kind, diagnosis: `${kind} here.`, fix: `Fix ${kind}.` });
  });

  it('a clean probe replaces what it contradicts: a call that found the gateway down, the token wrong, the agent unknown', () => {
    for (const kind of [
      'unreachable',
      'timeout',
      'unauthorized',
      'rate-limited',
      'agent-unknown',
      'starting',
    ] as const) {
      const state = machine();
      state.called(failed(kind));
      expect(state.snapshot.problem?.kind).toBe(kind);
      expect(state.probed(healthy), kind).toMatchObject({ to: 'up' });
      expect(state.snapshot.problem).toBeUndefined();
      // The failed call is still told as such, but no longer as the problem.
      expect(state.snapshot.lastCall).toMatchObject({ ok: false });
    }
  });

  it('a clean probe does not clear a chat failure it cannot see; a successful call does', () => {
    const state = machine();
    expect(walk(state, [failed('endpoint-disabled'), healthy, healthy, ok])).toEqual([
      'failing!',
      'failing',
      'failing',
      'up!',
    ]);
  });

  it('another failure of the same condition is news; the same one again is not', () => {
    const state = machine();
    expect(
      walk(state, [failed('gateway-error'), failed('gateway-error'), failed('endpoint-disabled'), refused]),
    ).toEqual(['failing!', 'failing', 'failing!', 'down!']);
    // Two ways of being down (refused, then a timeout) are one condition: said once.
    expect(walk(state, [failed('timeout')])).toEqual(['down']);
    expect(state.snapshot.problem?.kind).toBe('timeout');
  });

  it('calls: every outcome counts, the latest wins', () => {
    const state = machine();
    expect(
      walk(state, [failed('unreachable'), ok, failed('unauthorized'), failed('agent-unknown'), ok]),
    ).toEqual(['down!', 'up!', 'token-wrong!', 'agent-missing!', 'up!']);
  });

  it('keeps when each condition began', () => {
    const state = machine();
    state.probed(refused);
    const since = state.snapshot.since;
    state.probed(refused);
    expect(state.snapshot.since).toBe(since);
    state.probed(healthy);
    expect(state.snapshot.since > since).toBe(true);
  });

  it('a server without /health that a chat call proved stays up; a /health failing otherwise is a problem', () => {
    const noHealth: ProbeFindings = {
      health: { live: false, reachable: true, problem: problem('not-chat-server') },
      listing: { ok: false },
      agent: { check: 'unknown' },
    };
    const state = machine(null);
    expect(walk(state, [noHealth, ok, noHealth])).toEqual(['failing!', 'up!', 'up']);
    const broken: ProbeFindings = {
      ...noHealth,
      health: { live: false, reachable: true, problem: problem('gateway-error') },
    };
    expect(walk(state, [broken])).toEqual(['failing!']);
  });

  it('without a health probe, the agent list alone is evidence', () => {
    const state = machine(null);
    const listed: ProbeFindings = { listing: { ok: true }, agent: { check: 'present' } };
    const missing: ProbeFindings = {
      listing: { ok: true },
      agent: { check: 'missing', problem: problem('agent-missing') },
    };
    const unanswered: ProbeFindings = { listing: { ok: false }, agent: { check: 'unknown' } };
    expect(walk(state, [unanswered, listed, missing, unanswered, listed])).toEqual([
      'unknown',
      'up!',
      'agent-missing!',
      'agent-missing',
      'up!',
    ]);
  });

  it('a settings change forgets everything: unknown again (or not-configured)', () => {
    const state = machine();
    state.called(failed('unauthorized'));
    expect(state.configure('configured')).toMatchObject({ from: 'token-wrong', to: 'unknown' });
    expect(state.snapshot).not.toHaveProperty('problem');
    expect(state.snapshot).not.toHaveProperty('lastCall');
    expect(state.configure('missing GATEWAY_URL')).toMatchObject({ to: 'not-configured' });
    expect(state.probed(healthy)).toBeUndefined(); // nothing to probe
  });
});
