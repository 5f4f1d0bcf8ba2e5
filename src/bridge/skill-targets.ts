// The agents the published skills run on (issue 27, item 1): each one checked as GatewayTarget checks the
// restricted agent for `chat`: listed by the gateway (GET /v1/models, the one list the chat check asks for
// anyway), its tools classified from the gateway's config file while that file is what the gateway runs.
// Calls read the cached answer, never a round trip of their own; it is renewed at start, on each probe and
// after a change of the skills or the gateway settings, and the file is read again at the first look after
// it was written (OpenClaw hot reloads it within a second: openclaw-file-watch.ts).
import { isLoopbackHost } from '../protocol/index.js';
import type { SkillAgentCheck } from '../protocol/console-api.js';
import type { SkillSetting, ToolClassView } from '../protocol/skills.js';
import type { ClassifyAgentTools } from './exposure-class.js';
import { classifyAgentTools } from './tool-class.js';
import type { AgentListing } from './gateway-agents.js';
import type { ResolvedGateway } from './gateway-config.js';
import { agentModel, notLoaded } from './gateway-target.js';
import { readOpenClawFile, type OpenClawFile } from './openclaw-file.js';
import { declaredAgents } from './tool-policy.js';

/** What a skill needs checked: the agent it runs on, and whether its sandbox may reach the network. */
export type SkillAgent = Pick<SkillSetting, 'id' | 'agent' | 'sandboxNetwork'>;

/** A skill's agent as checked: on the gateway, and its tools. */
export interface SkillTarget {
  agent: SkillAgentCheck;
  tools: ToolClassView;
}

export interface SkillTargetsOptions {
  gateway(): ResolvedGateway;
  /** OpenClaw's config file, read for the agents' tool policies when the gateway runs on this machine. */
  configPath(): string;
  /** The gateway's agent list, freshly asked (GatewayTarget's: one GET /v1/models for both checks). */
  listing(): Promise<AgentListing | undefined>;
  /** The skills published now (paused ones too: the console shows them). */
  skills(): SkillAgent[];
  /** The config file's version (OpenClawFileWatch): a look that finds another than was read reads it again. */
  fileVersion?(): number;
  /** The classifier (tool-class.ts); until it is merged, today's exposure check as a class. */
  classify?: ClassifyAgentTools;
  now?: () => number;
  /** What a skill's agent is seen to be changed (the console shows it; calls are served or refused). */
  onChange?(): void;
}

/**
 * The config file as last read: parsed, or why not (and nothing at all for a gateway elsewhere), with its
 * version then (undefined when it is not read).
 */
type FileFacts = (
  { ok: true; config: unknown; declared?: string[] } | { ok: false; detail: string } | { remote: true }
) & { version?: number };

export class SkillTargets {
  private file: FileFacts | undefined;
  private listing: AgentListing | undefined;
  private checkedAt: string | undefined;
  /** Bumped at every new reading of the file or the list: cached answers older than it are stale. */
  private version = 0;
  private readonly cache = new Map<string, { key: string; version: number; target: SkillTarget }>();
  private running: Promise<void> | undefined;
  private readonly classify: ClassifyAgentTools;
  private readonly now: () => number;

  constructor(private readonly options: SkillTargetsOptions) {
    this.classify = options.classify ?? classifyAgentTools;
    this.now = options.now ?? Date.now;
  }

  /**
   * The skill's agent as last checked: its tools from the file read then (read now for an agent not
   * classified yet, so a new skill has its class at once), its presence from the last agent list.
   */
  target(skill: SkillAgent): SkillTarget {
    if (!this.file) this.file = this.readFile();
    else if (this.file.version !== undefined && this.options.fileVersion?.() !== this.file.version) {
      this.reread();
    }
    return this.cached(skill);
  }

  private cached(skill: SkillAgent): SkillTarget {
    const key = `${skill.agent}\n${skill.sandboxNetwork === true}`;
    const cached = this.cache.get(skill.id);
    if (cached && cached.key === key && cached.version === this.version) return cached.target;
    const target = this.check(skill);
    this.cache.set(skill.id, { key, version: this.version, target });
    return target;
  }

  /**
   * The skill's agent with its config file read now (a change the operator makes is judged on the file as
   * it is): every skill's cached answer is renewed from this reading.
   */
  fresh(skill: SkillAgent): SkillTarget {
    this.file = this.readFile();
    this.version += 1;
    return this.target(skill);
  }

  /** Reads the file and asks the gateway's agent list again; concurrent callers share one check. */
  refresh(): Promise<void> {
    this.running ??= this.renew().finally(() => (this.running = undefined));
    return this.running;
  }

