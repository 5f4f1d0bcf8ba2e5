// The tool class of a skill's agent (issue 27, item 2), from OpenClaw's config: the docs' own examples
// (docs/tools/multi-agent-sandbox-tools.md, docs/tools/web-fetch.md, docs/gateway/config-agents/sandbox.md)
// and the traps that must not pass for a narrower class. Expectations are written out by hand from OpenClaw
// 2026.9.6's docs and compiled code, never taken from the module under test.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyAgentTools, readToolClass } from '../../src/bridge/tool-class.js';
import { classifyToolPolicy } from '../../src/bridge/tool-policy.js';
import type { ToolClass } from '../../src/protocol/skills.js';

type Entry = Record<string, unknown>;

/** `main` and the skill's agent `skill`, an explicit roster, global tools as given (Code Mode off). */
function fleet(skill: Entry, tools: Entry = {}, defaults: Entry = {}): Entry {
  return {
    tools: { codeMode: false, ...tools },
    agents: { ownership: 'explicit', defaults, entries: { main: {}, skill } },
  };
}
/** The skill agent with its tools merged over `base`'s. */
function withTools(base: Entry, tools: Entry): Entry {
  return { ...base, tools: { ...(base.tools as Entry), ...tools } };
}
function withSandbox(base: Entry, sandbox: Entry): Entry {
  return { ...base, sandbox: { ...(base.sandbox as Entry), ...sandbox } };
}

// A research agent: web search and fetch only.
const WEB: Entry = { tools: { allow: ['web_search', 'web_fetch'] } };
// A helper whose shell and files run in a container: every session sandboxed, nothing of the host seen, no
// network, elevated exec off and exec kept in the sandbox.
const SHELL = ['exec', 'process', 'ls', 'read', 'write', 'edit', 'apply_patch'];
const SANDBOXED: Entry = {
  sandbox: { mode: 'all', scope: 'agent', workspaceAccess: 'none', docker: { network: 'none' } },
  tools: { allow: SHELL, elevated: { enabled: false } },
};
const SHELL_SORTED = [...SHELL].sort();
// docs/tools/multi-agent-sandbox-tools.md, example 1. Its prose says "read and message"; the sandbox tool
// policy's defaults (dist constants DEFAULT_TOOL_ALLOW) have no message, so a sandboxed session loses it.
const FAMILY: Entry = {
  workspace: '~/.openclaw/workspace-family',
  sandbox: { mode: 'all', scope: 'agent' },
  tools: {
    allow: ['read', 'message'],
    deny: ['exec', 'write', 'edit', 'apply_patch', 'process', 'browser'],
  },
};
const WEB_PAIR = ['web_fetch', 'web_search'];

interface Case {
  name: string;
  config: unknown;
  class: ToolClass;
  tools: string[];
  /** Text the detail must name (the deciding setting). */
  names?: string[];
  sandboxNetwork?: boolean;
  agent?: string;
}

