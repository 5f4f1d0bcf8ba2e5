// The config the console proposes for a new skill's agent (issue 27, item 4), over the console API: POST
// /api/skills/snippet fits the template's snippet to the roster of the operator's real config file (as the
// restricted agent's snippet is), and, asked again once the operator merged it and the gateway reloaded
// ("Check again"), says what the agent is now beside what the template intends, and when the operator's own
// config defeated it. A real agent and console, the gateway double (its agent list is what OpenClaw runs),
// an OpenClaw config in a temp file, and the real classifier (bridge/tool-class.ts).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import JSON5 from 'json5';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { restrictedAgentSnippet, rosterFacts, STOCK_ROSTER } from '../../src/bridge/agent-snippet.js';
import { skillAgentSnippet } from '../../src/bridge/skill-snippet.js';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import type {
  ApiError,
  SkillSnippetRequest,
  SkillSnippetResponse,
  SkillsResponse,
} from '../../src/protocol/console-api.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { agentPool, tempDir, type TestAgent } from '../helpers/agents.js';
import {
  mergeConfig,
  mergeSnippetInto,
  writeConfigFile,
  type OpenClawConfig,
} from '../helpers/openclaw-config.js';
import { until } from '../helpers/polling.js';

const TOKEN = 'gw-token-skill-snippet';
const configDir = tempDir('openclaw-snippet-');
const configPath = join(configDir, 'openclaw.json');

// What local onboarding writes (every tool), with the restricted agent the console proposes for chat.
const STOCK: OpenClawConfig = { gateway: { mode: 'local' }, tools: { profile: 'full' } };
const WITH_PUBLIC = mergeConfig(STOCK, JSON5.parse(restrictedAgentSnippet('public'))) as OpenClawConfig;

let gateway: GatewayDouble;
let agent: TestAgent;
let con: ConsoleHandle;
const agents = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN, agents: ['main', 'public'] });
  writeConfigFile(configPath, WITH_PUBLIC);
  agent = await agents.start({
    settings: {
      skills: [
        {
          id: 'summary',
          name: 'Summary',
          description: 'Summarises a text.',
          examples: [],
          agent: 'public',
          audience: 'public',
          limits: {},
          paused: false,
        },
        // Paused, its agent not even in the config: still the agent of a skill.
        {
          id: 'notes',
          name: 'Notes',
          description: 'Takes notes.',
          examples: [],
          agent: 'writer',
          audience: 'approved',
          limits: {},
          paused: true,
        },
      ],
    },
    env: { OPENCLAW_CONFIG_PATH: configPath },
  });
  con = await startConsole({
    app: agent.app,
    store: openSettingsStore(agent.dataDir),
    dataDir: agent.dataDir,
    port: 0,
  });
  await until(() => agent.app.gatewayTarget.view.check === 'present', 3000, 'the first agent check');
});

afterAll(async () => {
  await con.close();
  await agents.closeAll();
  await gateway.close();
  rmSync(configDir, { recursive: true, force: true });
});

beforeEach(() => {
  writeConfigFile(configPath, WITH_PUBLIC);
  gateway.set({ agents: ['main', 'public'] });
});

