// Skills that do something (issue 27, items 1, 3, 5 and 6): the operator publishes several skills, each on
// its own OpenClaw agent, to its own audience, with its own limits. A real agent, its console, the gateway
// double (which records the `model` of every call), signed SAMVAD envelopes from real peer agents, and the
// A2A SDK's own client on each skill's card. The skills' tool classes come from a stand-in classifier
// (bridge/tool-class.ts is built beside this): what the gateway config gives each agent, as the real one
// will read it.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AgentCard, TaskState } from '@a2a-js/sdk';
import { DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { EnvelopeEvent } from '../../src/agent/events.js';
import type { ClassifyAgentTools } from '../../src/bridge/exposure-class.js';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import type { ApiError, SkillsResponse, SkillView, StatusResponse } from '../../src/protocol/console-api.js';
import { cardSchema, type Mode } from '../../src/protocol/index.js';
import type { SkillSetting, ToolClass } from '../../src/protocol/skills.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startGatewayDouble, type GatewayDouble, type RecordedRequest } from '../fixtures/gateway-double.js';
import { a2aClient } from '../helpers/a2a-agent.js';
import { asTask, collect, describeEvent, send } from '../helpers/a2a-messages.js';
import { parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { agentPool, tempDir, type TestAgent } from '../helpers/agents.js';
import { PATHS, envelope, post, sign, type Reply } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';
import { hasReference, readReference } from '../helpers/reference.js';

const TOKEN = 'gw-token-skills-27';
const CHAT = '/v1/chat/completions';
const configDir = tempDir('openclaw-skills-');
const configPath = join(configDir, 'openclaw.json');

// What each agent is given in the gateway's config; the stand-in classifier reads it as the real one will.
const RESTRICTED = { profile: 'minimal', deny: ['*'], codeMode: false };
let agentTools: Record<string, { allow: string[]; sandbox?: boolean }>;
function writeConfig(): void {
  const entries: Record<string, unknown> = { main: {}, public: { tools: RESTRICTED } };
  for (const [id, tools] of Object.entries(agentTools)) {
    entries[id] = {
      tools: { ...RESTRICTED, deny: [], allow: tools.allow },
      ...(tools.sandbox ? { sandbox: { mode: 'all' } } : {}),
    };
  }
  writeFileSync(configPath, JSON.stringify({ agents: { ownership: 'explicit', entries } }));
}

/** A stand-in for tool-class.ts: shell or files are host (sandboxed inside a sandbox), search/fetch web. */
const standIn: ClassifyAgentTools = (config, agentId) => {
  const entries = (
    config as { agents: { entries: Record<string, { tools?: { allow?: string[] }; sandbox?: unknown }> } }
  ).agents.entries;
  const entry = entries[agentId];
  const tools = [...(entry?.tools?.allow ?? [])].sort();
  const reaches = tools.some((tool) => ['exec', 'read', 'write'].includes(tool));
  const toolClass: ToolClass = reaches
    ? entry?.sandbox
      ? 'sandboxed'
      : 'host'
    : tools.length > 0
      ? 'web'
      : 'none';
  return { class: toolClass, tools, detail: `stand-in: ${toolClass}` };
};

const skill = (
  over: Partial<SkillSetting> & Pick<SkillSetting, 'id' | 'agent' | 'audience'>,
): SkillSetting => ({
  name: over.id[0]!.toUpperCase() + over.id.slice(1),
  description: `The ${over.id} skill.`,
  examples: [`Try ${over.id}`],
  limits: {},
  paused: false,
  ...over,
});

const SKILLS: SkillSetting[] = [
  skill({ id: 'research', agent: 'research', audience: 'approved', description: 'Searches the web.' }),
  skill({ id: 'helper', agent: 'helper', audience: 'public', limits: { requestsPerMinute: 2 } }),
  skill({ id: 'shell', agent: 'shell', audience: 'named' }),
];

let gateway: GatewayDouble;
let agent: TestAgent;
let con: ConsoleHandle;
let friend: TestAgent;
let stranger: TestAgent;
let scopedPeer: TestAgent;
const traffic: EnvelopeEvent[] = [];
const agents = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));
const peers = agentPool(() => ({}));

