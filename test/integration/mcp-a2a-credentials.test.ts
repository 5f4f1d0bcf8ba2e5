import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { OutboundCredentialsResponse, TrafficResponse } from '../../src/protocol/console-api.js';
import { startSdkA2AAgent, type SdkA2AAgent, type SdkA2AOptions } from '../fixtures/a2a-sdk-agent.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { tempDir } from '../helpers/agents.js';
import { freePort, startChildAgent } from '../helpers/child-agent.js';
import { startMcpBridge, type McpBridge } from '../helpers/mcp-bridge.js';
import { until } from '../helpers/polling.js';

// Issue 17, item 3: credentials for A2A agents that require one are kept by the bridge, per callee origin,
// write-only (console API, 0600 file), sent only to that exact origin, and never seen: not in a tool result
// (even when the callee echoes it), the traffic log, the console's views, errors, or the bridge's output.

const SECRET = 'sk-live-0123456789abcdefSECRET';
const OTHER_SECRET = 'api-key-9876543210ZYXWV';

let mcp: McpBridge;
const agents: SdkA2AAgent[] = [];

beforeAll(async () => {
  mcp = await startMcpBridge({
    outboundPerMinute: 10_000,
    outboundTimeoutMs: 5000,
    keepMessageContents: true,
  });
});

afterEach(async () => {
  const { credentials } = await list();
  for (const { url } of credentials) await api('POST', '/api/outbound/credentials/remove', { url });
});

afterAll(async () => {
  for (const agent of agents) await agent.close();
  await mcp.close();
});

async function sdkAgent(options: SdkA2AOptions = {}): Promise<SdkA2AAgent> {
  const agent = await startSdkA2AAgent(options);
  agents.push(agent);
  return agent;
}