const cases: Case[] = [
  // none
  {
    name: "the console's restricted agent (deny *)",
    config: fleet({ tools: { profile: 'minimal', deny: ['*'] } }),
    class: 'none',
    tools: [],
  },
  {
    name: 'only a safe tool',
    config: fleet({ tools: { allow: ['sessions_yield'] } }),
    class: 'none',
    tools: [],
  },
  {
    name: 'web search and fetch both switched off',
    config: fleet(WEB, { web: { search: { enabled: false }, fetch: { enabled: false } } }),
    class: 'none',
    tools: [],
  },

  // web
  { name: 'allow web_search and web_fetch', config: fleet(WEB), class: 'web', tools: WEB_PAIR },
  {
    name: "web-fetch.md's allowlist: allow web_fetch",
    config: fleet({ tools: { allow: ['web_fetch'] } }),
    class: 'web',
    tools: ['web_fetch'],
  },
  {
    name: 'allow group:web: x_search too (a search on xAI, nothing local)',
    config: fleet({ tools: { allow: ['group:web'] } }),
    class: 'web',
    tools: ['web_fetch', 'web_search', 'x_search'],
  },
  {
    name: 'blockedHostnames only narrows the guard',
    config: fleet(WEB, { web: { fetch: { ssrfPolicy: { blockedHostnames: ['*.ads.example.com'] } } } }),
    class: 'web',
    tools: WEB_PAIR,
  },
  {
    name: 'tools.web.fetch.enabled false leaves web_search',
    config: fleet(WEB, { web: { fetch: { enabled: false } } }),
    class: 'web',
    tools: ['web_search'],
  },
  {
    name: 'an opened fetch guard does not matter without web_fetch',
    config: fleet(
      { tools: { allow: ['web_search'] } },
      { web: { fetch: { ssrfPolicy: { dangerouslyAllowPrivateNetwork: true } } } },
    ),
    class: 'web',
    tools: ['web_search'],
  },

  // web's traps
  {
    name: 'ssrfPolicy.dangerouslyAllowPrivateNetwork',
    config: fleet(WEB, { web: { fetch: { ssrfPolicy: { dangerouslyAllowPrivateNetwork: true } } } }),
    class: 'host',
    tools: WEB_PAIR,
    names: ['tools.web.fetch.ssrfPolicy.dangerouslyAllowPrivateNetwork'],
  },
  {
    name: 'ssrfPolicy.allowedHostnames (one private host is still the LAN)',
    config: fleet(WEB, { web: { fetch: { ssrfPolicy: { allowedHostnames: ['nas.local'] } } } }),
    class: 'host',
    tools: WEB_PAIR,
    names: ['tools.web.fetch.ssrfPolicy.allowedHostnames'],
  },
  {
    name: 'the fake-IP proxy ranges',
    config: fleet(WEB, {
      web: { fetch: { ssrfPolicy: { allowRfc2544BenchmarkRange: true, allowIpv6UniqueLocalRange: true } } },
    }),
    class: 'host',
    tools: WEB_PAIR,
    names: ['allowRfc2544BenchmarkRange', 'allowIpv6UniqueLocalRange'],
  },
  {
    name: 'a trusted env proxy resolves names itself',
    config: fleet(WEB, { web: { fetch: { useTrustedEnvProxy: true } } }),
    class: 'host',
    tools: WEB_PAIR,
    names: ['tools.web.fetch.useTrustedEnvProxy'],
  },
  {
    name: "the operator's fetch headers go to whatever URL the model picks",
    config: fleet(WEB, { web: { fetch: { headers: { Authorization: 'Bearer x' } } } }),
    class: 'host',
    tools: WEB_PAIR,
    names: ['tools.web.fetch.headers'],
  },
  {
    name: 'an unknown key in ssrfPolicy (the gateway refuses the file)',
    config: fleet(WEB, { web: { fetch: { ssrfPolicy: { allowPrivateNetwork: true } } } }),
    class: 'host',
    tools: [],
    names: ['tools.web.fetch.ssrfPolicy.allowPrivateNetwork is not an OpenClaw 2026.9 setting'],
  },
  {
    name: 'Code Mode "auto" (unset) adds a JavaScript exec on this machine',
    config: {
      agents: { ownership: 'explicit', entries: { main: {}, skill: WEB } },
    },
    class: 'host',
    tools: ['code mode exec', ...WEB_PAIR],
    names: ['codeMode to false'],
  },
  {
    name: 'web and message',
    config: fleet({ tools: { allow: ['web_search', 'web_fetch', 'message'] } }),
    class: 'host',
    tools: ['message', ...WEB_PAIR],
    names: ['message (sends messages from your accounts)', 'deny message in agents.entries.skill.tools.deny'],
  },
  {
    name: 'web and a plugin tool',
    config: fleet({ tools: { allow: ['web_search', 'web_fetch', 'file-transfer'] } }),
    class: 'host',
    tools: ['file-transfer', ...WEB_PAIR],
  },
  {
    name: 'web and an MCP tool',
    config: fleet({ tools: { allow: ['web_search', 'web_fetch', 'docs__read_docs'] } }),
    class: 'host',
    tools: ['docs__read_docs', ...WEB_PAIR],
  },
  {
    name: 'a name this check does not know',
    config: fleet({ tools: { allow: ['web_search', 'web_crawl'] } }),
    class: 'host',
    tools: ['web_crawl', 'web_search'],
  },
  {
    name: 'profile minimal plus web keeps session_status, gateway and plugins',
    config: fleet({ tools: { profile: 'minimal', alsoAllow: ['group:web'] } }),
    class: 'host',
    tools: ['gateway', 'group:plugins', 'session_status', 'web_fetch', 'web_search', 'x_search'],
  },

  // sandboxed
  {
    name: 'shell and files in a per-agent container',
    config: fleet(SANDBOXED),
    class: 'sandboxed',
    tools: SHELL_SORTED,
  },
  {
    name: 'the sandbox from agents.defaults',
    config: fleet(
      { tools: (SANDBOXED as { tools: Entry }).tools },
      {},
      { sandbox: { mode: 'all', workspaceAccess: 'none' } },
    ),
    class: 'sandboxed',
    tools: SHELL_SORTED,
  },
  {
    name: 'podman, per session, workspace read-only',
    config: fleet(withSandbox(SANDBOXED, { backend: 'podman', scope: 'session', workspaceAccess: 'ro' })),
    class: 'sandboxed',
    tools: SHELL_SORTED,
  },
  {
    name: 'elevated off globally instead',
    config: fleet(withTools(SANDBOXED, { elevated: undefined }), { elevated: { enabled: false } }),
    class: 'sandboxed',
    tools: SHELL_SORTED,
  },
  {
    name: 'exec host "sandbox"',
    config: fleet(withTools(SANDBOXED, { exec: { host: 'sandbox' } })),
    class: 'sandboxed',
    tools: SHELL_SORTED,
  },
  {
    name: 'a bridge network the skill allows',
    config: fleet(withSandbox(SANDBOXED, { docker: { network: 'bridge' } })),
    sandboxNetwork: true,
    class: 'sandboxed',
    tools: SHELL_SORTED,
    names: ['network "bridge", which this skill allows'],
  },
  {
    name: "docs example 3's public agent (read only, in a sandbox): no exec, so elevated does not matter",
    config: fleet(
      {
        workspace: '~/.openclaw/workspace-public',
        sandbox: { mode: 'all', scope: 'agent' },
        tools: { allow: ['read'], deny: ['exec', 'write', 'edit', 'apply_patch'] },
      },
      {},
      { sandbox: { mode: 'non-main', scope: 'session' } },
    ),
    class: 'sandboxed',
    tools: ['read'],
  },
  {
    name: "the sandbox tool policy's defaults take web_search away",
    config: fleet(withTools(SANDBOXED, { allow: ['exec', 'web_search'] })),
    class: 'sandboxed',
    tools: ['exec'],
  },
  {
    name: 'web tools the sandbox tool policy lets in',
    config: fleet(
      withTools(SANDBOXED, {
        allow: [...SHELL, 'web_search', 'web_fetch'],
        sandbox: { tools: { alsoAllow: ['group:web'] } },
      }),
    ),
    class: 'sandboxed',
    tools: [...SHELL, ...WEB_PAIR].sort(),
  },

  // sandboxed's traps
  {
    name: 'no sandbox: the shell of this machine',
    config: fleet({ tools: { allow: SHELL, elevated: { enabled: false } } }),
    class: 'host',
    tools: SHELL_SORTED,
    names: ['sandbox mode is "off" by default', 'set agents.entries.skill.sandbox.mode to "all"'],
  },
  {
    name: 'mode "non-main" (the main session of the agent runs on the host)',
    config: fleet({ tools: (SANDBOXED as { tools: Entry }).tools }, {}, { sandbox: { mode: 'non-main' } }),
    class: 'host',
    tools: SHELL_SORTED,
    names: ['sandbox mode is "non-main" in agents.defaults.sandbox.mode'],
  },
  {
    name: 'workspaceAccess rw',
    config: fleet(withSandbox(SANDBOXED, { workspaceAccess: 'rw' })),
    class: 'host',
    tools: SHELL_SORTED,
    names: ['workspace access "rw" in agents.entries.skill.sandbox.workspaceAccess'],
  },
  {
    name: 'network bridge the skill does not allow',
    config: fleet(withSandbox(SANDBOXED, { docker: { network: 'bridge' } })),
    class: 'host',
    tools: SHELL_SORTED,
    names: ['network "bridge" (agents.entries.skill.sandbox.docker.network)'],
  },
  {
    name: "another container's network, even with the network allowed",
    config: fleet(
      withSandbox(SANDBOXED, {
        docker: { network: 'container:db', dangerouslyAllowContainerNamespaceJoin: true },
      }),
    ),
    sandboxNetwork: true,
    class: 'host',
    tools: SHELL_SORTED,
    names: ['network "container:db"', 'dangerouslyAllowContainerNamespaceJoin is on'],
  },
  {
    name: 'elevated exec on (its default)',
    config: fleet(withTools(SANDBOXED, { elevated: undefined })),
    class: 'host',
    tools: SHELL_SORTED,
    names: ['elevated exec', 'set agents.entries.skill.tools.elevated.enabled to false'],
  },
  {
    name: 'elevated enabled for the agent while on globally',
    config: fleet(withTools(SANDBOXED, { elevated: { enabled: true } }), { elevated: { enabled: true } }),
    class: 'host',
    tools: SHELL_SORTED,
  },
  {
    name: 'exec host "gateway" for the agent',
    config: fleet(withTools(SANDBOXED, { exec: { host: 'gateway' } })),
    class: 'host',
    tools: SHELL_SORTED,
    names: ['exec runs on "gateway" (agents.entries.skill.tools.exec.host)'],
  },
  {
    name: 'exec host "node" globally',
    config: fleet(SANDBOXED, { exec: { host: 'node' } }),
    class: 'host',
    tools: SHELL_SORTED,
    names: ['tools.exec.host'],
  },
  {
    name: 'a host folder mounted in, even read-only',
    config: fleet(withSandbox(SANDBOXED, { docker: { network: 'none', binds: ['/home/me/src:/src:ro'] } })),
    class: 'host',
    tools: SHELL_SORTED,
    names: ['agents.entries.skill.sandbox.docker.binds'],
  },
  {
    name: 'a dangerous docker flag on the fleet',
    config: fleet(SANDBOXED, {}, { sandbox: { docker: { dangerouslyAllowExternalBindSources: true } } }),
    class: 'host',
    tools: SHELL_SORTED,
    names: ['agents.defaults.sandbox.docker.dangerouslyAllowExternalBindSources is on'],
  },
  {
    name: 'the ssh backend (another machine, its own rules)',
    config: fleet(withSandbox(SANDBOXED, { backend: 'ssh' })),
    class: 'host',
    tools: SHELL_SORTED,
    names: ['backend "ssh"'],
  },
  {
    name: "scope shared (one container for every agent; this agent's docker block ignored)",
    config: fleet(
      withSandbox(SANDBOXED, { scope: 'shared' }),
      {},
      { sandbox: { docker: { network: 'bridge' } } },
    ),
    class: 'host',
    tools: SHELL_SORTED,
    names: ['scope "shared"', 'network "bridge" (agents.defaults.sandbox.docker.network)'],
  },
  {
    name: 'file tools allowed outside their workspace',
    config: fleet(SANDBOXED, { fs: { workspaceOnly: false } }),
    class: 'host',
    tools: SHELL_SORTED,
    names: ['tools.fs.workspaceOnly is false'],
  },
  {
    name: "docs example 2's work agent (scope shared, elevated on)",
    config: fleet({
      workspace: '~/.openclaw/workspace-work',
      sandbox: { mode: 'all', scope: 'shared', workspaceRoot: '/tmp/work-sandboxes' },
      tools: { allow: ['read', 'write', 'apply_patch', 'exec'], deny: ['browser', 'gateway', 'discord'] },
    }),
    class: 'host',
    tools: ['apply_patch', 'exec', 'read', 'write'],
  },
  {
    name: "docs example 1's family agent (read and message, in a sandbox): the sandbox policy's defaults drop message",
    config: fleet(FAMILY),
    class: 'sandboxed',
    tools: ['read'],
  },
  {
    name: 'the family agent with message let into the sandbox: message runs on the host',
    config: fleet(withTools(FAMILY, { sandbox: { tools: { alsoAllow: ['message'] } } })),
    class: 'host',
    tools: ['message', 'read'],
    names: ['message (sends messages from your accounts)'],
  },
  {
    name: "the coding profile in a sandbox keeps the sandbox policy's session tools",
    config: fleet(withTools(SANDBOXED, { allow: undefined, profile: 'coding' })),
    class: 'host',
    tools: [
      ...SHELL,
      'view_image',
      'sessions_list',
      'sessions_history',
      'sessions_search',
      'sessions_send',
      'sessions_spawn',
      'subagents',
      'session_status',
    ].sort(),
  },
  {
    name: 'an unknown key in the sandbox (the retired perSession)',
    config: fleet(withSandbox(SANDBOXED, { perSession: true })),
    class: 'host',
    tools: [],
    names: ['agents.entries.skill.sandbox.perSession is not an OpenClaw 2026.9 setting'],
  },
  {
    name: 'a sandbox block OpenClaw would refuse even with the sandbox off',
    config: fleet(WEB, {}, { sandbox: { docker: { privileged: true } } }),
    class: 'host',
    tools: [],
    names: ['agents.defaults.sandbox.docker.privileged'],
  },

  // Cannot tell
  {
    name: 'an agent the config does not have',
    config: fleet(WEB),
    agent: 'research',
    class: 'host',
    tools: [],
    names: ['"research" is not in the OpenClaw config'],
  },
  {
    name: 'a roster OpenClaw refuses (several agents, no owner)',
    config: { tools: { codeMode: false }, agents: { entries: { main: {}, skill: WEB } } },
    class: 'host',
    tools: WEB_PAIR,
    names: ['agents.ownership: "explicit"'],
  },
  {
    name: '$include, which this check does not follow',
    config: { tools: { codeMode: false }, agents: { $include: './agents.json5' } },
    class: 'host',
    tools: [],
    names: ['$include'],
  },
];

