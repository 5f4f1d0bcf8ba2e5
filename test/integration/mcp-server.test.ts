import { statSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Skill } from '../../src/agent/skill.js';
import { createDelegationToken } from '../../src/client/index.js';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import type {
  McpResponse,
  StatusResponse,
  TrafficEntry,
  TrafficResponse,
} from '../../src/protocol/console-api.js';
import type { Settings } from '../../src/settings/schema.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { FORGED_TEXT, startFakeAgent, type FakeAgent } from '../fixtures/fake-agent.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';
import { readSse } from '../helpers/sse.js';

// The bridge's MCP server, driven by the official MCP SDK client, against real agents on loopback: the
// project's own agent with a test skill, a callee that forges its reply signature, one with a broken card.

const echo: Skill = {
  id: 'echo',
  name: 'Echo',
  description: 'Echoes the text, word by word when streamed',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string' }, waitMs: { type: 'integer', maximum: 10_000 } },
    required: ['text'],
  },
  outputSchema: { type: 'object' },
  modes: ['sync', 'async', 'stream'],
  trust: 'public',
  handler: async ({ payload, emit, sender, envelope, signal }) => {
    if (typeof payload.waitMs === 'number') await sleep(payload.waitMs, undefined, { signal });
    for (const word of String(payload.text).split(' ')) emit(`${word} `);
    return { echo: payload.text, caller: sender, delegated: typeof envelope.delegationToken === 'string' };
  },
};

let bridge: TestAgent;
let callee: TestAgent;
let forger: FakeAgent;
let broken: FakeAgent;
let con: ConsoleHandle;
let configPath: string;
const clients: Client[] = [];

beforeAll(async () => {
  configPath = join(tempDir('mcp-openclaw-'), 'openclaw.json');
  // consolePort 0: the console is where its settings say, so the MCP URL has not "moved".
  bridge = await startAgent({
    settings: { consolePort: 0 },
    env: { OPENCLAW_CONFIG_PATH: configPath },
  });
  callee = await startAgent({ extraSkills: [echo] });
  forger = await startFakeAgent('wrong-key');
  broken = await startFakeAgent('invalid-card');
  con = await startConsole({
    app: bridge.app,
    store: openSettingsStore(bridge.dataDir),
    dataDir: bridge.dataDir,
    port: 0,
    staticDir: tempDir('mcp-ui-'),
  });
});

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  bridge.app.updateSettings(DEFAULT_POLICY);
});

afterAll(async () => {
  await con.close();
  await forger.close();
  await broken.close();
  await callee.close();
  await bridge.close();
});

const DEFAULT_POLICY: Partial<Settings> = {
  outbound: 'any',
  outboundAllowed: [],
  outboundPerMinute: 1000,
  outboundTimeoutMs: 45_000,
  devHttpPeers: true,
};

function mcpToken(): string {
  return (JSON.parse(readFileSync(join(bridge.dataDir, 'mcp.json'), 'utf8')) as { token: string }).token;
}

async function connect(token = mcpToken(), url = con.mcp.url): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

interface ToolAnswer {
  isError: boolean;
  text: string;
}

async function tool(name: string, args: Record<string, unknown>, client?: Client): Promise<ToolAnswer> {
  const result = await (client ?? (await connect())).callTool({ name, arguments: args });
  const content = result.content as { type: string; text?: string }[];
  return { isError: result.isError === true, text: content.map((part) => part.text ?? '').join('\n') };
}

async function api<T>(path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const response = await fetch(`${con.url}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${con.token}`, ...(init.headers as Record<string, string>) },
  });
  return { status: response.status, body: (await response.json()) as T };
}

async function outbound(): Promise<TrafficEntry[]> {
  return (await api<TrafficResponse>('/api/traffic?direction=out')).body.entries;
}

/** The newest outbound entry once it is there (the log is written as the call returns). */
async function lastOutbound(before: number): Promise<TrafficEntry> {
  await until(async () => (await outbound()).some((entry) => entry.id > before), 2000, 'an outbound entry');
  return (await outbound())[0] as TrafficEntry;
}

async function newestId(): Promise<number> {
  return (await outbound())[0]?.id ?? 0;
}