  /**
   * The file was written since it was read: every skill is judged on it from now, against the agent list as
   * last asked (an edit that adds or removes agents leaves them unverified until the list is asked again).
   */
  private reread(): void {
    const skills = this.options.skills();
    const before = JSON.stringify(skills.map((skill) => this.cached(skill)));
    this.file = this.readFile();
    this.version += 1;
    const after = JSON.stringify(skills.map((skill) => this.cached(skill)));
    if (after !== before) this.options.onChange?.();
  }

  /** A skill's call named an agent the gateway does not know: the cached answer was stale. */
  noteUnknownAgent(): void {
    void this.refresh();
  }

  /** `always`: ask the gateway's list even with no skill published (a new skill's check). */
  private async renew(always = false): Promise<void> {
    const skills = this.options.skills();
    this.file ??= this.readFile();
    const before = JSON.stringify(skills.map((skill) => this.cached(skill)));
    // The file first, at once: tools it no longer allows stop serving before the list comes back.
    this.file = this.readFile();
    this.version += 1;
    const listing = skills.length > 0 || always ? await this.options.listing() : undefined;
    this.file = this.readFile();
    this.listing = listing;
    this.checkedAt = new Date(this.now()).toISOString();
    this.version += 1;
    for (const id of this.cache.keys()) if (!skills.some((skill) => skill.id === id)) this.cache.delete(id);
    const after = JSON.stringify(this.options.skills().map((skill) => this.cached(skill)));
    if (after !== before) this.options.onChange?.();
  }

  /**
   * A skill's agent checked now, for a skill not saved yet ("Check again" once the operator merged its
   * snippet): the gateway's agent list asked and the config file read afresh, as for every skill (the
   * skill the operator then adds is judged on what this check saw).
   */
  async checkNow(skill: Omit<SkillAgent, 'id'>): Promise<SkillTarget> {
    await this.renew(true);
    return this.check({ id: '', ...skill });
  }

  /**
   * The OpenClaw config file as the skills' checks read it: parsed, or why not; nothing for a gateway on
   * another machine (its file is not this one).
   */
  readConfig(): { remote: true } | OpenClawFile {
    let hostname = '';
    try {
      hostname = new URL(this.options.gateway().config.url).hostname;
    } catch {
      // not configured: said elsewhere
    }
    if (!isLoopbackHost(hostname)) return { remote: true };
    return readOpenClawFile(this.options.configPath());
  }

  private check(skill: SkillAgent): SkillTarget {
    const { agent } = skill;
    const listing = this.listing;
    const view: SkillAgentCheck = { agent, model: agentModel(agent), check: 'checking' };
    if (this.checkedAt) {
      view.checkedAt = this.checkedAt;
      if (listing?.ok) {
        view.check = listing.agents.includes(agent) ? 'present' : 'missing';
        view.available = listing.agents.filter((id) => id !== 'default');
      } else {
        // Unknown lets calls go, as for chat: the gateway itself refuses an agent it does not have.
        view.check = 'unknown';
        view.detail =
          listing?.detail ??
          'the gateway was not asked for its agents (it is not configured, or an explicit model is set)';
      }
    }
    const file = this.file ?? { remote: true };
    if ('remote' in file) {
      return {
        agent: view,
        tools: host(
          `The gateway runs on another machine, so the tools of agent "${agent}" cannot be read from here: check them there.`,
        ),
      };
    }
    if (!file.ok)
      return { agent: view, tools: host(`${file.detail}, so the tools of agent "${agent}" cannot be read.`) };
    // The file counts only while it is what the gateway runs: its agents must be the ones the gateway lists.
    const differences =
      file.declared && view.available && listing?.ok ? notLoaded(file.declared, view.available) : undefined;
    if (differences) {
      view.notLoaded = differences;
      return {
        agent: view,
        tools: host(
          `OpenClaw has not loaded its config file (${differences}), so the tools of agent "${agent}" cannot be read from it.`,
        ),
      };
    }
    return { agent: view, tools: this.classified(file.config, skill) };
  }

  private classified(config: unknown, skill: SkillAgent): ToolClassView {
    try {
      return this.classify(config, skill.agent, { sandboxNetwork: skill.sandboxNetwork === true });
    } catch (error) {
      // A classifier's bug must not open a skill: what cannot be told is host.
      return host(
        `The tools of agent "${skill.agent}" could not be classified (${(error as Error).message}).`,
      );
    }
  }

  private readFile(): FileFacts {
    // Taken before the file is read: a write in between makes the next look read it again.
    const version = this.options.fileVersion?.();
    const file = this.readConfig();
    if ('remote' in file) return file;
    if (!file.ok) return { ok: false, detail: file.detail, version };
    const declared = declaredAgents(file.config);
    return { ok: true, config: file.config, ...(declared ? { declared } : {}), version };
  }
}

/** What cannot be told is `host`: it serves named callers only, once the operator accepted it. */
function host(detail: string): ToolClassView {
  return { class: 'host', tools: [], detail: `${detail} Until it can be, the skill counts as host.` };
}
