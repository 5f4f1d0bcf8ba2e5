// The one gateway state everything shows (console, tray, terminal, /agent/health, /metrics): the latest of
// the health probes' and the chat calls' findings. Pure logic: the watch (gateway-watch.ts) feeds it.
//
// Newer evidence replaces what it contradicts, and only that: a probe sees whether the gateway answers
// (GET /health), whether it takes the token and lists the agent for callers (GET /v1/models), so a clean
// probe clears "down", "token wrong" and "agent missing"; it cannot see a chat failure (the endpoint off,
// an agent run that failed), which only the next call clears. A successful call clears everything.
import type { GatewayCondition } from '../protocol/console-api.js';
import type { GatewayProblem } from './diagnosis.js';
import type { GatewayStatus } from './gateway-config.js';

export type { GatewayCondition } from '../protocol/console-api.js';

export const GATEWAY_CONDITIONS: readonly GatewayCondition[] = [
  'up',
  'down',
  'token-wrong',
  'agent-missing',
  'failing',
  'unknown',
  'not-configured',
];

/** A problem as the operator reads it. */
export interface ProblemText {
  kind: GatewayProblem;
  diagnosis: string;
  fix: string;
}

export interface GatewaySnapshot {
  status: GatewayStatus;
  condition: GatewayCondition;
  /** When the condition began. */
  since: string;
  /** What is wrong now and its fix: set in every condition but `up` and `unknown`. */
  problem?: ProblemText & { at: string };
  /** The last health probe (GET /health, never a chat call). */
  probe?: { live: boolean; checkedAt: string };
  /** The last chat call's outcome. */
  lastCall?: { ok: boolean; at: string };
}

export interface GatewayTransition {
  from: GatewayCondition;
  to: GatewayCondition;
  snapshot: GatewaySnapshot;
}

/** What one probe found. `health` is absent when only the agent list was asked (no periodic probe). */
export interface ProbeFindings {
  health?: { live: boolean; reachable: boolean; problem?: ProblemText };
  /** GET /v1/models: answered, failed (with the problem), or not asked (no token, another server). */
  listing: { ok: true } | { ok: false; problem?: ProblemText };
  /** The agent for callers on that list; `problem` says what to do when it is missing. */
  agent: { check: 'present' | 'missing' | 'unknown'; problem?: ProblemText };
}

export type CallFinding = { ok: true } | { ok: false; problem: ProblemText };

/** Which condition a problem puts the gateway in. */
export function conditionOf(kind: GatewayProblem): GatewayCondition {
  switch (kind) {
    case 'unreachable':
    case 'timeout':
      return 'down';
    // The lockout follows failed logins: its fix is the token too.
    case 'unauthorized':
    case 'rate-limited':
      return 'token-wrong';
    case 'agent-missing':
    case 'agent-unknown':
      return 'agent-missing';
    case 'not-configured':
      return 'not-configured';
    default:
      return 'failing';
  }
}

// What a probe can see, so what a clean probe contradicts. "starting" ends when the agent list answers.
const PROBE_SEES = new Set<GatewayCondition>(['unknown', 'down', 'token-wrong', 'agent-missing']);

export class GatewayStateMachine {
  private current: GatewaySnapshot;

  constructor(
    status: GatewayStatus,
    private readonly now: () => number = Date.now,
  ) {
    this.current = this.fresh(status);
  }

  get snapshot(): GatewaySnapshot {
    return this.current;
  }

  /** The gateway's settings changed: what was known is about another gateway (or token, or agent). */
  configure(status: GatewayStatus): GatewayTransition | undefined {
    const from = this.current;
    this.current = this.fresh(status);
    return from.condition === this.current.condition ? undefined : this.transition(from);
  }

  probed(findings: ProbeFindings): GatewayTransition | undefined {
    if (this.current.status !== 'configured') return undefined;
    const at = this.iso();
    const { health, listing, agent } = findings;
    const probe = health ? { probe: { live: health.live, checkedAt: at } } : {};
    const listingProblem = listing.ok ? undefined : listing.problem;
    let next: Pick<GatewaySnapshot, 'condition' | 'problem'>;
    if (health && !health.reachable && health.problem) next = this.problemState(health.problem, at);
    else if (listingProblem && conditionOf(listingProblem.kind) !== 'failing')
      next = this.problemState(listingProblem, at);
    else if (agent.check === 'missing' && agent.problem) next = this.problemState(agent.problem, at);
    else if (health?.live || listing.ok) next = this.cleared();
    else if (
      health?.problem &&
      !(health.problem.kind === 'not-chat-server' && this.current.condition === 'up')
    )
      next = this.problemState(health.problem, at);
    // Nothing conclusive (e.g. a server without /health that a chat call proved): keep what is known.
    else next = this.current;
    return this.move({ ...this.current, ...probe, ...next });
  }

  called(finding: CallFinding): GatewayTransition | undefined {
    const at = this.iso();
    const next = finding.ok ? { condition: 'up' as const } : this.problemState(finding.problem, at);
    const { problem: _old, ...rest } = this.current;
    return this.move({ ...rest, ...next, lastCall: { ok: finding.ok, at } });
  }

  /** A clean probe: clears what a probe can see, keeps a chat failure it cannot (but not "starting"). */
  private cleared(): Pick<GatewaySnapshot, 'condition' | 'problem'> {
    const { condition, problem } = this.current;
    if (PROBE_SEES.has(condition) || problem?.kind === 'starting') return { condition: 'up' };
    return { condition, ...(problem ? { problem } : {}) };
  }

  private problemState(problem: ProblemText, at: string): Pick<GatewaySnapshot, 'condition' | 'problem'> {
    return { condition: conditionOf(problem.kind), problem: { ...problem, at } };
  }

  private move(next: GatewaySnapshot): GatewayTransition | undefined {
    const from = this.current;
    if (next.condition === 'up' || next.condition === 'unknown') delete next.problem;
    // A new condition is news, and so is another kind of chat failure; the same one again is not (nor a
    // timeout after a refused connection: down is down).
    const news =
      next.condition !== from.condition ||
      (next.condition === 'failing' && next.problem?.kind !== from.problem?.kind);
    this.current = { ...next, since: next.condition === from.condition ? from.since : this.iso() };
    return news ? this.transition(from) : undefined;
  }

  private transition(from: GatewaySnapshot): GatewayTransition {
    return { from: from.condition, to: this.current.condition, snapshot: this.current };
  }

  private fresh(status: GatewayStatus): GatewaySnapshot {
    return {
      status,
      condition: status === 'configured' ? 'unknown' : 'not-configured',
      since: this.iso(),
    };
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }
}