/** A raw request, so Host and Origin can be anything. */
function raw(
  headers: Record<string, string>,
  body = '{}',
): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const { port } = new URL(con.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the MCP server', () => {
  it('lists the SAMVAD tools with their input schemas, described for a model (the A2A ones beside them)', async () => {
    const { tools } = await (await connect()).listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'a2a_agent_card',
      'a2a_send',
      'a2a_task',
      'samvad_agent_card',
      'samvad_call',
      'samvad_task',
    ]);
    const call = tools.find((t) => t.name === 'samvad_call');
    expect(call?.description).toContain(bridge.app.card().id);
    expect(call?.description).toMatch(/untrusted/);
    expect(Object.keys(call?.inputSchema.properties ?? {}).sort()).toEqual(
      ['agent', 'delegationToken', 'mode', 'payload', 'skill'].sort(),
    );
    expect(call?.inputSchema.required?.sort()).toEqual(['agent', 'payload', 'skill']);
    const mode = (call?.inputSchema.properties as Record<string, { enum?: string[] }>).mode;
    expect(mode?.enum).toEqual(['sync', 'stream', 'async']);
    const task = tools.find((t) => t.name === 'samvad_task');
    expect(task?.inputSchema.required?.sort()).toEqual(['agent', 'taskId']);
  });

  it('samvad_agent_card: fetches, checks and summarises a card (skills, schemas, modes, trust)', async () => {
    const before = await newestId();
    const answer = await tool('samvad_agent_card', { agent: callee.id });
    expect(answer.isError).toBe(false);
    expect(answer.text).toContain(`Card of ${callee.id}`);
    expect(answer.text).toMatch(/untrusted/);
    const json = /<<<untrusted \w+ from [^>]+>>>\n([\s\S]*)\n<<<end untrusted/.exec(answer.text)?.[1];
    const summary = JSON.parse(json ?? '{}') as { skills: { id: string; modes: string[]; trust: string }[] };
    const skill = summary.skills.find((s) => s.id === 'echo');
    expect(skill).toMatchObject({ modes: ['sync', 'async', 'stream'], trust: 'public' });
    expect(skill).toHaveProperty('inputSchema.required', ['text']);
    // An https URL names the same agent (here the loopback http one: devHttpPeers).
    expect((await tool('samvad_agent_card', { agent: callee.url })).text).toContain(`Card of ${callee.id}`);
    expect(await lastOutbound(before)).toMatchObject({
      direction: 'out',
      callee: callee.id,
      endpoint: '/.well-known/agent.json',
      verdict: 'accepted',
    });
  });

  it('samvad_call sync: signed as the bridge, the reply verified and marked untrusted, one outbound entry', async () => {
    const before = await newestId();
    const answer = await tool('samvad_call', {
      agent: callee.id,
      skill: 'echo',
      payload: { text: 'hello there' },
    });
    expect(answer.isError).toBe(false);
    expect(answer.text).toMatch(/Reply signature: verified against the card of agent:\/\/127\.0\.0\.1/);
    expect(answer.text).toMatch(/untrusted data/);
    expect(answer.text).toContain('"echo":"hello there"');
    // The callee saw the bridge's own verified identity.
    expect(answer.text).toContain(`"caller":"${bridge.app.card().id}"`);
    const entry = await lastOutbound(before);
    expect(entry).toMatchObject({
      direction: 'out',
      sender: bridge.app.card().id,
      callee: callee.id,
      skill: 'echo',
      mode: 'sync',
      status: 200,
      verdict: 'accepted',
      replySignature: 'verified',
      endpoint: '/agent/message',
    });
    expect(entry.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('samvad_call stream: the streamed answer collected into one verified result', async () => {
    const before = await newestId();
    const answer = await tool('samvad_call', {
      agent: callee.id,
      skill: 'echo',
      payload: { text: 'one two three' },
      mode: 'stream',
    });
    expect(answer.isError).toBe(false);
    expect(answer.text).toContain('"echo":"one two three"');
    expect(answer.text).toMatch(/\(stream\).*verified/);
    expect(await lastOutbound(before)).toMatchObject({
      mode: 'stream',
      verdict: 'accepted',
      replySignature: 'verified',
    });
  });

  it('samvad_call async: a quick task comes back done; a slow one returns its taskId, and samvad_task follows it', async () => {
    const quick = await tool('samvad_call', {
      agent: callee.id,
      skill: 'echo',
      payload: { text: 'soon' },
      mode: 'async',
    });
    expect(quick.isError).toBe(false);
    expect(quick.text).toMatch(/\(async\) \(task [\w-]+\)/);
    expect(quick.text).toContain('"echo":"soon"');

    bridge.app.updateSettings({ outboundTimeoutMs: 1500 });
    const before = await newestId();
    const slow = await tool('samvad_call', {
      agent: callee.id,
      skill: 'echo',
      payload: { text: 'later', waitMs: 2500 },
      mode: 'async',
    });
    expect(slow.isError).toBe(false);
    const taskId = /taskId: ([\w-]+)/.exec(slow.text)?.[1];
    expect(taskId).toBeDefined();
    expect(slow.text).toMatch(/still (pending|running)/);
    expect(await lastOutbound(before)).toMatchObject({
      mode: 'async',
      taskId,
      status: 202,
      verdict: 'accepted',
    });

    const pending = await tool('samvad_task', { agent: callee.id, taskId });
    expect(pending.text).toMatch(/is (pending|running)/);
    let done: ToolAnswer | undefined;
    await until(
      async () => {
        done = await tool('samvad_task', { agent: callee.id, taskId });
        return /is done/.test(done.text);
      },
      8000,
      'the task to finish',
      200,
    );
    expect(done?.isError).toBe(false);
    expect(done?.text).toContain('"echo":"later"');
    expect(done?.text).toMatch(/Reply signature: verified against the card/);
  });

  it('passes a delegation token on to the callee, which verifies it', async () => {
    const issuer = await startAgent();
    try {
      const token = createDelegationToken(issuer.app.keys.signer, {
        iss: issuer.id,
        sub: bridge.app.card().id,
        scope: ['echo'],
        maxDepth: 1,
      });
      const answer = await tool('samvad_call', {
        agent: callee.id,
        skill: 'echo',
        payload: { text: 'for someone' },
        delegationToken: token,
      });
      expect(answer.isError).toBe(false);
      expect(answer.text).toContain('"delegated":true');
      // A token the callee cannot verify is refused there, with its code: it was sent.
      const forged = await tool('samvad_call', {
        agent: callee.id,
        skill: 'echo',
        payload: { text: 'x' },
        delegationToken: `${token.slice(0, -4)}AAAA`,
      });
      expect(forged.isError).toBe(true);
      expect(forged.text).toMatch(/AUTH_FAILED/);
    } finally {
      await issuer.close();
    }
  });
});

describe('refusals by the callee', () => {
  it("its signed refusal comes back as an error, its words marked untrusted, logged at its pipeline's step", async () => {
    const before = await newestId();
    const answer = await tool('samvad_call', { agent: callee.id, skill: 'echo', payload: { nope: 1 } });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(
      /refused the call with SCHEMA_INVALID \(HTTP 400\)\. Reply signature: verified against the card of/,
    );
    expect(answer.text).toMatch(/<<<untrusted \w+ from agent:\/\/127\.0\.0\.1:\d+>>>\n.*text/);
    expect(await lastOutbound(before)).toMatchObject({
      verdict: 'input',
      code: 'SCHEMA_INVALID',
      status: 400,
      replySignature: 'verified',
    });
  });

  it('a skill the card does not list is not called at all', async () => {
    const before = await newestId();
    const missing = await tool('samvad_call', { agent: callee.id, skill: 'translate', payload: {} });
    expect(missing.isError).toBe(true);
    expect(missing.text).toMatch(/has no skill "translate": its card lists the skills shown below/);
    expect(missing.text).toMatch(/>>>\n\["chat","echo"\]\n<<<end untrusted/);
    const entry = await lastOutbound(before);
    expect(entry).toMatchObject({ verdict: 'skill', status: 404 });
    expect(entry.code).toBeUndefined();
  });
});

describe('replies that cannot be trusted', () => {
  it('a reply signed with a key not on the callee card is an error, and its text never reaches the model', async () => {
    for (const mode of ['sync', 'async', 'stream'] as const) {
      const before = await newestId();
      const answer = await tool('samvad_call', { agent: forger.id, skill: 'echo', payload: {}, mode });
      expect(answer.isError).toBe(true);
      expect(answer.text).toMatch(/did not verify against its card/);
      expect(answer.text).not.toContain(FORGED_TEXT);
      expect(await lastOutbound(before)).toMatchObject({
        callee: forger.id,
        mode,
        verdict: 'handler',
        replySignature: 'failed',
      });
    }
  });

  it('a callee whose card breaks the schema is never called', async () => {
    const before = await newestId();
    const answer = await tool('samvad_call', { agent: broken.id, skill: 'echo', payload: {} });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/not a valid agent card/);
    expect(broken.requests.filter((path) => path.startsWith('/agent/'))).toEqual([]);
    expect((await tool('samvad_agent_card', { agent: broken.id })).isError).toBe(true);
    expect(await lastOutbound(before)).toMatchObject({ callee: broken.id, verdict: 'handler' });
  });
});

