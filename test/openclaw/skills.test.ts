/**
 * Opt-in (`npm run test:openclaw`): issue 27, "How we will know" and "Done means", through real HTTP on a
 * REAL OpenClaw gateway with the stand-in model.
 *
 * The gateway runs a stock local config plus the agents the skills run on, each from the snippet the console
 * proposes: `public` (restricted, for chat), `research` and `ops` (the Research template: web search and
 * fetch) and `helper` (the Sandboxed helper template, on Podman). An agent with its default settings reaches
 * it through a recorder (gateway-recorder.ts) that keeps the `model` of each chat call, and reads its config
 * file as it would on the operator's machine (the real classifier). The operator does everything through the
 * console API: Chat to everyone, Research and Helper to approved senders, Ops to named partners only; approves
 * senders and issues keys, scoped or not. Callers are real: SAMVAD peers that sign envelopes naming a `skill`,
 * and the A2A SDK's own client on each skill's card URL. What reached which agent is told three ways: the
 * `model` the bridge sent (`openclaw/<agent>`), the agent's own workspace in the system prompt the gateway
 * built, and the tools the stand-in model was offered.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { TaskState } from '@a2a-js/sdk';
import JSON5 from 'json5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENCLAW_VERSION } from '../../scripts/openclaw/paths.js';
import { restrictedAgentSnippet, rosterFacts } from '../../src/bridge/agent-snippet.js';
import { SANDBOXED_HELPER_TOOLS, skillAgentSnippet } from '../../src/bridge/skill-snippet.js';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import type {
  A2AKeyIssueResponse,
  SkillAddRequest,
  SkillsResponse,
  SkillView,
  StatusResponse,
} from '../../src/protocol/console-api.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { a2aClient } from '../helpers/a2a-agent.js';
import { asTask, replyText, send } from '../helpers/a2a-messages.js';
import { agentPool, type TestAgent } from '../helpers/agents.js';
import { PATHS, envelope, post, sign } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';
import { mergeConfig, openclawAvailable, startGateway, stockConfig, type Gateway } from './gateway.js';
import type { GatewayConfigInput } from './gateway.js';
import { startGatewayRecorder, type GatewayRecorder } from './gateway-recorder.js';
import {
  callMarker,
  messagesText,
  STANDIN_REPLY,
  startModelServer,
  toolResults,
  type ModelServer,
} from './model-server.js';
import { HOST_REACHING, offered } from './offered.js';
import { probePodman, releasePodman, run } from './podman.js';

const available = openclawAvailable();
const runtime = available ? await probePodman() : ({ ok: false, why: 'OpenClaw is not installed' } as const);
const mark = (label: string) => `${label}-${randomBytes(6).toString('hex')}`;
/** Tool Search's controls, which an agent with any tool is offered (they reach only its own tools). */
const META = ['tool_call', 'tool_describe', 'tool_search'];
const WEB = ['web_fetch', 'web_search'];

/** The gateway's config: a stock local one, and each skill's agent from the snippet the console proposes. */
function skillsConfig(input: GatewayConfigInput): Record<string, unknown> {
  let config = stockConfig(input);
  for (const snippet of [
    (roster: ReturnType<typeof rosterFacts>) => restrictedAgentSnippet('public', roster),
    (roster: ReturnType<typeof rosterFacts>) => skillAgentSnippet('research', 'research', roster),
    (roster: ReturnType<typeof rosterFacts>) => skillAgentSnippet('research', 'ops', roster),
    (roster: ReturnType<typeof rosterFacts>) =>
      skillAgentSnippet('sandboxed', 'helper', roster, { backend: 'podman' }),
  ]) {
    config = mergeConfig(config, JSON5.parse(snippet(rosterFacts(config)))) as Record<string, unknown>;
  }
  return config;
}

