// Skills (issue 27): the agents an operator publishes, each on its own OpenClaw agent, each with the tools
// its callers' trust allows. The shapes the core, the console API and the renderer share.

/**
 * What a skill's OpenClaw agent can reach, from its effective tool policy (tool-class.ts):
 * - `none`: no tools;
 * - `web`: web search and fetch only, with OpenClaw's private-network protection on;
 * - `sandboxed`: shell and files only inside OpenClaw's sandbox (mode "all", workspace access none or
 *   read-only, network off unless the skill allows it);
 * - `host`: anything that reaches the operator's machine, and anything the check cannot classify.
 */
export type ToolClass = 'none' | 'web' | 'sandboxed' | 'host';

/** The classes in order of reach: a skill's class is the widest its tools need. */
export const TOOL_CLASSES: readonly ToolClass[] = ['none', 'web', 'sandboxed', 'host'];

/**
 * Who may call a skill:
 * - `public`: anyone the access policy admits (as `chat` today);
 * - `approved`: approved SAMVAD senders and A2A key holders whose scope includes the skill (an unscoped
 *   approval or key counts for every `public` and `approved` skill);
 * - `named`: only callers whose scope names the skill one by one (a scoped key, or an approved sender
 *   whose skills list names it).
 */
export type SkillAudience = 'public' | 'approved' | 'named';

/**
 * The widest class each audience may reach, whatever the operator clicks: a public skill is `none` or
 * `web`; `sandboxed` needs approved callers; `host` needs named callers and the operator's acceptance of
 * exactly the tools it has now (asked again when they change).
 */
export const WIDEST_CLASS: Readonly<Record<SkillAudience, ToolClass>> = {
  public: 'web',
  approved: 'sandboxed',
  named: 'host',
};

/** Per caller of one skill; each limit not set is the agent's per-sender default. */
export interface SkillLimits {
  requestsPerMinute?: number;
  tokensPerDay?: number;
}

/** A published skill as the operator configured it (the `skills` setting; `chat` is built in). */
export interface SkillSetting {
  /** `[a-z0-9][a-z0-9-]{0,39}`: in the cards, the SAMVAD envelope's `skill`, and the A2A paths. */
  id: string;
  /** One line, for the cards. */
  name: string;
  description: string;
  /** Sample requests, for the cards (at most 5, one line each). */
  examples: string[];
  /** The OpenClaw agent it runs on (`openclaw/<agent>`). */
  agent: string;
  audience: SkillAudience;
  limits: SkillLimits;
  /** Paused: listed nowhere, refused as an unknown skill, kept for the operator. */
  paused: boolean;
  /** `sandboxed` only: the operator lets its sandbox reach the network. */
  sandboxNetwork?: boolean;
  /** `host` only: the operator accepted this skill with exactly these tools (asked again when they change). */
  accepted?: { tools: string[]; at: string };
}

/** What the classification found for a skill's agent: its class, and the tools behind it. */
export interface ToolClassView {
  class: ToolClass;
  /** The tools the agent is offered (beyond the meta tools every agent has), sorted. */
  tools: string[];
  /** Why this class, and which settings decide it, in the operator's words. */
  detail: string;
  /** The sandbox the tools run in, when the agent has one (what `sandboxed` rests on). */
  sandbox?: { mode: string; workspaceAccess: string; network: string };
}
