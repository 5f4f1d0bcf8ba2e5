// The templates a new skill's agent starts from (issue 27, item 4): what the console offers, and the class
// each one's snippet gives its agent (src/bridge/skill-snippet.ts writes the snippets). Pure data, shared
// with the renderer.
import type { ToolClass } from './skills.js';

/** The templates a new skill starts from; `custom` points at an agent the operator has (no snippet). */
export type SkillTemplate = 'research' | 'sandboxed' | 'custom';

/** The container runtime a sandboxed helper's snippet names. */
export type SandboxBackend = 'docker' | 'podman';

export interface SkillTemplateInfo {
  id: SkillTemplate;
  name: string;
  /** The class its agent has once the snippet is merged; `custom` is whatever its agent classifies as. */
  toolClass?: ToolClass;
  /** What it gives callers, for the console. */
  summary: string;
}

export const SKILL_TEMPLATES: readonly SkillTemplateInfo[] = [
  {
    id: 'research',
    name: 'Research (web search and fetch)',
    toolClass: 'web',
    summary:
      "A new agent offered web_search and web_fetch and nothing else: it searches with the gateway's configured provider and reads public pages; OpenClaw's private-network guard keeps it off your own network.",
  },
  {
    id: 'sandboxed',
    name: 'Sandboxed helper (shell in a container)',
    toolClass: 'sandboxed',
    summary:
      'A new agent whose shell and file tools run only in a Docker or Podman container OpenClaw starts for it: no network, none of your files, no way to run commands outside it.',
  },
  {
    id: 'custom',
    name: 'Custom: an existing agent',
    summary:
      'An agent you already have, as it is: its class is read from your OpenClaw config, and a host class needs your acceptance.',
  },
];