describe('the outbound policy', () => {
  it('off: every tool refuses, and the refusal is logged', async () => {
    bridge.app.updateSettings({ outbound: 'off' });
    const before = await newestId();
    const answer = await tool('samvad_call', { agent: callee.id, skill: 'echo', payload: { text: 'x' } });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/turned calls to other agents off \(setting outbound: off\)/);
    expect((await tool('samvad_agent_card', { agent: callee.id })).isError).toBe(true);
    expect((await outbound()).find((e) => e.id > before && e.skill === 'echo')).toMatchObject({
      verdict: 'access',
      status: 403,
      callee: callee.id,
    });
  });

  it('allowlist: only listed agents', async () => {
    bridge.app.updateSettings({ outbound: 'allowlist', outboundAllowed: ['agent://elsewhere.example'] });
    const refused = await tool('samvad_call', { agent: callee.id, skill: 'echo', payload: { text: 'x' } });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/not on the operator's list/);
    bridge.app.updateSettings({ outboundAllowed: [callee.id] });
    expect(
      (await tool('samvad_call', { agent: callee.id, skill: 'echo', payload: { text: 'x' } })).isError,
    ).toBe(false);
  });

  it('the per-minute cap', async () => {
    bridge.app.updateSettings({ outboundPerMinute: 2 });
    const client = await connect();
    // The earlier tests' requests are within the minute too: use the window up, then one more. Each call
    // is one request (the card is cached: a cached card costs none).
    let answer: ToolAnswer;
    let calls = 0;
    do {
      answer = await tool('samvad_call', { agent: callee.id, skill: 'echo', payload: { text: 'x' } }, client);
      calls++;
    } while (!answer.isError && calls < 5);
    expect(calls).toBeLessThanOrEqual(3);
    expect(answer.text).toMatch(/allows 2 a minute \(setting outboundPerMinute;/);
    const entry = (await outbound())[0];
    expect(entry).toMatchObject({ verdict: 'rate-limit', status: 429 });
    expect(entry?.code).toBeUndefined();
  });

  it('the address rules of card fetches: no loopback without devHttpPeers, https only', async () => {
    bridge.app.updateSettings({ devHttpPeers: false });
    const answer = await tool('samvad_call', { agent: callee.id, skill: 'echo', payload: { text: 'x' } });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/cannot be called: .*loopback|not a public/);
    expect((await tool('samvad_agent_card', { agent: 'agent://10.1.2.3' })).text).toMatch(
      /not a public address/,
    );
    expect((await tool('samvad_agent_card', { agent: 'http://example.com' })).text).toMatch(/not https/);
  });
});

