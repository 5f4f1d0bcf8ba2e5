// An edit of OpenClaw's config file is judged when the gateway may run it, not at the next probe: OpenClaw
// hot reloads a valid edit about half a second after it is saved, and the bridge probes every 30 s. So an
// agent that gains host tools stops serving at the next call, the console is told at once, and an edit that
// changes the roster is checked again until the gateway runs it. No periodic probe here (gatewayProbeMs 0),
// nobody presses "Check again": whatever the bridge learns after its start, it learns from the edit itself.
// Against the gateway double and a real config file.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayAgentView } from '../../src/protocol/console-api.js';
import type { SkillSetting } from '../../src/protocol/skills.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { agentPool, tempDir, type TestAgent } from '../helpers/agents.js';
import { PATHS, envelope, post, sign, type Reply } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';

const TOKEN = 'gw-token-config-edits';
const CHAT = '/v1/chat/completions';
const dir = tempDir('openclaw-edits-');
const configDir = join(dir, '.openclaw');
const configPath = join(configDir, 'openclaw.json');
const RESTRICTED = { profile: 'minimal', deny: ['*'], codeMode: false };
const WEB = ['web_search', 'web_fetch'];
/** OpenClaw 2026.9.6 applies an edit 500 ms after it is saved at the soonest (write stability, debounce). */
const BEFORE_OPENCLAW_APPLIES_MS = 250;

type Entries = Record<string, { tools: Record<string, unknown> }>;
const roster = (): Entries => ({
  main: { tools: {} },
  public: { tools: RESTRICTED },
  research: { tools: { allow: [...WEB] } },
});
const text = (entries: Entries) =>
  JSON.stringify({ tools: { codeMode: false }, agents: { ownership: 'explicit', entries } });
/** Saves the file as an editor that writes in place does. */
const writeInPlace = (entries: Entries) => writeFileSync(configPath, text(entries));
/** Saves it as most editors and `openclaw config set` do: a new file renamed over the old one. */
function replace(entries: Entries): void {
  writeFileSync(`${configPath}.tmp`, text(entries));
  renameSync(`${configPath}.tmp`, configPath);
}

const RESEARCH: SkillSetting = {
  id: 'research',
  name: 'Research',
  description: 'Searches the web.',
  examples: [],
  agent: 'research',
  audience: 'public',
  limits: {},
  paused: false,
};

let gateway: GatewayDouble;
let peer: TestAgent;
const agents = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));
const peers = agentPool(() => ({}));

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
  peer = await peers.start();
});
beforeEach(() => {
  mkdirSync(configDir, { recursive: true });
  writeInPlace(roster());
  gateway.set({ agents: ['main', 'public', 'research'], probeDelayMs: 0 });
  gateway.requests.length = 0;
});
afterEach(() => agents.closeAll());
afterAll(async () => {
  await peers.closeAll();
  await gateway.close();
  rmSync(dir, { recursive: true, force: true });
});

async function bridge(): Promise<TestAgent> {
  const agent = await agents.start({
    settings: { gatewayAgent: 'public', skills: [RESEARCH] },
    env: { OPENCLAW_CONFIG_PATH: configPath },
  });
  await until(
    () => agent.app.published.response().skills.every((view) => view.agent.check === 'present'),
    3000,
    'the first check of every agent',
  );
  return agent;
}

function call(agent: TestAgent, skill: string): Promise<Reply> {
  const env = envelope(peer.id, agent.id, 'sync', { message: `to ${skill}` }, { skill });
  return post(agent.url, PATHS.sync, sign(env, peer.app.keys.signer));
}

const chats = () => gateway.requests.filter((r) => r.path === CHAT).length;
const serving = (agent: TestAgent, skill: string) =>
  agent.app.published.response().skills.find((view) => view.setting.id === skill)!.serving;

describe("an edit of OpenClaw's config file", () => {
  it("that gives a skill's agent exec stops it at the next call, and one that takes exec away serves it again", async () => {
    const agent = await bridge();
    expect((await call(agent, 'research')).status).toBe(200);
    // The gateway is slow to list its agents: no probe answers in time, only the file can tell.
    gateway.set({ probeDelayMs: 5000 });

    writeInPlace({ ...roster(), research: { tools: { allow: [...WEB, 'exec'] } } });
    await sleep(BEFORE_OPENCLAW_APPLIES_MS);
    const forwarded = chats();
    const refused = await call(agent, 'research');
    expect(refused.status, refused.text).toBe(503);
    expect(refused.json.code).toBe('AGENT_UNAVAILABLE');
    expect(chats()).toBe(forwarded);
    expect(serving(agent, 'research')).toMatchObject({ serving: false, reason: 'audience' });

    replace(roster());
    await sleep(BEFORE_OPENCLAW_APPLIES_MS);
    expect((await call(agent, 'research')).status).toBe(200);
    expect(chats()).toBe(forwarded + 1);
  });

  it("that gives chat's agent exec, saved by a rename, stops chat at the next call", async () => {
    const agent = await bridge();
    expect((await call(agent, 'chat')).status).toBe(200);
    gateway.set({ probeDelayMs: 5000 });

    replace({ ...roster(), public: { tools: { profile: 'coding', allow: ['exec'], codeMode: false } } });
    await sleep(BEFORE_OPENCLAW_APPLIES_MS);
    const forwarded = chats();
    const refused = await call(agent, 'chat');
    expect(refused.status, refused.text).toBe(503);
    expect(refused.json.code).toBe('AGENT_UNAVAILABLE');
    expect(chats()).toBe(forwarded);
    expect(agent.app.gatewayTarget.view).toMatchObject({
      tools: { verdict: 'exposes-host-tools', tools: ['exec'] },
      acceptance: { state: 'needed' },
    });
  });

  it('is told to the console at once, without a call or "Check again"', async () => {
    const agent = await bridge();
    let skills = 0;
    const views: GatewayAgentView[] = [];
    agent.app.on('skills', () => (skills += 1));
    agent.app.on('gatewayAgent', (view) => views.push(view));
    writeInPlace({
      ...roster(),
      public: { tools: { profile: 'coding', allow: ['exec'], codeMode: false } },
      research: { tools: { allow: [...WEB, 'exec'] } },
    });
    await until(() => skills > 0 && views.length > 0, 3000, 'the console told');
    expect(views.at(-1)).toMatchObject({ acceptance: { state: 'needed' } });
    expect(agent.app.published.response().skills.map((view) => view.serving.serving)).toEqual([false, false]);
  });

  it('that adds an agent is unverified until the gateway runs it, then serves, without a probe', async () => {
    const agent = await bridge();
    // OpenClaw takes the edit about half a second after it is saved; until then it lists the old roster.
    replace({ ...roster(), helper: { tools: RESTRICTED } });
    setTimeout(() => gateway.set({ agents: ['main', 'public', 'research', 'helper'] }), 600);
    await sleep(BEFORE_OPENCLAW_APPLIES_MS);
    const early = await call(agent, 'chat');
    expect(early.status, early.text).toBe(503);
    expect(serving(agent, 'research')).toMatchObject({ serving: false, reason: 'unverified' });

    await until(() => serving(agent, 'research').serving, 10_000, 'the edit checked again');
    expect(agent.app.gatewayTarget.view.tools.verdict).toBe('restricted');
    expect((await call(agent, 'chat')).status).toBe(200);
    expect((await call(agent, 'research')).status).toBe(200);
  });
});