/** The skills the operator publishes beside chat (Helper only where its sandbox can run). */
const PUBLISH: SkillAddRequest[] = [
  {
    id: 'research',
    name: 'Research',
    description: 'Searches the web.',
    agent: 'research',
    audience: 'approved',
  },
  ...(runtime.ok
    ? [
        {
          id: 'helper',
          name: 'Helper',
          description: 'Runs commands.',
          agent: 'helper',
          audience: 'approved' as const,
        },
      ]
    : []),
  { id: 'ops', name: 'Ops', description: 'Looks things up for partners.', agent: 'ops', audience: 'named' },
];
/** Each skill's agent, class, and what its class lets the model reach beyond Tool Search's controls. */
const EXPECTED: Record<string, { agent: string; toolClass: string; tools: string[] }> = {
  chat: { agent: 'public', toolClass: 'none', tools: [] },
  research: { agent: 'research', toolClass: 'web', tools: WEB },
  ops: { agent: 'ops', toolClass: 'web', tools: WEB },
  helper: { agent: 'helper', toolClass: 'sandboxed', tools: [...SANDBOXED_HELPER_TOOLS].sort() },
};

describe.skipIf(!available)(`real OpenClaw ${OPENCLAW_VERSION}: skills that do something`, () => {
  let model: ModelServer;
  let gateway: Gateway;
  let recorder: GatewayRecorder;
  let bridge: TestAgent;
  let con: ConsoleHandle;
  /** Nobody the operator knows; approved (every public and approved skill); approved for Ops alone. */
  let stranger: TestAgent;
  let friend: TestAgent;
  let opsPeer: TestAgent;
  /** A2A keys: scoped to Research, scoped to Ops, and unscoped (every public and approved skill). */
  let researchKey: string;
  let opsKey: string;
  let partnerKey: string;
  const bridges = agentPool(() => ({}));
  const peers = agentPool(() => ({}));

  beforeAll(async () => {
    model = await startModelServer();
    gateway = await startGateway({
      modelBaseUrl: model.baseUrl,
      config: skillsConfig,
      ...(runtime.ok ? { env: runtime.env } : {}),
    });
    await until(() => gateway.log().includes('[gateway] ready'), 90_000, 'the gateway to be ready', 200);
    recorder = await startGatewayRecorder(gateway.url);
    [stranger, friend, opsPeer] = await Promise.all([peers.start(), peers.start(), peers.start()]);
    // No periodic probe (the test agents' default): whatever the bridge learns of the gateway after its
    // start, it learns by itself.
    bridge = await bridges.start({
      settings: { gatewayUrl: recorder.url, gatewayToken: gateway.token },
      env: { OPENCLAW_CONFIG_PATH: gateway.configPath },
    });
    con = await startConsole({
      app: bridge.app,
      store: openSettingsStore(bridge.dataDir),
      dataDir: bridge.dataDir,
      port: 0,
    });

    // The operator, in the console: Chat to everyone, the skills beside it, who may call them.
    expect((await api(con, '/api/settings', { method: 'PUT', body: { access: 'open' } })).status).toBe(200);
    for (const skill of PUBLISH) expect((await api(con, '/api/skills', { body: skill })).status).toBe(201);
    const approve = (sender: string, skills?: string[]) =>
      api(con, '/api/access/approve', { body: { sender, ...(skills ? { skills } : {}) } });
    expect((await approve(friend.id)).status).toBe(200);
    expect((await approve(opsPeer.id, ['ops'])).status).toBe(200);
    const issue = async (name: string, skills?: string[]) => {
      const issued = await api<A2AKeyIssueResponse>(con, '/api/a2a/keys', {
        body: { name, ...(skills ? { skills } : {}) },
      });
      expect(issued.status).toBe(201);
      return issued.json.secret;
    };
    researchKey = await issue('Research partner', ['research']);
    opsKey = await issue('Ops partner', ['ops']);
    partnerKey = await issue('Partner');
    await until(
      async () =>
        (await skillsView()).every((view) => view.agent.check === 'present' && view.serving.serving),
      30_000,
      "every skill's agent found on the gateway, serving",
      200,
    );
  });

  afterAll(async () => {
    await con?.close();
    await bridges.closeAll();
    await peers.closeAll();
    // The containers OpenClaw started for this gateway, by its own command.
    if (runtime.ok) await gateway?.cli(['sandbox', 'recreate', '--all', '--force']);
    await recorder?.close();
    await gateway?.stop();
    await model?.close();
    releasePodman(runtime);
  });

  const skillsView = async () => (await api<SkillsResponse>(con, '/api/skills')).json.skills;
  const viewOf = async (id: string): Promise<SkillView> =>
    (await skillsView()).find((view) => view.setting.id === id)!;
  /** What reached the gateway and the model so far: a refusal must leave both as they were. */
  const reached = () => [recorder.chats().length, model.chatRequests().length];

  /** A signed SAMVAD call to `skill`, and the chat calls it made the bridge send the gateway. */
  async function samvad(from: TestAgent, skill: string, message: string) {
    const before = recorder.chats().length;
    const env = envelope(from.id, bridge.id, 'sync', { message }, { skill });
    const reply = await post(bridge.url, PATHS.sync, sign(env, from.app.keys.signer));
    return { reply, sent: recorder.chats().slice(before) };
  }

  /** The A2A SDK's own client on a skill's card (chat: the agent's own card), with `key` if any. */
  const client = (skill: string, key: string | undefined, statuses: number[] = []) =>
    a2aClient(skill === 'chat' ? bridge.url : `${bridge.url}/a2a/skills/${skill}/`, key, 'JSONRPC', {
      seen: (response) => statuses.push(response.status),
    });

  async function a2a(skill: string, key: string | undefined, text: string) {
    const before = recorder.chats().length;
    const task = asTask(await (await client(skill, key)).sendMessage(send(text)));
    return { task, sent: recorder.chats().slice(before) };
  }

  /** An A2A call that must be refused: the HTTP status, and the SDK's error message. */
  async function a2aRefused(skill: string, key: string | undefined) {
    const statuses: number[] = [];
    const sdk = await client(skill, key, statuses);
    const error = await sdk.sendMessage(send(mark('REFUSED'))).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    expect(error, `${skill}: an A2A call that should have been refused was served`).toBeDefined();
    return { status: statuses.at(-1), message: error!.message };
  }

  /**
   * The call that carried `text` reached `skill`'s agent: the bridge sent one chat call for
   * `openclaw/<agent>`, the gateway answered it and built the model's prompt in that agent's own workspace,
   * and the model was offered exactly the tools of the skill's class (those the console shows for it).
   */
  async function reachedItsAgent(skill: string, text: string, sent: { model?: string; status?: number }[]) {
    const { agent, toolClass, tools } = EXPECTED[skill]!;
    expect(sent.map((call) => [call.model, call.status])).toEqual([[`openclaw/${agent}`, 200]]);
    const requests = model.chatRequests().filter((r) => messagesText(r.body, 'user').includes(text));
    expect(requests.length, `model requests for ${skill}`).toBeGreaterThan(0);
    // The prompt names the agent's own workspace (a sandboxed one's is mounted elsewhere, and named in its
    // memory rule), and no other agent's.
    const workspaces = messagesText(requests[0]!.body, 'system').matchAll(
      /\/\.openclaw\/workspace-([a-z]+)/g,
    );
    expect([...new Set([...workspaces].map((m) => m[1]))]).toEqual([agent]);
    const seen = offered(requests[0]!);
    expect([...new Set(seen.reachable)].filter((tool) => !META.includes(tool)).sort(), skill).toEqual(tools);
    if (toolClass === 'none') expect(seen.reachable, `${skill}: offered anything at all`).toEqual([]);
    if (toolClass === 'web') {
      expect(seen.reachable.filter((tool) => ['exec', 'write', 'read'].includes(tool))).toEqual([]);
      expect(seen.reachable.filter((tool) => HOST_REACHING.has(tool))).toEqual([]);
    }
    expect((await viewOf(skill)).tools).toMatchObject({ class: toolClass, tools });
    return requests;
  }

  it('the console shows Chat public and Research for approved senders, each with its class and tools', async () => {
    const views = await skillsView();
    expect(views.map((v) => [v.setting.id, v.setting.audience, v.tools.class, v.tools.tools])).toEqual([
      ['chat', 'public', 'none', []],
      ...PUBLISH.map((s) => [s.id, s.audience, EXPECTED[s.id]!.toolClass, EXPECTED[s.id]!.tools]),
    ]);
    const status = (await api<StatusResponse>(con, '/api/status')).json;
    expect(status.skills).toEqual({ published: PUBLISH.length + 1, public: 1, notServing: 0 });
  });

  it(`reaches each skill over SAMVAD and with the A2A SDK's client, on its own agent, offered its class${runtime.ok ? '; Helper runs exec in its Podman container' : ` (Helper not published: ${runtime.why})`}`, async () => {
    // Chat by a stranger (keyless over A2A), Research by an approved sender and a key scoped to it, Ops by a
    // sender and a key scoped to it, Helper by an approved sender (its model runs exec) and an unscoped key.
    const callers: Record<string, [TestAgent, string | undefined]> = {
      chat: [stranger, undefined],
      research: [friend, researchKey],
      ops: [opsPeer, opsKey],
      helper: [friend, partnerKey],
    };
    // In the container: who runs it, which network it has, whether it sees this machine's files.
    const command = [
      'echo "uid=$(id -u) user=$(id -un)"',
      'echo "net=$(ls /sys/class/net | tr "\\n" " ")"',
      `test -e ${gateway.configPath} && echo "sees=host-config" || echo "sees=no-host-config"`,
    ].join('; ');
    for (const skill of ['chat', ...PUBLISH.map((s) => s.id)]) {
      const [peer, key] = callers[skill]!;
      const text = `${mark(`SAMVAD-${skill}`)}${skill === 'helper' ? ` ${callMarker('exec', { command })}` : ''}`;
      const { reply, sent } = await samvad(peer, skill, text);
      expect(reply.status, `${skill}: ${reply.text}`).toBe(200);
      expect(reply.json.result).toEqual({ reply: STANDIN_REPLY, channel: 'samvad' });
      const requests = await reachedItsAgent(skill, text, sent);
      if (skill !== 'chat') {
        expect(messagesText(requests[0]!.body, 'system')).toContain(`(id "${skill}")`);
      }
      if (skill === 'helper') {
        const result = requests.map((r) => toolResults(r.body)).join('\n');
        expect(result).toMatch(/uid=1000 user=sandbox/);
        expect(result).toMatch(/net=lo\s*$/m);
        expect(result).toContain('sees=no-host-config');
        expect(
          (await run('podman', ['ps', '--format', '{{.Names}}'], runtime.ok ? runtime.env : {})).out,
        ).toMatch(/openclaw-sbx-/);
      }

      const asked = mark(`A2A-${skill}`);
      const { task, sent: viaA2A } = await a2a(skill, key, asked);
      expect(task.status?.state, skill).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(replyText(task)).toBe(STANDIN_REPLY);
      await reachedItsAgent(skill, asked, viaA2A);
    }
  }, 600_000);

  it('refuses a stranger at every skill but Chat, and a key or an approval scoped to one skill at another, before the gateway sees anything', async () => {
    const before = reached();
    for (const skill of PUBLISH.map((s) => s.id)) {
      const { reply } = await samvad(stranger, skill, mark('STRANGER'));
      expect(reply.status, `${skill}: ${reply.text}`).toBe(403);
      expect(reply.json).toMatchObject({ code: 'AUTH_FAILED' });
      expect(reply.json.message).toContain(`ask this agent's operator for access to skill "${skill}"`);
      const keyless = await a2aRefused(skill, undefined);
      expect(keyless.status, keyless.message).toBe(403);
      expect(keyless.message).toContain(`ask this agent's operator for access to skill "${skill}"`);
    }
    // Scoped to Research: refused elsewhere. Scoped to Ops: refused at Research. Unscoped: not at Ops (named).
    for (const skill of PUBLISH.map((s) => s.id).filter((id) => id !== 'research')) {
      const refused = await a2aRefused(skill, researchKey);
      expect(refused.status, refused.message).toBe(403);
      expect(refused.message).toContain(`opens "research" only, not skill "${skill}"`);
    }
    const ops = await a2aRefused('research', opsKey);
    expect(ops.status, ops.message).toBe(403);
    expect(ops.message).toContain('opens "ops" only, not skill "research"');
    expect((await samvad(opsPeer, 'research', mark('OPS-PEER'))).reply.status).toBe(403);
    expect((await a2aRefused('ops', partnerKey)).status).toBe(403);
    expect((await samvad(friend, 'ops', mark('FRIEND'))).reply.status).toBe(403);
    expect(reached()).toEqual(before);
  });

  it('a skill whose agent gains exec by a config edit stops serving at once, until the operator accepts it again', async () => {
    /** Edits the gateway's config file, and waits for the running gateway to apply it (no restart). */
    async function giveOps(tool: string) {
      const config = JSON5.parse<{ agents: { entries: { ops: { tools: { allow: string[] } } } } }>(
        readFileSync(gateway.configPath, 'utf8'),
      );
      config.agents.entries.ops.tools.allow.push(tool);
      const applied = () => gateway.log().split('config hot reload applied').length;
      const [reloads, pid] = [applied(), gateway.pid];
      writeFileSync(gateway.configPath, `${JSON.stringify(config, null, 2)}\n`);
      await until(() => applied() > reloads, 60_000, 'the hot reload', 100);
      expect(gateway.pid).toBe(pid);
    }

    // The gateway runs the edit now; the bridge was told nothing (no probe, no "Check again").
    await giveOps('exec');
    const before = reached();
    const refused = await a2aRefused('ops', opsKey);
    expect(refused.status, refused.message).toBe(503);
    expect(refused.message).toContain('This skill is not available right now');
    const { reply } = await samvad(opsPeer, 'ops', mark('OPS-EXEC'));
    expect(reply.status, reply.text).toBe(503);
    expect(reply.json).toMatchObject({ code: 'AGENT_UNAVAILABLE' });
    expect(reached()).toEqual(before);
    const view = await viewOf('ops');
    expect(view).toMatchObject({
      tools: { class: 'host', tools: ['exec', ...WEB] },
      acceptance: { state: 'needed' },
      serving: { serving: false, reason: 'acceptance-needed' },
    });

    // The operator accepts exactly those tools: it serves, and the gateway does offer exec.
    const accepted = await api<SkillsResponse>(con, '/api/skills/ops/accept', {
      body: { tools: view.tools.tools },
    });
    expect(accepted.status).toBe(200);
    const text = mark('OPS-ACCEPTED');
    const served = await a2a('ops', opsKey, text);
    expect(served.task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(served.sent.map((call) => call.model)).toEqual(['openclaw/ops']);
    const request = model.chatRequests().find((r) => messagesText(r.body, 'user').includes(text))!;
    expect(offered(request).direct).toContain('exec');

    // Another tool later: asked again.
    await giveOps('write');
    expect((await a2aRefused('ops', opsKey)).status).toBe(503);
    expect(await viewOf('ops')).toMatchObject({
      acceptance: { state: 'changed', tools: ['exec', ...WEB] },
      serving: { serving: false, reason: 'tools-changed' },
    });
  }, 300_000);
});

if (!available) {
  describe('real OpenClaw: skills that do something (not installed)', () => {
    it.skip('needs the pinned OpenClaw runtime: run `npm run test:openclaw`, which installs it first', () => {});
  });
}

async function api<T = unknown>(
  con: ConsoleHandle,
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<{ status: number; json: T }> {
  const response = await fetch(`${con.url}${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      authorization: `Bearer ${con.token}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, json: (await response.json()) as T };
}
