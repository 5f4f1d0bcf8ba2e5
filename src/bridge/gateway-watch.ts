// Keeps the gateway state (gateway-state.ts) current: probes the gateway (GET /health and, through the
// target, GET /v1/models; never chat) at start, periodically, on request and after an edit of OpenClaw's
// config file, and feeds it every chat call's outcome. Each transition is reported once.
import type { GatewayOutcome } from './gateway-turn.js';
import type { GatewayError } from './diagnosis.js';
import type { ResolvedGateway } from './gateway-config.js';
import { probeGateway, type GatewayHealth } from './gateway-health.js';
import {
  GatewayStateMachine,
  type GatewaySnapshot,
  type GatewayTransition,
  type ProbeFindings,
  type ProblemText,
} from './gateway-state.js';
import type { GatewayTarget } from './gateway-target.js';

/**
 * After an edit of OpenClaw's config file, the gateway is asked at once (the console hears of the edit) and
 * again after these delays: OpenClaw applies a valid edit half a second or more after it is saved, and
 * until the agents it lists are the ones the file declares, the file's tools are not taken as what it runs.
 */
export const RECHECKS_AFTER_EDIT_MS: readonly number[] = [1000, 3000, 7000];

export interface GatewayWatchOptions {
  gateway(): ResolvedGateway;
  target: GatewayTarget;
  /** The published skills' agents (skill-targets.ts): checked again with each probe. */
  skills?: { refresh(): Promise<void> };
  now?: () => number;
  onTransition(transition: GatewayTransition): void;
}

export class GatewayWatch {
  private readonly machine: GatewayStateMachine;
  private timer: NodeJS.Timeout | undefined;
  private rechecks: NodeJS.Timeout[] = [];
  private running: Promise<GatewaySnapshot> | undefined;
  private first: Promise<GatewaySnapshot> | undefined;
  /** Whether probes ask GET /health (off when the periodic probe is off: only the agent list is asked). */
  private asksHealth = true;
  /** Bumped by every settings change: a probe of the gateway as it was must not report. */
  private generation = 0;
  /** The probe under way: when it began and the requests it still waits for (the console shows them). */
  private underWay: { since: number; waiting: Set<string> } | undefined;

  constructor(private readonly options: GatewayWatchOptions) {
    this.machine = new GatewayStateMachine(options.gateway().status, options.now);
  }

  get snapshot(): GatewaySnapshot {
    return this.machine.snapshot;
  }

  /** Probes now and every `everyMs`; with 0, only the agent for callers is checked, once. */
  start(everyMs: number): void {
    this.asksHealth = everyMs > 0;
    this.first = this.probeNow();
    if (everyMs > 0) {
      this.timer = setInterval(() => void this.probeNow(), everyMs);
      this.timer.unref();
    }
  }

  stop(): void {
    clearInterval(this.timer);
    for (const recheck of this.rechecks.splice(0)) clearTimeout(recheck);
  }

  /** OpenClaw's config file was written: probes now, and again while the gateway takes the edit. */
  edited(): void {
    for (const recheck of this.rechecks.splice(0)) clearTimeout(recheck);
    this.rechecks = RECHECKS_AFTER_EDIT_MS.map((ms) => {
      const recheck = setTimeout(() => void this.probeNow(), ms);
      recheck.unref();
      return recheck;
    });
    void this.probeNow();
  }

  /**
   * Whether callers are served as far as the bridge knows: the gateway answers (or was not asked yet) and
   * the agent for callers may be reached. `/agent/health` says `degraded` otherwise.
   */
  serving(): boolean {
    const { condition } = this.snapshot;
    return (condition === 'up' || condition === 'unknown') && !this.options.target.problem();
  }

  /** The state after the first probe (for the start banner); the current one before start. */
  checked(): Promise<GatewaySnapshot> {
    return this.first ?? Promise.resolve(this.snapshot);
  }