describe('classifyAgentTools', () => {
  it.each(cases)('$name: $class', (c) => {
    const view = classifyAgentTools(c.config, c.agent ?? 'skill', { sandboxNetwork: c.sandboxNetwork });
    expect({ class: view.class, tools: view.tools }).toEqual({ class: c.class, tools: c.tools });
    for (const text of c.names ?? []) expect(view.detail).toContain(text);
  });

  it('says what would narrow each class, and shows the sandbox it rests on', () => {
    const sandboxed = classifyAgentTools(fleet(SANDBOXED), 'skill');
    expect(sandboxed.sandbox).toEqual({ mode: 'all', workspaceAccess: 'none', network: 'none' });
    expect(sandboxed.detail).toContain('mode "all" (agents.entries.skill.sandbox.mode)');
    expect(sandboxed.detail).toContain(`deny ${SHELL_SORTED.join(', ')} in agents.entries.skill.tools.deny`);

    expect(sandboxed.detail).toContain('no elevated exec and exec kept in the sandbox');
    const readOnly = classifyAgentTools(fleet(withTools(SANDBOXED, { allow: ['read'] })), 'skill');
    expect(readOnly).toMatchObject({ class: 'sandboxed', tools: ['read'] });
    expect(readOnly.detail).not.toContain('exec');

    const web = classifyAgentTools(fleet(WEB), 'skill');
    expect(web.sandbox).toBeUndefined();
    expect(web.detail).toContain('private-network guard');
    expect(web.detail).toContain(
      'For no tools, deny web_fetch, web_search in agents.entries.skill.tools.deny',
    );

    const open = classifyAgentTools(
      fleet(WEB, { web: { fetch: { ssrfPolicy: { dangerouslyAllowPrivateNetwork: true } } } }),
      'skill',
    );
    expect(open.detail).toContain('remove tools.web.fetch.ssrfPolicy.dangerouslyAllowPrivateNetwork');

    const unsandboxed = classifyAgentTools(fleet(withSandbox(SANDBOXED, { workspaceAccess: 'rw' })), 'skill');
    expect(unsandboxed.sandbox).toEqual({ mode: 'all', workspaceAccess: 'rw', network: 'none' });
    expect(unsandboxed.detail).toContain(
      'set agents.entries.skill.sandbox.workspaceAccess to "none" or "ro"',
    );
  });

  it('a config edit that gives the agent exec makes it host', () => {
    const before = fleet(WEB);
    expect(classifyAgentTools(before, 'skill').class).toBe('web');
    const after = fleet(withTools(WEB, { allow: ['web_search', 'web_fetch', 'exec'] }));
    const view = classifyAgentTools(after, 'skill');
    expect(view).toMatchObject({ class: 'host', tools: ['exec', ...WEB_PAIR] });
    expect(view.detail).toContain('exec (runs commands on this machine)');
  });
});