describe('who may reach it', () => {
  it('needs its own token: none, a wrong one and the console token get 401', async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer nope' },
      { authorization: `Bearer ${con.token}` },
    ];
    for (const headers of attempts) {
      const answer = await raw(headers, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
      expect(answer.status).toBe(401);
      expect(answer.headers['www-authenticate']).toMatch(/^Bearer/);
    }
    await expect(connect('wrong-token')).rejects.toThrow();
    // And the MCP token does not open the console's API.
    const response = await fetch(`${con.url}/api/status`, {
      headers: { Authorization: `Bearer ${mcpToken()}` },
    });
    expect(response.status).toBe(401);
  });

  it('refuses another Host (DNS rebinding) or Origin (a web page), even with the token', async () => {
    const auth = { authorization: `Bearer ${mcpToken()}` };
    const host = await raw({ ...auth, host: 'evil.example:80' });
    expect(host.status).toBe(403);
    const origin = await raw({ ...auth, origin: 'http://evil.example' });
    expect(origin.status).toBe(403);
  });

  it('keeps its token in mcp.json (0600) across restarts; regenerating it ends the old one at once', async () => {
    const file = join(bridge.dataDir, 'mcp.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const before = mcpToken();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ url: con.mcp.url, token: before });

    const view = await api<McpResponse>('/api/mcp');
    expect(view.body).toMatchObject({ url: con.mcp.url, token: before, serverName: 'agent-bridge' });
    expect(view.body.command).toBe(
      `openclaw mcp add agent-bridge --url ${con.mcp.url} --transport streamable-http --header 'Authorization=Bearer ${before}'`,
    );
    // The status never carries it.
    const status = await api<StatusResponse>('/api/status');
    expect(status.body.mcp.url).toBe(con.mcp.url);
    expect(JSON.stringify(status.body)).not.toContain(before);

    // A second console on the same data dir (a restart) keeps the token.
    const again = await startConsole({
      app: bridge.app,
      store: openSettingsStore(bridge.dataDir),
      dataDir: bridge.dataDir,
      port: 0,
      staticDir: tempDir('mcp-ui-'),
    });
    try {
      expect(mcpToken()).toBe(before);
      expect((await (await connect(before, again.mcp.url)).listTools()).tools).toHaveLength(6);
    } finally {
      await again.close();
    }

    const fresh = await api<McpResponse>('/api/mcp/token', { method: 'POST' });
    expect(fresh.status).toBe(200);
    expect(fresh.body.token).not.toBe(before);
    expect(mcpToken()).toBe(fresh.body.token);
    await expect(connect(before)).rejects.toThrow();
    expect((await (await connect(fresh.body.token)).listTools()).tools).toHaveLength(6);
  });

  it("reports whether the gateway's config lists it, and with which token", async () => {
    expect((await api<StatusResponse>('/api/status')).body.mcp.listedInGatewayConfig).toBeUndefined();
    const entry = (token: string) =>
      JSON.stringify({
        mcp: {
          servers: {
            'agent-bridge': {
              url: con.mcp.url,
              transport: 'streamable-http',
              headers: { Authorization: `Bearer ${token}` },
            },
          },
        },
      });
    writeFileSync(configPath, entry(mcpToken()));
    let mcp = (await api<StatusResponse>('/api/status')).body.mcp;
    expect(mcp).toMatchObject({ listedInGatewayConfig: true });
    expect(mcp.gatewayConfigProblem).toBeUndefined();
    writeFileSync(configPath, entry('an-old-token'));
    mcp = (await api<StatusResponse>('/api/status')).body.mcp;
    expect(mcp).toMatchObject({ listedInGatewayConfig: true });
    expect(mcp.gatewayConfigProblem).toMatch(/another token/);
    writeFileSync(configPath, '{ mcp: { servers: { other: { url: "https://x.example/mcp" } } } }');
    expect((await api<StatusResponse>('/api/status')).body.mcp.listedInGatewayConfig).toBe(false);
  });
});