  /** The probe under way, if any: since when, and which requests to the gateway have not answered yet. */
  get progress(): { since: string; waitingFor: string[] } | undefined {
    const probe = this.underWay;
    if (!probe) return undefined;
    return { since: new Date(probe.since).toISOString(), waitingFor: [...probe.waiting] };
  }

  /** Probes once; concurrent callers share the probe. The operator's "Check again" comes here too. */
  probeNow(): Promise<GatewaySnapshot> {
    if (!this.running) {
      const running = this.probe().finally(() => {
        if (this.running === running) this.running = undefined;
      });
      this.running = running;
    }
    return this.running;
  }

  /** A chat call's outcome. A caller who left, or a refusal of the agent's tools, says nothing of the gateway. */
  called(outcome: GatewayOutcome): void {
    if (!outcome.ok) {
      const { problem } = outcome.error;
      if (['aborted', 'agent-exposed', 'agent-unverified', 'skill-unavailable'].includes(problem)) return;
      // The cached agent list was stale: look again (the next probe would too).
      if (problem === 'agent-unknown') this.options.target.noteUnknownAgent();
    }
    this.report(this.machine.called(outcome.ok ? { ok: true } : { ok: false, problem: text(outcome.error) }));
  }

  /** The gateway's settings changed: forget what was known, check the agent again, and probe. */
  configure(): void {
    this.generation += 1;
    this.running = undefined;
    this.report(this.machine.configure(this.options.gateway().status));
    const checked = this.options.target.reset();
    void this.options.skills?.refresh();
    if (this.asksHealth) void this.probeNow();
    else void checked.then(() => this.report(this.machine.probed(this.findings(undefined))));
  }

  private async probe(): Promise<GatewaySnapshot> {
    const resolved = this.options.gateway();
    if (resolved.status !== 'configured') return this.snapshot;
    const generation = this.generation;
    const probe = { since: (this.options.now ?? Date.now)(), waiting: new Set<string>() };
    this.underWay = probe;
    const track = <T>(request: string, answer: Promise<T>): Promise<T> => {
      probe.waiting.add(request);
      return answer.finally(() => probe.waiting.delete(request));
    };
    const [health] = await Promise.all([
      this.asksHealth ? track('GET /health', probeGateway(resolved.config)) : undefined,
      track('GET /v1/models', this.options.target.refresh()),
      this.options.skills?.refresh(),
    ]).finally(() => {
      if (this.underWay === probe) this.underWay = undefined;
    });
    // Settings changed meanwhile: this probe was of the old gateway.
    if (generation !== this.generation) return this.snapshot;
    this.report(this.machine.probed(this.findings(health)));
    return this.snapshot;
  }

  private findings(health: GatewayHealth | undefined): ProbeFindings {
    const { target } = this.options;
    const listing = target.lastListing;
    const missing = target.view.check === 'missing' ? target.problem() : undefined;
    return {
      ...(health
        ? {
            health: {
              live: health.live,
              reachable: health.reachable,
              ...(health.problem && health.diagnosis && health.fix
                ? { problem: { kind: health.problem, diagnosis: health.diagnosis, fix: health.fix } }
                : {}),
            },
          }
        : {}),
      listing: listing?.ok
        ? { ok: true }
        : {
            ok: false,
            ...(listing?.diagnosis && listing.fix
              ? {
                  problem: {
                    kind: listing.problem,
                    diagnosis: listing.diagnosis,
                    fix: listing.fix,
                  } as ProblemText,
                }
              : {}),
          },
      agent: {
        check:
          target.view.check === 'present' || target.view.check === 'missing' ? target.view.check : 'unknown',
        ...(missing ? { problem: text(missing) } : {}),
      },
    };
  }

  private report(transition: GatewayTransition | undefined): void {
    if (transition) this.options.onTransition(transition);
  }
}

function text(error: GatewayError): ProblemText {
  return { kind: error.problem, diagnosis: error.diagnosis, fix: error.fix };
}
