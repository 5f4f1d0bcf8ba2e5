// The agent on the gateway that callers reach, and what it can do: the bridge's security boundary
// (GATEWAY.md, "Who the caller becomes on the gateway"). Checked at start, on each health probe and after a
// settings change; calls read the cached answer, never a round trip of their own.
import { isLoopbackHost } from '../protocol/index.js';
import type { GatewayAgentView, ToolExposureView } from '../protocol/console-api.js';
import { gatewayError, type GatewayError } from './diagnosis.js';
import { listGatewayAgents } from './gateway-agents.js';
import type { ResolvedGateway } from './gateway-config.js';
import { readToolExposure, restrictedAgentSnippet } from './tool-policy.js';

export interface GatewayTargetOptions {
  gateway(): ResolvedGateway;
  /** `gatewayAgent`: the OpenClaw agent id callers reach. */
  agentId(): string;
  /** An explicit model setting (a gateway that is not OpenClaw): no agent to check. */
  explicitModel(): string | undefined;
  /** OpenClaw's config file, read for the agent's tool policy when the gateway runs on this machine. */
  configPath(): string;
  now?: () => number;
  /** The view changed (the console and the tray show it). */
  onChange?(view: GatewayAgentView): void;
}

/**
 * The config that gives callers a restricted agent. Never one that restricts the operator's own default
 * agent: pointed at `main`, the fix is a separate `public` agent for callers.
 */
function snippetFor(id: string): string {
  return restrictedAgentSnippet(id === 'main' || id === 'default' ? 'public' : id);
}

/** The agent an OpenClaw model names (`openclaw` -> `default`), or undefined for another server's model. */
export function openclawAgentOf(model: string): string | undefined {
  const match = /^openclaw(?:[/:]([A-Za-z0-9._-]{1,64}))?$/.exec(model.trim());
  if (!match) return undefined;
  return match[1] ?? 'default';
}

/** The OpenClaw model that reaches agent `id`. */
export function agentModel(id: string): string {
  return `openclaw/${id}`;
}

export class GatewayTarget {
  private current: GatewayAgentView;
  private running: Promise<GatewayAgentView> | undefined;
  /** Bumped by every reset: a check started before it must not overwrite what came after. */
  private generation = 0;
  private readonly now: () => number;

  constructor(private readonly options: GatewayTargetOptions) {
    this.now = options.now ?? Date.now;
    this.current = this.initial();
  }

  get view(): GatewayAgentView {
    return this.current;
  }

  /** Settings changed: forget what was known and check again. */
  reset(): Promise<GatewayAgentView> {
    this.generation += 1;
    this.running = undefined;
    this.set(this.initial());
    return this.refresh();
  }

  /** Checks the agent list and the tool policy; concurrent callers share one check. */
  refresh(): Promise<GatewayAgentView> {
    if (!this.running) {
      const running: Promise<GatewayAgentView> = this.check(this.generation).finally(() => {
        if (this.running === running) this.running = undefined;
      });
      this.running = running;
    }
    return this.running;
  }

  /**
   * Why a chat call must not be forwarded now: the agent is missing on the gateway. Unknown (a gateway
   * without `/v1/models`, or one that did not answer) lets the call go: the gateway itself then refuses an
   * unknown agent, and never falls back to another one for a named agent.
   */
  problem(): GatewayError | undefined {
    const view = this.current;
    if (view.check !== 'missing' || !view.id) return undefined;
    return gatewayError('agent-missing', {
      url: this.options.gateway().config.url,
      agentId: view.id,
      detail: view.available?.length ? `it has ${view.available.join(', ')}` : undefined,
    });
  }

  /** A chat call was refused as naming an unknown agent: the cached answer was stale. */
  noteUnknownAgent(): void {
    if (this.current.check === 'present') this.set({ ...this.current, check: 'missing' });
    void this.refresh();
  }

  private initial(): GatewayAgentView {
    const explicit = this.options.explicitModel();
    // An explicit OpenClaw model names an agent all the same: check and classify it like gatewayAgent
    // (`openclaw` alone is the default agent, listed as `openclaw/default`).
    const named = explicit === undefined ? undefined : openclawAgentOf(explicit);
    if (explicit !== undefined && named !== undefined) {
      return {
        id: named,
        model: explicit,
        check: 'checking',
        tools: this.tools(named),
        snippet: snippetFor(named),
      };
    }
    if (explicit) {
      return {
        model: explicit,
        check: 'skipped',
        tools: {
          verdict: 'unknown',
          detail: `An explicit model ("${explicit}") is set, so the bridge cannot tell which agent or tools callers reach.`,
        },
        snippet: snippetFor(this.options.agentId()),
      };
    }
    const id = this.options.agentId();
    return {
      id,
      model: agentModel(id),
      check: 'checking',
      tools: this.tools(id),
      snippet: snippetFor(id),
    };
  }

  private async check(generation: number): Promise<GatewayAgentView> {
    const base = this.initial();
    if (base.check === 'skipped' || !base.id) {
      this.set(base);
      return base;
    }
    const resolved = this.options.gateway();
    const checkedAt = new Date(this.now()).toISOString();
    if (resolved.status !== 'configured') {
      return this.set({ ...base, check: 'unknown', checkedAt, detail: `the gateway is ${resolved.status}` });
    }
    const listing = await listGatewayAgents(resolved.config);
    // Settings may have changed while the check ran (another URL, agent or model): a stale answer is dropped.
    if (generation !== this.generation) return this.current;
    if (!listing.ok) return this.set({ ...base, check: 'unknown', checkedAt, detail: listing.detail });
    const check = listing.agents.includes(base.id) ? 'present' : 'missing';
    // `openclaw/default` is OpenClaw's alias for its default agent, listed always: not an agent of its own.
    const available = listing.agents.filter((id) => id !== 'default');
    return this.set({ ...base, check, checkedAt, available });
  }

  private tools(id: string): ToolExposureView {
    const url = this.options.gateway().config.url;
    let host = '';
    try {
      host = new URL(url).hostname;
    } catch {
      // not configured: said below
    }
    if (!isLoopbackHost(host)) {
      return {
        verdict: 'unknown',
        detail:
          "The gateway runs on another machine, so its config (and this agent's tool policy) cannot be read from here: check it there.",
      };
    }
    return readToolExposure(this.options.configPath(), id);
  }

  private set(view: GatewayAgentView): GatewayAgentView {
    const changed = JSON.stringify(view) !== JSON.stringify(this.current);
    this.current = view;
    if (changed) this.options.onChange?.(view);
    return view;
  }
}