beforeAll(async () => {
  agentTools = {
    research: { allow: ['web_fetch', 'web_search'] },
    helper: { allow: [] },
    shell: { allow: ['exec', 'read'] },
  };
  writeConfig();
  gateway = await startGatewayDouble({
    token: TOKEN,
    agents: ['main', 'public', 'research', 'helper', 'shell'],
    usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 },
  });
  [friend, stranger, scopedPeer] = await Promise.all([peers.start(), peers.start(), peers.start()]);
  agent = await agents.start({
    settings: { access: 'pairing', skills: SKILLS, tokensPerDay: 100_000 },
    env: { OPENCLAW_CONFIG_PATH: configPath },
    classifyAgentTools: standIn,
  });
  agent.app.on('envelope', (event) => traffic.push(event));
  con = await startConsole({
    app: agent.app,
    store: openSettingsStore(agent.dataDir),
    dataDir: agent.dataDir,
    port: 0,
  });
  agent.app.access.approve(friend.id);
  agent.app.access.approve(scopedPeer.id, ['helper']);
  await until(() => agent.app.gatewayTarget.view.check === 'present', 3000, 'the first agent check');
  await agent.app.gatewayWatch.probeNow();
});

afterAll(async () => {
  await con.close();
  await agents.closeAll();
  await peers.closeAll();
  await gateway.close();
  rmSync(configDir, { recursive: true, force: true });
});

beforeEach(() => {
  gateway.requests.length = 0;
  traffic.length = 0;
});

const chats = (): RecordedRequest[] => gateway.requests.filter((r) => r.path === CHAT);
const models = () => chats().map((r) => (r.json as { model: string }).model);
const systemOf = (r: RecordedRequest | undefined) =>
  (r?.json as { messages: { role: string; content: string }[] }).messages[0]?.content ?? '';

function samvad(from: TestAgent, skillId: string, message: string, mode: Mode = 'sync'): Promise<Reply> {
  const env = envelope(from.id, agent.id, mode, { message }, { skill: skillId });
  return post(agent.url, PATHS[mode], sign(env, from.app.keys.signer));
}

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

const viewOf = async (id: string): Promise<SkillView> =>
  (await api<SkillsResponse>('/api/skills')).json.skills.find((view) => view.setting.id === id)!;

async function issue(name: string, skills?: string[]) {
  const { key, secret } = await agent.app.a2aKeys.issue({ name, ...(skills ? { skills } : {}) });
  return { id: key.id, secret };
}

/** The SDK's own client on a skill's card (its base with a trailing slash: README "A2A skills"). */
const skillClient = (id: string, key: string | undefined) => a2aClient(`${agent.url}/a2a/skills/${id}/`, key);

