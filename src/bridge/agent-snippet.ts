// The config the console hands the operator to give callers a restricted agent. It must be one OpenClaw
// 2026.9 accepts by hot reload when merged into the operator's `openclaw.json`: its schema refuses a roster
// of two or more agents without `agents.ownership: "explicit"` (dist zod-schema, AgentsSchema). An explicit
// roster also changes who owns what, so the snippet says what `openclaw agents add` writes for a second
// agent: the agent the operator had keeps its workspace (else it moves to `<workspace>/<id>`) and stays the
// system agent, the heartbeat owner and the Talk owner (else heartbeats stop and unbound channels lose
// their agent). Checked against a running 2026.9.6 in test/openclaw/.
import { configuredAgents, CORE_TOOLS, normalizeAgentId, SAFE_TOOLS } from './tool-policy.js';

/** What the roster in the operator's file asks of the snippet; STOCK_ROSTER when it cannot be read. */
export interface RosterFacts {
  /** The agents the file declares (the implicit "main" when it lists none). */
  agents: string[];
  /** Already valid with several agents (`ownership: "explicit"` or one legacy `default: true`). */
  multiAgentReady: boolean;
  /** The workspace the sole agent uses now, when the file says; else OpenClaw's default folder. */
  workspace?: string;
  /** Owners the file names already (left as they are). */
  systemAgent: boolean;
  heartbeat: boolean;
  talk: boolean;
  /** The fleet's sandbox mode (`agents.defaults.sandbox.mode`), when the file sets one. */
  sandboxMode?: string;
}

/** A stock local config: the implicit "main", no roster, no owners. */
export const STOCK_ROSTER: RosterFacts = {
  agents: ['main'],
  multiAgentReady: false,
  systemAgent: false,
  heartbeat: false,
  talk: false,
};

const DEFAULT_WORKSPACE = '~/.openclaw/workspace';

/** The facts the snippet depends on, from a parsed `openclaw.json`. */
export function rosterFacts(config: unknown): RosterFacts {
  const root = object(config);
  const agents = object(root.agents);
  const defaults = object(agents.defaults);
  const entries = Object.values(object(agents.entries)).map(object);
  const listed = configuredAgents(config);
  const marked = entries.filter((entry) => entry.default === true).length;
  // The sole agent's own workspace, else the fleet default it inherits (OpenClaw's data-owner rule).
  const sole = listed.length === 1 ? (entries[0] ?? {}) : {};
  const workspace = text(sole.workspace) ?? text(defaults.workspace);
  const sandboxMode = text(object(defaults.sandbox).mode);
  return {
    agents: listed.length > 0 ? listed : ['main'],
    multiAgentReady: agents.ownership === 'explicit' || marked === 1,
    ...(workspace ? { workspace } : {}),
    systemAgent: text(object(defaults.systemAgent).agentId) !== undefined,
    heartbeat:
      text(object(defaults.heartbeat).agentId) !== undefined ||
      entries.some((e) => e.heartbeat !== undefined),
    talk: text(object(root.talk).agentId) !== undefined,
    ...(sandboxMode ? { sandboxMode } : {}),
  };
}

/**
 * A JSON5 block that adds a restricted agent `agentId` to the roster described by `roster`: OpenClaw's
 * "public agent" shape, denying every tool (by its current name, and `*` for any a later release adds),
 * plugin and MCP tools, with Code Mode off; plus what this OpenClaw needs to accept a second agent.
 */
export function restrictedAgentSnippet(agentId: string, roster: RosterFacts = STOCK_ROSTER): string {
  const names = CORE_TOOLS.filter((tool) => !SAFE_TOOLS.includes(tool));
  const deny = chunks([...names, 'group:plugins', 'bundle-mcp'], 5).map(
    (line) => `            ${line.map((n) => `"${n}"`).join(', ')},`,
  );
  return rosterSnippet(agentId, roster, (id, adds) => [
    // An agent the roster has keeps its workspace: only its tools change.
    ...(adds ? [`        workspace: "~/.openclaw/workspace-${id}",`] : []),
    '        tools: {',
    '          profile: "minimal",',
    '          deny: [',
    '            "*", // every tool, also any a later OpenClaw adds; by name:',
    ...deny,
    '          ],',
    '          // Code Mode is "auto" when unset: on some models it adds a JavaScript exec that no deny removes.',
    '          codeMode: false,',
    '        },',
  ]);
}

/**
 * A JSON5 block that puts agent `agentId`, whose entry's lines `entry` gives (indented for
 * `agents.entries.<id>`, knowing whether the roster lacks it), into the roster described by `roster`, with
 * what this OpenClaw needs to accept a second agent and what keeps the operator's first agent as it was.
 */
export function rosterSnippet(
  agentId: string,
  roster: RosterFacts,
  entry: (id: string, adds: boolean) => string[],
): string {
  const id = normalizeAgentId(agentId);
  const adds = !roster.agents.includes(id);
  // Adding a second agent to a single-agent roster: make it explicit and keep what the first one had.
  const owner = adds && !roster.multiAgentReady && roster.agents.length === 1 ? roster.agents[0] : undefined;
  const explicit = !roster.multiAgentReady && roster.agents.length + (adds ? 1 : 0) > 1;
  const defaults = owner
    ? [
        ...(roster.systemAgent ? [] : [`      systemAgent: { agentId: "${owner}" },`]),
        ...(roster.heartbeat ? [] : [`      heartbeat: { agentId: "${owner}" },`]),
      ]
    : [];
  return [
    ...intro(owner, explicit),
    '{',
    '  agents: {',
    ...(explicit ? ['    ownership: "explicit",'] : []),
    ...(defaults.length > 0 ? ['    defaults: {', ...defaults, '    },'] : []),
    '    entries: {',
    ...(owner
      ? [
          `      // Your agent "${owner}" keeps the folder it uses now.`,
          `      ${key(owner)}: { workspace: "${roster.workspace ?? DEFAULT_WORKSPACE}" },`,
        ]
      : []),
    `      ${key(id)}: {`,
    ...entry(id, adds),
    '      },',
    '    },',
    '  },',
    ...(owner && !roster.talk ? [`  talk: { agentId: "${owner}" },`] : []),
    '}',
  ].join('\n');
}

function intro(owner: string | undefined, explicit: boolean): string[] {
  const merge =
    '// Merge into ~/.openclaw/openclaw.json, keeping what it has; the gateway applies it without a restart.';
  if (!owner && explicit) {
    return [merge, '// Several agents need an explicit roster; `openclaw doctor` names what each one owns.'];
  }
  if (!owner) return [merge];
  return [
    merge,
    `// A second agent makes the roster explicit, as \`openclaw agents add\` does: "${owner}" keeps its workspace and`,
    '// stays the agent of your channels, heartbeats and the CLI.',
  ];
}

function key(id: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(id) ? id : `"${id}"`;
}

function object(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}