async function api(
  method: string,
  path: string,
  body?: unknown,
  base: { url: string; token: string } = mcp.console,
) {
  const response = await fetch(`${base.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${base.token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

async function list(): Promise<OutboundCredentialsResponse> {
  return JSON.parse((await api('GET', '/api/outbound/credentials')).text) as OutboundCredentialsResponse;
}

const keep = (body: Record<string, unknown>) => api('POST', '/api/outbound/credentials', body);
const bearer = (agent: { url: string }, value = SECRET) => keep({ url: agent.url, scheme: 'bearer', value });

describe('the console keeps credentials write-only', () => {
  it('lists them without their values; the file is 0600; one per origin, replaced; removed at once', async () => {
    const added = await keep({ url: 'https://Agent.Example.com/', scheme: 'bearer', value: SECRET });
    expect(added.status).toBe(200);
    expect(added.text).not.toContain(SECRET);
    const view = JSON.parse(added.text) as OutboundCredentialsResponse;
    expect(view.credentials).toEqual([
      { url: 'https://agent.example.com', scheme: 'bearer', addedAt: expect.any(String) as string },
    ]);
    const file = join(mcp.bridge.dataDir, 'a2a-credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toContain(SECRET);

    await keep({
      url: 'https://agent.example.com',
      scheme: 'apiKey',
      header: 'X-Api-Key',
      value: OTHER_SECRET,
    });
    expect((await list()).credentials).toEqual([
      {
        url: 'https://agent.example.com',
        scheme: 'apiKey',
        header: 'X-Api-Key',
        addedAt: expect.any(String) as string,
      },
    ]);
    expect(readFileSync(file, 'utf8')).not.toContain(SECRET);
    expect((await api('GET', '/api/outbound/credentials')).text).not.toContain(OTHER_SECRET);

    const removed = await api('POST', '/api/outbound/credentials/remove', {
      url: 'https://agent.example.com',
    });
    expect(JSON.parse(removed.text)).toEqual({ credentials: [] });
    expect(readFileSync(file, 'utf8')).not.toContain(OTHER_SECRET);
    const again = await api('POST', '/api/outbound/credentials/remove', { url: 'https://agent.example.com' });
    expect(again.status).toBe(404);
  });

  it('refuses what it cannot keep, with the field and the fix, never quoting the value', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ url: 'https://a.example/a2a', scheme: 'bearer', value: SECRET }, 'url', /base URL/],
      [{ url: 'http://a.example', scheme: 'bearer', value: SECRET }, 'url', /https/],
      [{ url: 'https://a.example', scheme: 'basic', value: SECRET }, 'scheme', /"bearer".*"apiKey"/],
      [
        { url: 'https://a.example', scheme: 'apiKey', header: 'Content-Type', value: SECRET },
        'header',
        /not one the protocol sets/,
      ],
      [
        { url: 'https://a.example', scheme: 'apiKey', header: 'X Bad', value: SECRET },
        'header',
        /header name/,
      ],
      [
        { url: 'https://a.example', scheme: 'bearer', value: `${SECRET}\r\nX-Injected: 1` },
        'value',
        /no line breaks/,
      ],
      [{ url: 'https://a.example', scheme: 'bearer', value: 'short' }, 'value', /8 to 4096/],
    ];
    for (const [body, field, message] of cases) {
      const answer = await keep(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      const error = (JSON.parse(answer.text) as { error: { message: string; fields: { field: string }[] } })
        .error;
      expect(error.fields[0]?.field).toBe(field);
      expect(error.message).toMatch(message);
      expect(answer.text).not.toContain(SECRET);
    }
    expect((await list()).credentials).toEqual([]);
  });

  it('needs the console token, like every /api route', async () => {
    const response = await fetch(`${mcp.console.url}/api/outbound/credentials`);
    expect(response.status).toBe(401);
    const write = await fetch(`${mcp.console.url}/api/outbound/credentials`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: 'https://a.example', scheme: 'bearer', value: SECRET }),
    });
    expect(write.status).toBe(401);
    expect((await list()).credentials).toEqual([]);
  });
});

describe('calls to an agent that requires a credential', () => {
  it('bearer: refused without one (the model is told to ask the operator); sent once the operator keeps it', async () => {
    const agent = await sdkAgent({ requires: { scheme: 'bearer', token: SECRET } });
    const without = await mcp.tool('a2a_send', { agent: agent.url, message: 'hi' });
    expect(without.isError).toBe(true);
    expect(without.text).toMatch(
      new RegExp(
        `^${agent.url} refused the request as not authorized \\(HTTP 401\\)\\. The operator keeps no credential for it\\.`,
      ),
    );
    expect(mcp.events.at(-1)).toMatchObject({ verdict: 'trust', status: 401, protocol: 'a2a' });

    await bearer(agent);
    const card = await mcp.tool('a2a_agent_card', { agent: agent.url });
    expect(card.text).toContain(
      `Its card names these ways to authenticate: HTTP bearer. The operator keeps a credential for ${agent.url} (a bearer token): the bridge adds it to every request to ${agent.url}, and you never see it.`,
    );
    const sent = await mcp.tool('a2a_send', { agent: agent.url, message: 'hi', mode: 'stream' });
    expect(sent.isError).toBe(false);
    expect(agent.requests.at(-1)).toMatchObject({
      rpc: 'SendStreamingMessage',
      authorization: `Bearer ${SECRET}`,
    });
    expect(card.text + sent.text).not.toContain(SECRET);
  });

  it('API key: sent in the header the operator named', async () => {
    const agent = await sdkAgent({
      requires: { scheme: 'apiKey', header: 'X-Api-Key', token: OTHER_SECRET },
    });
    await keep({ url: agent.url, scheme: 'apiKey', header: 'x-api-key', value: OTHER_SECRET });
    const card = await mcp.tool('a2a_agent_card', { agent: agent.url });
    expect(card.text).toContain(
      'Its card names these ways to authenticate: an API key. The operator keeps a credential',
    );
    expect(card.text).not.toContain('not of a kind the card names');
    expect((await mcp.tool('a2a_send', { agent: agent.url, message: 'hi', mode: 'submit' })).isError).toBe(
      false,
    );
    expect(
      agent.requests.filter((r) => r.rpc).every((r) => r.apiKey === OTHER_SECRET && !r.authorization),
    ).toBe(true);
  });

  it('a wrong credential: refused, and the model is told the kept one may be wrong', async () => {
    const agent = await sdkAgent({ requires: { scheme: 'bearer', token: SECRET } });
    await bearer(agent, 'not-the-right-one-123');
    const answer = await mcp.tool('a2a_send', { agent: agent.url, message: 'hi' });
    expect(answer.text).toContain(
      'The bridge sent the credential the operator keeps for it: it may be wrong, expired or of another kind. Tell the operator.',
    );
  });

  it('goes only to that exact origin: not to another agent, not to an interface the card names elsewhere', async () => {
    const elsewhere = await sdkAgent();
    const agent = await sdkAgent({
      card: (card) => {
        const [first] = card.supportedInterfaces as { url: string }[];
        first!.url = `${elsewhere.url}/a2a/jsonrpc`;
        return card;
      },
    });
    await bearer(agent);
    expect((await mcp.tool('a2a_send', { agent: agent.url, message: 'hi' })).isError).toBe(false);
    expect((await mcp.tool('a2a_send', { agent: elsewhere.url, message: 'hi' })).isError).toBe(false);
    expect(elsewhere.requests.map((r) => r.rpc ?? r.path)).toEqual([
      'SendMessage',
      '/.well-known/agent-card.json',
      'SendMessage',
    ]);
    expect(elsewhere.requests.every((r) => r.authorization === undefined)).toBe(true);
    // The same host by another name is another origin.
    const byName = agent.url.replace('127.0.0.1', 'localhost');
    await mcp.tool('a2a_agent_card', { agent: byName });
    expect(agent.requests.at(-1)).toMatchObject({ path: '/.well-known/agent-card.json' });
    expect(agent.requests.at(-1)?.authorization).toBeUndefined();
  });

  it('the model cannot pass one: arguments the tools do not take are never sent', async () => {
    const agent = await sdkAgent({ requires: { scheme: 'bearer', token: SECRET } });
    const answer = await mcp.tool('a2a_send', {
      agent: agent.url,
      message: 'hi',
      authorization: `Bearer ${SECRET}`,
      headers: { Authorization: `Bearer ${SECRET}` },
      credential: SECRET,
    });
    expect(answer.text).toMatch(/refused the request as not authorized \(HTTP 401\)/);
    expect(agent.requests.every((r) => r.authorization === undefined)).toBe(true);
  });
});

/** An agent that echoes the credential it was sent: in its reply, its status, its card, its errors. */
function echoingAgent(): Promise<SdkA2AAgent> {
  return sdkAgent({
    card: (card) => ({ ...card, description: `I was asked with ${SECRET}` }),
    intercept: (seen) => {
      if (!seen.rpc) return undefined;
      if (seen.rpc === 'GetTask') {
        return {
          status: 401,
          raw: `refused: you sent "${seen.authorization ?? ''}"`,
          contentType: 'text/plain',
        };
      }
      const text = `you sent ${seen.authorization ?? 'nothing'}`;
      const message = { messageId: 'm-1', contextId: 'ctx-1', role: 'ROLE_AGENT', parts: [{ text }] };
      return { status: 200, body: { jsonrpc: '2.0', id: seen.id, result: { message } } };
    },
  });
}

describe('a credential is never seen', () => {
  it('not in a tool result (a callee that echoes it), the traffic log, the console status or settings', async () => {
    const agent = await echoingAgent();
    await bearer(agent);
    const results = [
      await mcp.tool('a2a_agent_card', { agent: agent.url }),
      await mcp.tool('a2a_send', { agent: agent.url, message: 'hi' }),
      await mcp.tool('a2a_task', { agent: agent.url, taskId: 'task-1' }),
    ];
    expect(agent.requests.filter((r) => r.rpc).map((r) => r.authorization)).toEqual([
      `Bearer ${SECRET}`,
      `Bearer ${SECRET}`,
    ]);
    expect(results[1]?.text).toContain('you sent Bearer [a credential the bridge keeps]');
    expect(results[2]?.text).toContain('[a credential the bridge keeps]');
    for (const result of results) expect(result.text).not.toContain(SECRET);

    const traffic = await api('GET', '/api/traffic?direction=out');
    expect((JSON.parse(traffic.text) as TrafficResponse).entries.some((e) => e.callee === agent.url)).toBe(
      true,
    );
    expect(traffic.text).toContain('[a credential the bridge keeps]');
    for (const path of [
      '/api/traffic',
      '/api/status',
      '/api/settings',
      '/api/mcp',
      '/api/outbound/credentials',
    ])
      expect((await api('GET', path)).text, path).not.toContain(SECRET);
    await until(
      () => readFileSync(join(mcp.bridge.dataDir, 'logs', 'traffic.jsonl'), 'utf8').includes(agent.url),
      2000,
      'the traffic file',
    );
    expect(readFileSync(join(mcp.bridge.dataDir, 'logs', 'traffic.jsonl'), 'utf8')).not.toContain(SECRET);
  });
});

describe("the bridge's own output", () => {
  let gateway: GatewayDouble;
  beforeAll(async () => {
    gateway = await startGatewayDouble();
  });
  afterAll(() => gateway.close());

  it('never holds a credential: the real `serve` process, its stdout and stderr, after calls that echo it', async () => {
    const dataDir = tempDir();
    const port = await freePort();
    const child = await startChildAgent([
      '--port',
      String(port),
      '--data-dir',
      dataDir,
      '--tunnel',
      'none',
      '--console-port',
      '0',
      '--dev-http-peers',
      '--gateway-url',
      gateway.url,
      '--gateway-token',
      'gw-token-credentials',
    ]);
    try {
      await until(() => child.output().includes('Access:'), 10_000, `the start output:\n${child.output()}`);
      const consoleInfo = JSON.parse(readFileSync(join(dataDir, 'console.json'), 'utf8')) as {
        url: string;
        token: string;
      };
      const mcpInfo = JSON.parse(readFileSync(join(dataDir, 'mcp.json'), 'utf8')) as {
        url: string;
        token: string;
      };
      const agent = await echoingAgent();
      expect((await api('PUT', '/api/settings', { keepMessageContents: true }, consoleInfo)).status).toBe(
        200,
      );
      const kept = await api(
        'POST',
        '/api/outbound/credentials',
        { url: agent.url, scheme: 'bearer', value: SECRET },
        consoleInfo,
      );
      expect(kept.status).toBe(200);
      const client = new Client({ name: 'credentials-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(mcpInfo.url), {
          requestInit: { headers: { Authorization: `Bearer ${mcpInfo.token}` } },
        }),
      );
      const texts: string[] = [];
      for (const [name, args] of [
        ['a2a_agent_card', { agent: agent.url }],
        ['a2a_send', { agent: agent.url, message: 'hi' }],
        ['a2a_task', { agent: agent.url, taskId: 'task-1' }],
      ] as const) {
        const result = await client.callTool({ name, arguments: args });
        texts.push((result.content as { text?: string }[]).map((part) => part.text ?? '').join('\n'));
      }
      await client.close();
      expect(agent.requests.filter((r) => r.rpc).every((r) => r.authorization === `Bearer ${SECRET}`)).toBe(
        true,
      );
      expect(texts.join('\n')).not.toContain(SECRET);
      child.process.kill('SIGTERM');
      expect(await child.exited).toBe('0');
      expect(child.output()).not.toContain(SECRET);
      expect(readFileSync(join(dataDir, 'logs', 'traffic.jsonl'), 'utf8')).not.toContain(SECRET);
    } finally {
      if (child.process.exitCode === null) child.process.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