async function api<T>(path: string, init: { method?: string; body?: unknown } = {}) {
  const response = await fetch(`${con.url}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${con.token}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, json: (await response.json()) as T };
}

const propose = (body: SkillSnippetRequest) =>
  api<SkillSnippetResponse>('/api/skills/snippet', { method: 'POST', body });

describe('POST /api/skills/snippet: the template fitted to the operator’s config', () => {
  it('Research: the snippet for the file’s own roster, the class it intends, the file to merge into; not applied yet', async () => {
    const { status, json } = await propose({ template: 'research', agent: 'research' });
    expect(status).toBe(200);
    expect(json).toMatchObject({
      template: 'research',
      agent: 'research',
      expectedClass: 'web',
      mergeInto: configPath,
      roster: 'file',
      declared: false,
      outcome: { state: 'not-applied' },
    });
    // The roster is the file's (explicit already, with main and public): not a stock config's.
    expect(json.snippet).toBe(skillAgentSnippet('research', 'research', rosterFacts(WITH_PUBLIC)));
    expect(json.snippet).not.toBe(skillAgentSnippet('research', 'research', STOCK_ROSTER));
    expect(json.snippet).not.toContain('ownership');
    expect(json.snippet).toContain('allow: ["web_search", "web_fetch"]');
    // Until the operator merges it, the agent is nowhere: the gateway lacks it, and it counts as host.
    expect(json.agentCheck).toMatchObject({ agent: 'research', check: 'missing' });
    expect(json.tools.class).toBe('host');
    expect(json.outcome.message).toContain('not in your OpenClaw config yet');
  });

  it('Check again once merged and reloaded: web, as intended, with its tools; then the skill is added as web', async () => {
    const first = await propose({ template: 'research', agent: 'Research' });
    // The id as OpenClaw writes it.
    expect(first.json.agent).toBe('research');
    mergeSnippetInto(configPath, first.json.snippet!);
    // The file changed, the gateway has not reloaded yet.
    const early = await propose({ template: 'research', agent: 'research' });
    expect(early.json).toMatchObject({ declared: true, outcome: { state: 'not-loaded' } });
    expect(early.json.outcome.message).toContain('the gateway does not run it yet');

    gateway.set({ agents: ['main', 'public', 'research'] });
    const again = await propose({ template: 'research', agent: 'research' });
    expect(again.json).toMatchObject({
      declared: true,
      agentCheck: { check: 'present' },
      tools: { class: 'web', tools: ['web_fetch', 'web_search'] },
      outcome: {
        state: 'as-intended',
        message: 'Agent "research" is web, as the template intends: web_fetch, web_search.',
      },
    });

    const added = await api<SkillsResponse>('/api/skills', {
      method: 'POST',
      body: {
        id: 'research',
        name: 'Research',
        description: 'Searches the web.',
        agent: again.json.agent,
        audience: 'public',
      },
    });
    expect(added.status).toBe(201);
    const view = added.json.skills.find((skill) => skill.setting.id === 'research');
    expect(view?.tools.class).toBe('web');
    expect(view?.serving).toEqual({ serving: true });
    await api(`/api/skills/research`, { method: 'DELETE' });
  });

  it('says plainly when the operator’s config defeats the template, with the classifier’s reason', async () => {
    const first = await propose({ template: 'research', agent: 'research' });
    const merged = mergeSnippetInto(configPath, first.json.snippet!);
    // web_fetch may reach the operator's own network: not web.
    writeConfigFile(
      configPath,
      mergeConfig(merged, {
        tools: { web: { fetch: { ssrfPolicy: { dangerouslyAllowPrivateNetwork: true } } } },
      }),
    );
    gateway.set({ agents: ['main', 'public', 'research'] });
    const { json } = await propose({ template: 'research', agent: 'research' });
    expect(json.tools.class).toBe('host');
    expect(json.outcome.state).toBe('defeated');
    expect(json.outcome.message).toMatch(
      /^Your OpenClaw config makes agent "research" host, not web as the template intends\. /,
    );
    expect(json.outcome.message).toContain('tools.web.fetch.ssrfPolicy.dangerouslyAllowPrivateNetwork');
    expect(json.outcome.message).toContain(json.tools.detail);
  });

  it('Sandboxed helper: the runtime and the network as asked, and the check allows the network it opens', async () => {
    const { json } = await propose({
      template: 'sandboxed',
      agent: 'helper',
      backend: 'podman',
      sandboxNetwork: true,
    });
    expect(json.expectedClass).toBe('sandboxed');
    expect(json.snippet).toContain('backend: "podman"');
    expect(json.snippet).toContain('docker: { network: "bridge" }');
    mergeSnippetInto(configPath, json.snippet!);
    gateway.set({ agents: ['main', 'public', 'helper'] });
    const allowed = await propose({ template: 'sandboxed', agent: 'helper', sandboxNetwork: true });
    expect(allowed.json).toMatchObject({
      tools: { class: 'sandboxed', sandbox: { mode: 'all', workspaceAccess: 'none', network: 'bridge' } },
      outcome: { state: 'as-intended' },
    });
    // The same agent for a skill that keeps its sandbox off the network: the template is defeated.
    const closed = await propose({ template: 'sandboxed', agent: 'helper' });
    expect(closed.json.outcome.state).toBe('defeated');
    expect(closed.json.outcome.message).toContain('not sandboxed as the template intends');
  });

  it('Custom: no snippet, the existing agent classified as it is', async () => {
    const { status, json } = await propose({ template: 'custom', agent: 'public' });
    expect(status).toBe(200);
    expect(json.snippet).toBeUndefined();
    expect(json.expectedClass).toBeUndefined();
    expect(json).toMatchObject({
      declared: true,
      tools: { class: 'none', tools: [] },
      outcome: { state: 'classified', message: 'Agent "public" is none.' },
    });
    const missing = await propose({ template: 'custom', agent: 'nobody' });
    expect(missing.json.outcome).toMatchObject({ state: 'not-applied' });
    expect(missing.json.outcome.message).toContain('There is no agent "nobody"');
  });

  it('a config file it cannot read: a stock roster, and why', async () => {
    rmSync(configPath);
    const { json } = await propose({ template: 'research', agent: 'research' });
    expect(json.roster).toBe('stock');
    expect(json.rosterNote).toContain(`No OpenClaw config at ${configPath}`);
    expect(json.snippet).toBe(skillAgentSnippet('research', 'research', STOCK_ROSTER));
    expect(json.outcome.state).toBe('unknown');
  });
});

describe('POST /api/skills/snippet: what it refuses', () => {
  it('a template aimed at an agent something else runs on: chat’s, a skill’s, the operator’s own', async () => {
    for (const [name, owner] of [
      ['public', 'the agent chat runs on'],
      ['main', 'your own OpenClaw agent'],
      ['MAIN', 'your own OpenClaw agent'],
    ] as const) {
      const { status, json } = await api<ApiError>('/api/skills/snippet', {
        method: 'POST',
        body: { template: 'research', agent: name },
      });
      expect(status, name).toBe(409);
      expect(json.error.message).toContain(owner);
      expect(json.error.fix).toContain('Custom: an existing agent');
      expect(json.error.fields?.[0]?.field).toBe('agent');
    }
    const { status, json } = await api<ApiError>('/api/skills/snippet', {
      method: 'POST',
      body: { template: 'sandboxed', agent: 'Writer' },
    });
    expect(status).toBe(409);
    expect(json.error.message).toBe(
      'Agent "writer" is the agent skill "notes" runs on: a template would change its tools, so no config was proposed.',
    );
  });

  it('a body that names no template or no agent id, each field named', async () => {
    const { status, json } = await api<ApiError>('/api/skills/snippet', {
      method: 'POST',
      body: { template: 'shell', agent: 'my agent!', backend: 'lxc', sandboxNetwork: 'yes' },
    });
    expect(status).toBe(400);
    expect(json.error.fields?.map((field) => field.field)).toEqual([
      'template',
      'agent',
      'sandboxNetwork',
      'backend',
    ]);
    expect(json.error.message).toContain('template must be one of research, sandboxed, custom');
    expect(json.error.fix).toContain('{"template": "research", "agent": "research"}');
  });
});