function rpc(path: string, key: string | undefined, text: string) {
  return fetch(`${agent.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'A2A-Version': '1.0',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }] } },
    }),
  });
}

describe('several skills, each on its own agent (item 1)', () => {
  it('reaches each published skill over SAMVAD by the envelope skill, on openclaw/<agent>, framed with its name', async () => {
    for (const [id, message] of [
      ['chat', 'hello chat'],
      ['research', 'find it'],
      ['helper', 'help me'],
    ] as const) {
      const reply = await samvad(friend, id, message);
      expect(reply.status, `${id}: ${reply.text}`).toBe(200);
      expect(reply.json.result).toEqual({ reply: `echo: ${message}`, channel: 'samvad' });
    }
    expect(models()).toEqual(['openclaw/public', 'openclaw/research', 'openclaw/helper']);
    expect(systemOf(chats()[0])).not.toContain('Skill called');
    expect(systemOf(chats()[1])).toContain(
      'Skill called: "Research" (id "research"), one of the skills your owner published for callers; your owner describes it to them as: "Searches the web.".',
    );
    expect(systemOf(chats()[1])).toContain(`Caller: ${JSON.stringify(friend.id)}`);
    // Each skill is a conversation of its own on the gateway, even for one caller and channel.
    const users = chats().map((r) => (r.json as { user: string }).user);
    expect(users).toEqual([
      `${friend.id}#samvad`,
      `research/${friend.id}#samvad`,
      `helper/${friend.id}#samvad`,
    ]);
    expect(traffic.map((event) => event.skill)).toEqual(['chat', 'research', 'helper']);
  });

  it("reaches each published skill over A2A with the SDK's own client on the skill's card", async () => {
    const key = await issue('Everything');
    for (const id of ['research', 'helper']) {
      const client = await skillClient(id, key.secret);
      const task = asTask(await client.sendMessage(send(`to ${id}`)));
      expect(task.status?.state, id).toBe(TaskState.TASK_STATE_COMPLETED);
    }
    const main = await a2aClient(agent.url, key.secret);
    expect(asTask(await main.sendMessage(send('to chat'))).status?.state).toBe(
      TaskState.TASK_STATE_COMPLETED,
    );
    expect(models()).toEqual(['openclaw/research', 'openclaw/helper', 'openclaw/public']);
    expect(systemOf(chats()[1])).toContain('Skill called: "Helper" (id "helper")');
    const sends = traffic.filter((event) => event.a2a?.method === 'SendMessage');
    expect(sends.map((event) => [event.skill, event.endpoint])).toEqual([
      ['research', '/a2a/skills/research/jsonrpc'],
      ['helper', '/a2a/skills/helper/jsonrpc'],
      ['chat', '/a2a/jsonrpc'],
    ]);
    // Traffic filters on it (the console's log).
    const filtered = await api<{ entries: { skill?: string }[] }>('/api/traffic?skill=research&protocol=a2a');
    expect(filtered.json.entries.length).toBeGreaterThan(0);
    expect(filtered.json.entries.every((entry) => entry.skill === 'research')).toBe(true);
    // Streamed too, token by token, on the skill's agent.
    const client = await skillClient('research', key.secret);
    const streamed = (await collect(client.sendMessageStream(send('stream it')))).map(describeEvent);
    expect(streamed.at(-1)).toBe('status:completed');
    expect(streamed).toContain('artifact:=echo: stream it|last');
    expect(models().at(-1)).toBe('openclaw/research');
  });

  it('lists every published skill on both cards, which validate against their schemas', async () => {
    const samvadCard = (await (await fetch(`${agent.url}/.well-known/agent.json`)).json()) as {
      skills: { id: string; trust: string; allowedPeers?: string[] }[];
    };
    expect(samvadCard.skills.map((s) => [s.id, s.trust])).toEqual([
      ['chat', 'public'],
      ['research', 'trusted-peers'],
      ['helper', 'public'],
      ['shell', 'trusted-peers'],
    ]);
    // Who the operator approved is not published.
    expect(samvadCard.skills.find((s) => s.id === 'research')?.allowedPeers).toEqual([]);
    const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
    const ours = addFormats(new Ajv2020({ strict: false })).compile(cardSchema);
    expect(ours(samvadCard), JSON.stringify(ours.errors)).toBe(true);
    if (hasReference) {
      const published = addFormats(new Ajv2020({ strict: false })).compile(
        readReference<object>('samvad-v1.2/agent-card.schema.json'),
      );
      expect(published(samvadCard), JSON.stringify(published.errors)).toBe(true);
    } else console.warn('SKIPPED: the SAMVAD card against the published schema (no ../shared/reference)');

    // The A2A card, read as the SDK reads it: every skill, and where each one's own card is.
    const resolver = new DefaultAgentCardResolver();
    const main = await resolver.resolve(agent.url);
    expect(AgentCard.fromJSON(AgentCard.toJSON(main))).toEqual(main);
    expect(main.skills.map((s) => s.id)).toEqual(['chat', 'research', 'helper', 'shell']);
    expect(main.skills.find((s) => s.id === 'research')?.description).toContain(
      `${agent.url}/a2a/skills/research/.well-known/agent-card.json`,
    );
    expect(main.supportedInterfaces.map((i) => i.url)).toContain(`${agent.url}/a2a/jsonrpc`);
    const research = await resolver.resolve(`${agent.url}/a2a/skills/research/`);
    expect(research.skills.map((s) => s.id)).toEqual(['research']);
    expect(research.skills[0]?.examples).toEqual(['Try research']);
    expect([...new Set(research.supportedInterfaces.map((i) => i.url))]).toEqual([
      `${agent.url}/a2a/skills/research/jsonrpc`,
      `${agent.url}/a2a/skills/research/rest`,
    ]);
    // A v0.3 caller (no A2A-Version) reads the skill's card in v0.3 terms, its JSON-RPC interface first.
    const legacy = (await (
      await fetch(`${agent.url}/a2a/skills/research/.well-known/agent-card.json`)
    ).json()) as Record<string, unknown>;
    const { supportedInterfaces: _v1, ...v03 } = legacy;
    expect(parseLegacyAgentCard(v03).supportedInterfaces).toEqual([
      expect.objectContaining({ url: `${agent.url}/a2a/skills/research/jsonrpc`, protocolVersion: '0.3' }),
    ]);
    // The SDK's own client picks the skill's JSON-RPC and HTTP+JSON interfaces from it.
    const key = await issue('Card reader', ['research']);
    const viaRest = await a2aClient(`${agent.url}/a2a/skills/research/`, key.secret, 'HTTP+JSON');
    expect(asTask(await viaRest.sendMessage(send('over rest'))).status?.state).toBe(
      TaskState.TASK_STATE_COMPLETED,
    );
    expect(models()).toEqual(['openclaw/research']);
  });
});

