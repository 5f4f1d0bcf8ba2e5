// The OpenClaw config the console proposes for a new skill's agent (issue 27, item 4), from a template: an
// agent whose tools are exactly its class's, that OpenClaw 2026.9 accepts by hot reload once merged into the
// operator's `openclaw.json` (the roster rules of agent-snippet.ts), and that tool-class.ts classifies as
// the class the template names. Checked against a running 2026.9.6 in test/openclaw/skill-classes.test.ts.
import type { SandboxBackend, SkillTemplate } from '../protocol/skill-templates.js';
import { rosterSnippet, STOCK_ROSTER, type RosterFacts } from './agent-snippet.js';

// The templates themselves are data the renderer shares.
export { SKILL_TEMPLATES, type SkillTemplate, type SkillTemplateInfo } from '../protocol/skill-templates.js';

export interface SkillSnippetOptions {
  /** `sandboxed`: the container runtime (default `docker`; `podman` for rootless hosts without Docker). */
  backend?: SandboxBackend;
  /** `sandboxed`: let the container reach the network (Docker's `bridge`); default no network. */
  sandboxNetwork?: boolean;
}

/** The tools each template's agent is offered, in the order its snippet lists them. */
export const RESEARCH_TOOLS: readonly string[] = ['web_search', 'web_fetch'];
export const SANDBOXED_HELPER_TOOLS: readonly string[] = [
  'exec',
  'process',
  'ls',
  'read',
  'write',
  'edit',
  'apply_patch',
];

/**
 * A JSON5 block that adds agent `agentId` for a skill from `template` to the roster described by `roster`.
 * Each agent names its tools in an allowlist (anything else, also tools a later OpenClaw adds, is not
 * offered), takes the `coding` profile so a narrower global profile does not leave it with none (OpenClaw
 * then refuses the run), and turns Code Mode off (its "auto" default adds a JavaScript exec on the host).
 */
export function skillAgentSnippet(
  template: Exclude<SkillTemplate, 'custom'>,
  agentId: string,
  roster: RosterFacts = STOCK_ROSTER,
  options: SkillSnippetOptions = {},
): string {
  const entry = template === 'research' ? researchEntry(roster) : sandboxedEntry(options);
  return rosterSnippet(agentId, roster, (id, adds) => [
    ...(adds ? [`        workspace: "~/.openclaw/workspace-${id}",`] : []),
    ...entry,
  ]);
}

function researchEntry(roster: RosterFacts): string[] {
  // A fleet-wide sandbox would put this agent's sessions in one, whose default tool policy has no web tools.
  const fleetSandbox = roster.sandboxMode !== undefined && roster.sandboxMode !== 'off';
  return [
    ...(fleetSandbox
      ? [
          "        // Web tools run in the gateway, sandbox or not; the fleet's sandbox would only take them away.",
          '        sandbox: { mode: "off" },',
        ]
      : []),
    '        // web_fetch stays off your own network while tools.web.fetch.ssrfPolicy opens no private address.',
    '        tools: {',
    '          profile: "coding", // holds them; the allowlist keeps only these',
    `          allow: [${list(RESEARCH_TOOLS)}],`,
    '          // Code Mode is "auto" when unset: on some models it adds a JavaScript exec that no deny removes.',
    '          codeMode: false,',
    '        },',
  ];
}

function sandboxedEntry(options: SkillSnippetOptions): string[] {
  const backend = options.backend ?? 'docker';
  const network = options.sandboxNetwork ? 'bridge' : 'none';
  return [
    `        // Needs ${backend === 'podman' ? 'Podman' : 'Docker'} and the image openclaw-sandbox:bookworm-slim (OpenClaw's docs: Sandboxing, Images and setup).`,
    '        sandbox: {',
    '          mode: "all", // every session of this agent, also the ones callers start',
    `          backend: "${backend}",`,
    '          scope: "agent",',
    '          workspaceAccess: "none", // a workspace of its own, none of your files',
    `          docker: { network: "${network}" },${options.sandboxNetwork ? ' // the skill allows the network' : ''}`,
    '        },',
    '        tools: {',
    '          profile: "coding", // holds them; the allowlist keeps only these',
    `          allow: [${list(SANDBOXED_HELPER_TOOLS)}],`,
    '          elevated: { enabled: false }, // no /elevated escape to this machine',
    '          exec: { host: "sandbox" }, // fails rather than run on this machine',
    '          // Code Mode is "auto" when unset: on some models it adds a JavaScript exec that no deny removes.',
    '          codeMode: false,',
    '        },',
  ];
}

function list(tools: readonly string[]): string {
  return tools.map((tool) => `"${tool}"`).join(', ');
}
