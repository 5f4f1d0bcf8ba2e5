// The agent on the gateway that callers reach, and what it can do: the bridge's security boundary
// (GATEWAY.md, "Who the caller becomes on the gateway"). Checked at start, on each health probe and after a
// settings change; calls read the cached answer, never a round trip of their own. The config file is what
// OpenClaw hot reloads within a second, so an edit of it counts from the next look (openclaw-file-watch.ts).
//
// Callers are served only by an agent that exists, whose tools are known not to reach the operator's
// machine or that the operator accepted with exactly the tools it has now (threat: a stranger driving the
// operator's shell, files or identity, issue 15 finding 9). The tool policy is read from the config file,
// so it counts only while the file is what the gateway runs: its agents must be the ones it lists.
import { isLoopbackHost } from '../protocol/index.js';
import type { AcceptedExposedAgent, GatewayAgentView, ToolExposureView } from '../protocol/console-api.js';
import { restrictedAgentSnippet, rosterFacts } from './agent-snippet.js';
import { gatewayError, type GatewayError } from './diagnosis.js';
import { listGatewayAgents, type AgentListing } from './gateway-agents.js';
import type { ResolvedGateway } from './gateway-config.js';
import { readOpenClawFile } from './openclaw-file.js';
import { classifyToolPolicy, declaredAgents, exposureOfFile } from './tool-policy.js';

export interface GatewayTargetOptions {
  gateway(): ResolvedGateway;
  /** `gatewayAgent`: the OpenClaw agent id callers reach. */
  agentId(): string;
  /** An explicit model setting (a gateway that is not OpenClaw): no agent to check. */
  explicitModel(): string | undefined;
  /** OpenClaw's config file, read for the agent's tool policy when the gateway runs on this machine. */
  configPath(): string;
  /** The agent that exposes host tools the operator accepted for callers, and with which tools. */
  accepted?(): AcceptedExposedAgent | undefined;
  /** The config file's version (OpenClawFileWatch): a look that finds another than was read reads it again. */
  fileVersion?(): number;
  now?: () => number;
  /** The view changed (the console and the tray show it). */
  onChange?(view: GatewayAgentView): void;
}

/**
 * The agent a restricted-agent snippet configures. Never one that restricts the operator's own default
 * agent: pointed at `main`, the fix is a separate `public` agent for callers.
 */
function snippetTarget(id: string): string {
  return id === 'main' || id === 'default' ? 'public' : id;
}

/** What the config file says about an agent: its tools, the snippet that fits, the agents it declares. */
interface FileFacts {
  tools: ToolExposureView;
  snippet: string;
  /** Undefined when the file was not read (a remote gateway, no file). */
  agents?: string[];
  /** The file's version when it was read (undefined when it was not: a remote gateway). */
  version?: number;
}