describe('who may call what (item 3)', () => {
  it('refuses a stranger at an approved-only skill before the gateway sees anything, and names the skill to ask for', async () => {
    const pendingBefore = agent.app.access.view().pending.length;
    for (const mode of ['sync', 'async', 'stream'] as const) {
      const reply = await samvad(stranger, 'research', 'let me in', mode);
      expect(reply.status).toBe(403);
      expect(reply.json).toMatchObject({
        code: 'AUTH_FAILED',
        message: `Skill "research" is open only to callers this agent's operator approved: ask this agent's operator for access to skill "research".`,
      });
    }
    expect(chats()).toEqual([]);
    // Refused before the pending list: the operator is not asked for a call it could not serve.
    expect(agent.app.access.view().pending).toHaveLength(pendingBefore);
    expect(traffic.map((event) => event.verdict)).toEqual(['trust', 'trust', 'trust']);
  });

  it('refuses a key scoped to one skill at any other, chat included, before anything is read or forwarded', async () => {
    const helperOnly = await issue('Helper only', ['helper']);
    for (const path of ['/a2a/skills/research/jsonrpc', '/a2a/jsonrpc', '/a2a/skills/shell/jsonrpc']) {
      const refused = await rpc(path, helperOnly.secret, 'not mine');
      expect(refused.status, path).toBe(403);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
        /^Your access to this agent opens "helper" only, not skill "[a-z]+": ask this agent's operator for access to skill "[a-z]+"\.$/,
      );
    }
    await expect(
      skillClient('research', helperOnly.secret).then((c) => c.sendMessage(send('x'))),
    ).rejects.toThrow(/opens "helper" only/);
    expect(chats()).toEqual([]);
    const ok = await skillClient('helper', helperOnly.secret);
    expect(asTask(await ok.sendMessage(send('mine'))).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(models()).toEqual(['openclaw/helper']);
    expect(
      traffic.filter((event) => event.status === 403).every((event) => event.a2a?.failedAt === 'key'),
    ).toBe(true);
  });

  it('scopes a SAMVAD approval the same way: exactly the skills named (the console approves with them)', async () => {
    expect((await samvad(scopedPeer, 'helper', 'mine')).status).toBe(200);
    const refused = await samvad(scopedPeer, 'research', 'not mine');
    expect(refused.status).toBe(403);
    expect(refused.json.message).toMatch(/opens "helper" only, not skill "research"/);
    expect((await samvad(scopedPeer, 'chat', 'not mine either')).status).toBe(403);
    expect(models()).toEqual(['openclaw/helper']);
    // Widened in the console: the same approval, its keys kept, now for research too.
    const approved = await api<{ approved: { sender: string; skills?: string[] }[] }>('/api/access/approve', {
      method: 'POST',
      body: { sender: scopedPeer.id, skills: ['helper', 'research'] },
    });
    expect(approved.json.approved.find((a) => a.sender === scopedPeer.id)?.skills).toEqual([
      'helper',
      'research',
    ]);
    expect((await samvad(scopedPeer, 'research', 'now mine')).status).toBe(200);
    const typo = await api<ApiError>('/api/access/approve', {
      method: 'POST',
      body: { sender: scopedPeer.id, skills: ['reserch'] },
    });
    expect(typo.status).toBe(400);
    expect(typo.json.error.message).toMatch(
      /"reserch", which is not a skill of this agent: use chat, research/,
    );
    agent.app.access.approve(scopedPeer.id, ['helper']);
  });

  it('serves a host skill only after the operator accepts its tools, and stops when they change', async () => {
    const shellKey = await issue('Shell user', ['shell']);
    const before = await rpc('/a2a/skills/shell/jsonrpc', shellKey.secret, 'ls');
    expect(before.status).toBe(503);
    expect(((await before.json()) as { error: { message: string } }).error.message).toBe(
      'This skill is not available right now; its operator can see why.',
    );
    expect(chats()).toEqual([]);
    let view = await viewOf('shell');
    expect(view).toMatchObject({
      tools: { class: 'host', tools: ['exec', 'read'] },
      widest: 'host',
      acceptance: { state: 'needed' },
      serving: { serving: false, reason: 'acceptance-needed' },
    });
    // Accepting other tools than it has is refused; exactly its tools are accepted.
    expect(
      (await api('/api/skills/shell/accept', { method: 'POST', body: { tools: ['exec'] } })).status,
    ).toBe(409);
    const accepted = await api<SkillsResponse>('/api/skills/shell/accept', {
      method: 'POST',
      body: { tools: ['read', 'exec'] },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.json.skills.find((s) => s.setting.id === 'shell')?.serving).toEqual({ serving: true });
    expect((await rpc('/a2a/skills/shell/jsonrpc', shellKey.secret, 'ls')).status).toBe(200);
    expect(models()).toEqual(['openclaw/shell']);

    // Its agent gains a tool by a config edit: at the next check (here "Check again") it stops serving.
    agentTools.shell = { allow: ['exec', 'read', 'write'] };
    writeConfig();
    try {
      await api('/api/gateway/check', { method: 'POST', body: {} });
      view = await viewOf('shell');
      expect(view.serving).toMatchObject({ serving: false, reason: 'tools-changed' });
      expect(view.acceptance).toMatchObject({ state: 'changed', tools: ['exec', 'read'] });
      gateway.requests.length = 0;
      expect((await rpc('/a2a/skills/shell/jsonrpc', shellKey.secret, 'ls')).status).toBe(503);
      expect(chats()).toEqual([]);
    } finally {
      agentTools.shell = { allow: ['exec', 'read'] };
      writeConfig();
      await api('/api/gateway/check', { method: 'POST', body: {} });
    }
  });

  it('keeps a public skill to no tools or web tools, through the API and whatever the settings file says', async () => {
    const before = agent.app.currentSettings.skills;
    const add = await api<ApiError>('/api/skills', {
      method: 'POST',
      body: { id: 'open-shell', name: 'Open shell', description: 'x', agent: 'shell', audience: 'public' },
    });
    expect(add.status).toBe(409);
    expect(add.json.error.message).toMatch(
      /^Skill "open-shell" was not saved: a public skill may reach web tools at most, and agent "shell" is host \(exec, read\)/,
    );
    expect(add.json.error.fields).toEqual([
      { field: 'audience', message: expect.stringContaining('public skill') },
    ]);
    for (const body of [{ agent: 'shell' }, { audience: 'public' }]) {
      const id = 'agent' in body ? 'helper' : 'shell';
      expect((await api(`/api/skills/${id}`, { method: 'PUT', body })).status).toBe(409);
    }
    // Sandboxed tools need approved callers at least.
    agentTools.boxed = { allow: ['exec'], sandbox: true };
    writeConfig();
    try {
      const boxed = { id: 'boxed', name: 'Boxed', description: 'x', agent: 'boxed' };
      expect(
        (await api('/api/skills', { method: 'POST', body: { ...boxed, audience: 'public' } })).status,
      ).toBe(409);
    } finally {
      delete agentTools.boxed;
      writeConfig();
    }
    // Nor through PUT /api/settings.
    const put = await api<ApiError>('/api/settings', {
      method: 'PUT',
      body: { skills: [...before, skill({ id: 'sneak', agent: 'shell', audience: 'public' })] },
    });
    expect(put.status).toBe(400);
    expect(put.json.error.fields?.[0]?.field).toBe('skills');
    expect(agent.app.currentSettings.skills).toEqual(before);

    // A settings file that says so anyway: the skill is listed but does not serve, and says why.
    agent.app.updateSettings({
      skills: [...before, skill({ id: 'sneak', agent: 'shell', audience: 'public' })],
    });
    try {
      const reply = await samvad(friend, 'sneak', 'run it');
      expect(reply.status).toBe(503);
      expect(reply.json).toMatchObject({ code: 'AGENT_UNAVAILABLE' });
      expect(chats()).toEqual([]);
      expect((await viewOf('sneak')).serving).toMatchObject({ serving: false, reason: 'audience' });
    } finally {
      agent.app.updateSettings({ skills: before });
    }
  });
});

describe('the Skills API (item 5)', () => {
  it('lists each skill whole, adds, edits, pauses and removes one, and counts the public ones on the Overview', async () => {
    const listed = await api<SkillsResponse>('/api/skills');
    expect(
      listed.json.skills.map((s) => [s.setting.id, s.builtIn, s.tools.class, s.serving.serving]),
    ).toEqual([
      ['chat', true, 'none', true],
      ['research', false, 'web', true],
      ['helper', false, 'none', true],
      // Accepted above with exactly the tools it has.
      ['shell', false, 'host', true],
    ]);
    const research = listed.json.skills[1]!;
    expect(research).toMatchObject({
      agent: { agent: 'research', model: 'openclaw/research', check: 'present' },
      widest: 'sandboxed',
      limits: { requestsPerMinute: agent.app.currentSettings.perSender, tokensPerDay: 100_000 },
      a2aCardUrl: null,
    });
    expect(research.today.calls).toBeGreaterThan(0);
    expect(research.today.tokens).toBeGreaterThan(0);
    const status = (await api<StatusResponse>('/api/status')).json;
    expect(status.skills).toEqual({ published: 4, public: 2, notServing: 0 });

    const added = await api<SkillsResponse>('/api/skills', {
      method: 'POST',
      body: {
        id: 'summary',
        name: 'Summary',
        description: 'Summarises.',
        agent: 'helper',
        audience: 'public',
      },
    });
    expect(added.status).toBe(201);
    expect(added.json.skills.at(-1)?.setting).toEqual({
      id: 'summary',
      name: 'Summary',
      description: 'Summarises.',
      examples: [],
      agent: 'helper',
      audience: 'public',
      limits: {},
      paused: false,
    });
    expect((await samvad(friend, 'summary', 'sum it')).status).toBe(200);
    expect((await api('/api/skills', { method: 'POST', body: { id: 'summary' } })).status).toBe(409);
    const bad = await api<ApiError>('/api/skills', {
      method: 'POST',
      body: { id: 'Bad Id', name: '', description: 'x', agent: 'helper', audience: 'all' },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.fields?.map((f) => f.field)).toEqual(['id', 'name', 'audience']);

    const edited = await api<SkillsResponse>('/api/skills/summary', {
      method: 'PUT',
      body: { name: 'Short summary', limits: { tokensPerDay: 500 } },
    });
    expect(edited.json.skills.at(-1)).toMatchObject({
      setting: { name: 'Short summary' },
      limits: { tokensPerDay: 500 },
    });
    expect((await api('/api/skills/summary', { method: 'PUT', body: { id: 'other' } })).status).toBe(400);
    // An acceptance is made by the accept route, of the tools as they are: never written in by an edit.
    const forged = { accepted: { tools: ['exec'], at: new Date().toISOString() } };
    const sneaked = await api<ApiError>('/api/skills/shell', { method: 'PUT', body: forged });
    expect(sneaked.status).toBe(400);
    expect(sneaked.json.error.fields).toEqual([
      { field: 'accepted', message: 'is set by POST /api/skills/<id>/accept' },
    ]);
    expect((await api('/api/skills/chat', { method: 'PUT', body: { paused: true } })).status).toBe(409);
    expect((await api('/api/skills/nope', { method: 'DELETE' })).status).toBe(404);
    const removed = await api<SkillsResponse>('/api/skills/summary', { method: 'DELETE' });
    expect(removed.json.skills.map((s) => s.setting.id)).toEqual(['chat', 'research', 'helper', 'shell']);
    expect(
      openSettingsStore(agent.dataDir)
        .get()
        .skills.map((s) => s.id),
    ).toEqual(['research', 'helper', 'shell']);
  });
});

describe('unknown, paused or unpublished skills', () => {
  it('get SKILL_NOT_FOUND over SAMVAD, and 404 (card included) over A2A', async () => {
    const key = await issue('Prober');
    const paused = await api<SkillsResponse>('/api/skills/research', {
      method: 'PUT',
      body: { paused: true },
    });
    try {
      expect(paused.json.skills.find((s) => s.setting.id === 'research')?.serving).toMatchObject({
        reason: 'paused',
      });
      for (const id of ['research', 'nope']) {
        const reply = await samvad(friend, id, 'anyone there?');
        expect(reply.status, id).toBe(404);
        expect(reply.json.code).toBe('SKILL_NOT_FOUND');
        expect((await fetch(`${agent.url}/a2a/skills/${id}/.well-known/agent-card.json`)).status).toBe(404);
        const sent = await rpc(`/a2a/skills/${id}/jsonrpc`, key.secret, 'anyone?');
        expect(sent.status).toBe(404);
        expect(((await sent.json()) as { error: string }).error).toMatch(
          new RegExp(`^No skill "${id}" is published here`),
        );
      }
      const cards = [
        (await (await fetch(`${agent.url}/.well-known/agent.json`)).json()) as { skills: { id: string }[] },
        await new DefaultAgentCardResolver().resolve(agent.url),
      ];
      for (const card of cards) expect(card.skills.map((s) => s.id)).not.toContain('research');
      expect(chats()).toEqual([]);
    } finally {
      await api('/api/skills/research', { method: 'PUT', body: { paused: false } });
    }
    expect((await samvad(friend, 'research', 'back?')).status).toBe(200);
  });
});

describe('one admission for every skill (item 6)', () => {
  it("counts each caller's requests per skill under the skill's own limit, the other skills untouched", async () => {
    // helper: 2 a minute per caller, on each door; chat keeps the per-sender setting.
    const peer = await peers.start();
    agent.app.access.approve(peer.id);
    expect((await samvad(peer, 'helper', 'one')).status).toBe(200);
    expect((await samvad(peer, 'helper', 'two')).status).toBe(200);
    const third = await samvad(peer, 'helper', 'three');
    expect(third.status).toBe(429);
    expect(third.json).toMatchObject({ code: 'RATE_LIMITED' });
    expect(third.json.message).toMatch(/over its limit of requests per minute for skill "helper"/);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await samvad(peer, 'chat', 'still here')).status).toBe(200);
    expect((await samvad(peer, 'research', 'and here')).status).toBe(200);

    const key = await issue('Limited');
    expect((await rpc('/a2a/skills/helper/jsonrpc', key.secret, 'one')).status).toBe(200);
    expect((await rpc('/a2a/skills/helper/jsonrpc', key.secret, 'two')).status).toBe(200);
    const over = await rpc('/a2a/skills/helper/jsonrpc', key.secret, 'three');
    expect(over.status).toBe(429);
    expect(((await over.json()) as { error: { message: string } }).error.message).toMatch(
      /for skill "helper"/,
    );
    expect((await rpc('/a2a/jsonrpc', key.secret, 'chat still')).status).toBe(200);
    // Refused calls reached nothing.
    expect(models().filter((model) => model === 'openclaw/helper')).toHaveLength(4);
  });

  it("keeps each caller's daily tokens per skill: a spent skill budget refuses that skill only", async () => {
    const before = agent.app.currentSettings.skills;
    agent.app.updateSettings({
      skills: before.map((s) => (s.id === 'research' ? { ...s, limits: { tokensPerDay: 50 } } : s)),
    });
    try {
      const peer = await peers.start();
      agent.app.access.approve(peer.id);
      // 30 tokens a turn: the second call starts at 30 of 50, the third at 60.
      expect((await samvad(peer, 'research', 'one')).status).toBe(200);
      expect((await samvad(peer, 'research', 'two')).status).toBe(200);
      const spent = await samvad(peer, 'research', 'three');
      expect(spent.status).toBe(429);
      expect(spent.json).toMatchObject({ code: 'TOKEN_BUDGET_EXCEEDED' });
      expect(spent.json.message).toMatch(/has used its 50 tokens for today for skill "research"/);
      expect((await samvad(peer, 'chat', 'chat has its own')).status).toBe(200);
      expect(models()).toEqual(['openclaw/research', 'openclaw/research', 'openclaw/public']);

      const key = await issue('Budgeted');
      for (const expected of [200, 200, 429])
        expect((await rpc('/a2a/skills/research/jsonrpc', key.secret, 'again')).status).toBe(expected);
      expect((await viewOf('research')).limits.tokensPerDay).toBe(50);
    } finally {
      agent.app.updateSettings({ skills: before });
    }
  });
});