describe('classifyToolPolicy, derived from the class', () => {
  it('restricted only for none; web and sandboxed agents are listed with their tools', () => {
    expect(classifyToolPolicy(fleet({ tools: { deny: ['*'] } }), 'skill').verdict).toBe('restricted');
    expect(classifyToolPolicy(fleet(WEB), 'skill')).toMatchObject({
      verdict: 'exposes-host-tools',
      tools: WEB_PAIR,
    });
    expect(classifyToolPolicy(fleet(SANDBOXED), 'skill')).toMatchObject({
      verdict: 'exposes-host-tools',
      tools: SHELL_SORTED,
    });
  });

  it('a config the gateway refuses is unknown, not host', () => {
    const view = classifyToolPolicy(fleet(withSandbox(SANDBOXED, { perSession: true })), 'skill');
    expect(view.verdict).toBe('unknown');
  });
});

describe('readToolClass', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tool-class-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('classifies the agent in a JSON5 file as operators write it', () => {
    const path = join(dir, 'openclaw.json');
    writeFileSync(
      path,
      `// by hand
{
  tools: { codeMode: false, },
  agents: { ownership: 'explicit', entries: { main: {}, research: { tools: { allow: ['web_search', 'web_fetch',], }, }, }, },
}
`,
    );
    expect(readToolClass(path, 'research')).toMatchObject({
      class: 'web',
      tools: ['web_fetch', 'web_search'],
    });
  });

  it('is host for a file it cannot read, saying why', () => {
    const path = join(dir, 'missing.json');
    expect(readToolClass(path, 'research')).toEqual({
      class: 'host',
      tools: [],
      detail: `No OpenClaw config at ${path}, so the tools of agent "research" cannot be checked.`,
    });
    writeFileSync(join(dir, 'broken.json'), '{ tools: ');
    expect(readToolClass(join(dir, 'broken.json'), 'research').detail).toMatch(/is not valid JSON5/);
  });
});