/** What a check found of the agent on the gateway. */
type Found = { id: string } & Pick<GatewayAgentView, 'check' | 'checkedAt' | 'available' | 'detail'>;

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
  private listing: AgentListing | undefined;
  /** What the last check found of the agent on the gateway (undefined before it, or after a reset). */
  private found: Found | undefined;
  /** The file's version the view was judged on (undefined when it was not read: a gateway elsewhere). */
  private judgedOn: number | undefined;
  private readonly now: () => number;

  constructor(private readonly options: GatewayTargetOptions) {
    this.now = options.now ?? Date.now;
    const { view, version } = this.described();
    this.current = view;
    this.judgedOn = version;
  }

  get view(): GatewayAgentView {
    // The file was written since it was read: judged on it now, against the agent list as last asked (an
    // edit that adds or removes agents leaves the tools unknown until the list is asked again).
    if (this.judgedOn !== undefined && this.options.fileVersion?.() !== this.judgedOn) this.judge();
    return this.current;
  }

  /** Settings changed: forget what was known and check again. */
  reset(): Promise<GatewayAgentView> {
    this.generation += 1;
    this.running = undefined;
    this.found = undefined;
    this.judge();
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

  /** The last answer of GET /v1/models (undefined before the first, or without a check to make). */
  get lastListing(): AgentListing | undefined {
    return this.listing;
  }

  /**
   * Why a chat call must not be forwarded now: the agent is missing, exposes host tools the operator has not
   * accepted, or its config file is not what the gateway runs. Unknown (a gateway without `/v1/models`, one
   * that did not answer, a remote gateway) lets the call go: the gateway itself then refuses an unknown agent,
   * and never falls back to another one for a named agent.
   */
  problem(): GatewayError | undefined {
    const view = this.view;
    const refusal = refusalOf(view);
    if (!refusal) return undefined;
    const url = this.options.gateway().config.url;
    return gatewayError(refusal.problem, { url, agentId: view.id ?? view.model, detail: refusal.detail });
  }

  /**
   * The acceptance to record for `agent` with `tools`, when they are exactly what callers reach now;
   * undefined when the operator saw something else (the tools changed since, or the agent).
   */
  acceptance(agent: string, tools: string[]): AcceptedExposedAgent | undefined {
    const view = this.view;
    if (view.tools.verdict !== 'exposes-host-tools' || (view.id ?? view.model) !== agent) return undefined;
    if (!sameTools(view.tools.tools, tools)) return undefined;
    return { agent, tools: [...view.tools.tools], at: new Date(this.now()).toISOString() };
  }

  /** The operator accepted (or withdrew) an exposing agent: callers are served, or refused, from now. */
  acceptanceChanged(): void {
    this.set(this.current);
  }

  /** A chat call was refused as naming an unknown agent: the cached answer was stale. */
  noteUnknownAgent(): void {
    if (this.found?.check === 'present') this.found = { ...this.found, check: 'missing' };
    if (this.current.check === 'present') this.set({ ...this.current, check: 'missing' });
    void this.refresh();
  }

  /** The view before the gateway's agent list is asked, and what the config file declares. */
  private described(): { view: GatewayAgentView; agents?: string[]; version?: number } {
    const explicit = this.options.explicitModel();
    // An explicit OpenClaw model names an agent all the same: check and classify it like gatewayAgent
    // (`openclaw` alone is the default agent, listed as `openclaw/default`).
    const named = explicit === undefined ? undefined : openclawAgentOf(explicit);
    if (explicit && named === undefined) {
      const { snippet, version } = this.fromFile(this.options.agentId());
      return {
        view: {
          model: explicit,
          check: 'skipped',
          tools: {
            verdict: 'unknown',
            detail: `An explicit model ("${explicit}") is set, so the bridge cannot tell which agent or tools callers reach.`,
          },
          snippet,
        },
        ...(version === undefined ? {} : { version }),
      };
    }
    const id = named ?? this.options.agentId();
    const model = named !== undefined && explicit ? explicit : agentModel(id);
    const { tools, snippet, agents, version } = this.fromFile(id);
    return {
      view: { id, model, check: 'checking', tools, snippet },
      ...(agents ? { agents } : {}),
      ...(version === undefined ? {} : { version }),
    };
  }

  private async check(generation: number): Promise<GatewayAgentView> {
    const { view: base } = this.described();
    const id = base.id;
    if (base.check === 'skipped' || !id) {
      this.listing = undefined;
      this.found = undefined;
      return this.judge();
    }
    const resolved = this.options.gateway();
    const checkedAt = new Date(this.now()).toISOString();
    if (resolved.status !== 'configured') {
      this.listing = undefined;
      this.found = { id, check: 'unknown', checkedAt, detail: `the gateway is ${resolved.status}` };
      return this.judge();
    }
    const listing = await listGatewayAgents(resolved.config);
    // Settings may have changed while the check ran (another URL, agent or model): a stale answer is dropped.
    if (generation !== this.generation) return this.current;
    this.listing = listing;
    this.found = listing.ok
      ? {
          id,
          check: listing.agents.includes(id) ? 'present' : 'missing',
          checkedAt,
          // `openclaw/default` is OpenClaw's alias for its default agent, listed always: not an agent of its own.
          available: listing.agents.filter((agent) => agent !== 'default'),
        }
      : { id, check: 'unknown', checkedAt, detail: listing.detail };
    // The file as it is now: an edit made while the list was asked is what the gateway may run.
    return this.judge();
  }

  /** The view from the config file as it is now and the agent as the last check found it; callers follow it. */
  private judge(): GatewayAgentView {
    const { view: base, agents: declared, version } = this.described();
    this.judgedOn = version;
    const found = this.found;
    if (base.check === 'skipped' || !found || found.id !== base.id) return this.set(base);
    const { id: _id, ...seen } = found;
    const tools =
      declared && found.available ? runningVerdict(base.tools, declared, found.available) : base.tools;
    return this.set({ ...base, ...seen, tools });
  }

  /** The tool policy and the snippet from OpenClaw's config file, when the gateway runs on this machine. */
  private fromFile(id: string): FileFacts {
    const target = snippetTarget(id);
    let host = '';
    try {
      host = new URL(this.options.gateway().config.url).hostname;
    } catch {
      // not configured: said elsewhere
    }
    if (!isLoopbackHost(host)) {
      return {
        tools: {
          verdict: 'unknown',
          detail:
            "The gateway runs on another machine, so its config (and this agent's tool policy) cannot be read from here: check it there.",
        },
        snippet: restrictedAgentSnippet(target),
      };
    }
    // Taken before the file is read: a write in between makes the next look read it again.
    const version = this.options.fileVersion?.();
    const at = version === undefined ? {} : { version };
    const file = readOpenClawFile(this.options.configPath());
    if (!file.ok) return { tools: exposureOfFile(file, id), snippet: restrictedAgentSnippet(target), ...at };
    const agents = declaredAgents(file.config);
    return {
      tools: classifyToolPolicy(file.config, id),
      snippet: restrictedAgentSnippet(target, rosterFacts(file.config)),
      ...(agents ? { agents } : {}),
      ...at,
    };
  }

  private set(described: GatewayAgentView): GatewayAgentView {
    const view = this.withAcceptance(described);
    const changed = JSON.stringify(view) !== JSON.stringify(this.current);
    this.current = view;
    if (changed) this.options.onChange?.(view);
    return view;
  }

  private withAcceptance(described: GatewayAgentView): GatewayAgentView {
    const { acceptance: _old, ...view } = described;
    const acceptance = acceptanceOf(view, this.options.accepted?.());
    return acceptance ? { ...view, acceptance } : view;
  }
}