describe('outbound entries in the console', () => {
  it('are filtered by direction and streamed live on /api/events', async () => {
    const abort = new AbortController();
    const events = await fetch(`${con.url}/api/events?token=${con.token}`, { signal: abort.signal });
    const blocks = readSse(events);
    expect((await blocks.next()).value).toMatchObject({ event: 'hello' });
    await tool('samvad_call', { agent: callee.id, skill: 'echo', payload: { text: 'live' } });
    let live: TrafficEntry | undefined;
    for await (const block of blocks) {
      if (block.event === 'envelope') {
        live = block.data as TrafficEntry;
        if (live.direction === 'out' && live.skill === 'echo') break;
      }
    }
    abort.abort();
    expect(live).toMatchObject({
      direction: 'out',
      callee: callee.id,
      replySignature: 'verified',
      verdict: 'accepted',
    });

    const out = await outbound();
    expect(out.length).toBeGreaterThan(0);
    expect(out.every((entry) => entry.direction === 'out')).toBe(true);
    const inbound = (await api<TrafficResponse>('/api/traffic?direction=in')).body.entries;
    expect(inbound.every((entry) => entry.direction !== 'out')).toBe(true);
    const bad = await api<{ error: { fields: { field: string }[] } }>('/api/traffic?direction=sideways');
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields[0]?.field).toBe('direction');
  });
});