/** Why callers may not reach the agent as it is seen now, or undefined when they may. */
export function refusalOf(
  view: GatewayAgentView,
): { problem: 'agent-missing' | 'agent-unverified' | 'agent-exposed'; detail?: string } | undefined {
  if (view.check === 'missing' && view.id) {
    return {
      problem: 'agent-missing',
      ...(view.available?.length ? { detail: `it has ${view.available.join(', ')}` } : {}),
    };
  }
  if (view.tools.verdict === 'unknown' && view.tools.notLoaded)
    return { problem: 'agent-unverified', detail: view.tools.notLoaded };
  if (view.tools.verdict === 'exposes-host-tools' && view.acceptance?.state !== 'accepted')
    return { problem: 'agent-exposed', detail: view.tools.tools.join(', ') };
  return undefined;
}

/**
 * Whether the operator accepted this exposing agent with exactly these tools; any change of agent or tools
 * asks again. Undefined for an agent that does not expose host tools.
 */
export function acceptanceOf(
  view: Pick<GatewayAgentView, 'id' | 'model' | 'tools'>,
  accepted: AcceptedExposedAgent | undefined,
): GatewayAgentView['acceptance'] {
  if (view.tools.verdict !== 'exposes-host-tools') return undefined;
  if (!accepted || accepted.agent !== (view.id ?? view.model)) return { state: 'needed' };
  if (sameTools(accepted.tools, view.tools.tools)) return { state: 'accepted', at: accepted.at };
  return { state: 'changed', tools: accepted.tools, at: accepted.at };
}

/**
 * The file's verdict, as long as the file is what the gateway runs: every agent it declares is listed by
 * the gateway and no other. Otherwise OpenClaw refused to load it (an invalid edit keeps the last good
 * config running), and its tool policy says nothing about what callers reach.
 */
export function runningVerdict(
  tools: ToolExposureView,
  declared: string[],
  listed: string[],
): ToolExposureView {
  const differences = notLoaded(declared, listed);
  if (differences === undefined) return tools;
  return {
    verdict: 'unknown',
    notLoaded: differences,
    detail: `OpenClaw has not loaded its config file (${differences}), so the tools callers would reach cannot be read from it. Run openclaw config validate where the gateway runs and fix what it reports: the gateway reloads a valid file by itself.`,
  };
}

/**
 * How the agents the config file declares differ from those the gateway lists (`listed`: without OpenClaw's
 * `default` alias), or undefined when they are the same: then the file is what the gateway runs.
 */
export function notLoaded(declared: string[], listed: string[]): string | undefined {
  const notRunning = declared.filter((id) => !listed.includes(id));
  const notInFile = listed.filter((id) => !declared.includes(id));
  if (notRunning.length === 0 && notInFile.length === 0) return undefined;
  return [
    ...(notRunning.length > 0 ? [`the file has ${quoted(notRunning)}, which the gateway does not run`] : []),
    ...(notInFile.length > 0 ? [`the gateway runs ${quoted(notInFile)}, which the file lacks`] : []),
  ].join('; ');
}

function quoted(ids: string[]): string {
  return ids.map((id) => `"${id}"`).join(', ');
}

export function sameTools(a: readonly string[], b: readonly string[]): boolean {
  const left = [...new Set(a)].sort();
  const right = [...new Set(b)].sort();
  return left.length === right.length && left.every((tool, i) => tool === right[i]);
}
