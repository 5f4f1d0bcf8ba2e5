// Issue 28, item 4: two bridges whose agents call each other. Each bridge runs on loopback with its console
// and MCP server, and its own gateway double, told (as a real OpenClaw agent with the bridge's MCP tools
// would) to call the other agent through its own bridge's MCP server whenever it gets a message: A's agent
// over SAMVAD (samvad_call), B's over A2A (a2a_send). Callers reach them with the A2A SDK's own client. The
// loop stops at the limit, and each console's API says why.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { a2aClient } from '../helpers/a2a-agent.js';
import { asTask, replyText, send } from '../helpers/a2a-messages.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import {
  CHAIN_EXTENSION_URI,
  type OutboundBudgetView,
  type TrafficEntry,
  type TrafficResponse,
} from '../../src/protocol/index.js';
import { openSettingsStore } from '../../src/settings/store.js';

interface Bridge {
  agent: TestAgent;
  console: ConsoleHandle;
  gateway: GatewayDouble;
  mcpToken: string;
}

let a: Bridge;
let b: Bridge;

async function bridge(): Promise<Bridge> {
  const gateway = await startGatewayDouble({ token: 'gw-token-hops' });
  const agent = await startAgent({
    settings: {
      gatewayUrl: gateway.url,
      gatewayToken: 'gw-token-hops',
      consolePort: 0,
      outbound: 'any',
      outboundPerMinute: 10_000,
      outboundTimeoutMs: 10_000,
    },
  });
  const con = await startConsole({
    app: agent.app,
    store: openSettingsStore(agent.dataDir),
    dataDir: agent.dataDir,
    port: 0,
    staticDir: tempDir('hops-ui-'),
  });
  const { token } = JSON.parse(readFileSync(join(agent.dataDir, 'mcp.json'), 'utf8')) as { token: string };
  // OpenClaw's `mcp.servers` entry for the bridge: its URL and a static bearer token, nothing of the turn.
  gateway.set({ mcp: { url: con.mcp.url, token } });
  return { agent, console: con, gateway, mcpToken: token };
}

beforeAll(async () => {
  [a, b] = await Promise.all([bridge(), bridge()]);
  // A's agent asks B over SAMVAD; B's agent asks A over A2A (keyless: both run the `open` policy).
  a.gateway.set({
    agentTool: (message) => ({
      name: 'samvad_call',
      arguments: {
        agent: b.agent.id,
        skill: 'chat',
        payload: { message: `A asks: ${message.slice(0, 300)}` },
      },
    }),
  });
  b.gateway.set({
    agentTool: (message) => ({
      name: 'a2a_send',
      arguments: { agent: a.agent.url, message: `B asks: ${message.slice(0, 300)}` },
    }),
  });
});

beforeEach(() => {
  for (const side of [a, b]) {
    side.gateway.requests.length = 0;
    side.gateway.toolCalls.length = 0;
  }
});

afterAll(async () => {
  for (const side of [a, b]) {
    await side.console.close();
    await side.agent.close();
    await side.gateway.close();
  }
});

async function api<T>(side: Bridge, path: string): Promise<T> {
  const response = await fetch(`${side.console.url}${path}`, {
    headers: { authorization: `Bearer ${side.console.token}` },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

const traffic = async (side: Bridge, query: string) =>
  (await api<TrafficResponse>(side, `/api/traffic?${query}`)).entries;

const chats = (side: Bridge) => side.gateway.requests.filter((r) => r.path === '/v1/chat/completions');

/** A caller's message to A over A2A (the SDK's client), with a chain when it says it is in one. */
async function askA(text: string, chain?: { id: string; hop: number }): Promise<string> {
  const client = await a2aClient(a.agent.url, undefined);
  const request = send(text);
  if (chain && request.message) {
    request.message.metadata = { [CHAIN_EXTENSION_URI]: chain };
    request.message.extensions = [CHAIN_EXTENSION_URI];
  }
  const task = asTask(await client.sendMessage(request));
  expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  return replyText(task);
}

describe('two bridges whose agents call each other', () => {
  it('a loop started by a plain call stops when it comes back to A (hop 3); both consoles say why', async () => {
    const reply = await askA('what is the weather?');

    // A's agent called B (hop 2); B's agent called A back (hop 3), and A refused it: the chain is A's own.
    expect(a.gateway.toolCalls.map((call) => [call.name, call.isError])).toEqual([['samvad_call', false]]);
    expect(b.gateway.toolCalls.map((call) => [call.name, call.isError])).toEqual([['a2a_send', true]]);
    const refusedAtB = b.gateway.toolCalls[0]!.text;
    expect(refusedAtB).toMatch(/This call came back to this agent: it is hop 3 of chain/);
    // Every agent's turn ran once: A for the caller, B for A; A's turn for B's call never ran.
    expect(chats(a)).toHaveLength(1);
    expect(chats(b)).toHaveLength(1);
    expect(reply).toContain('samvad_call answered:');

    // A's console: the caller's message (no chain), its call out at hop 2, B's call back refused at hop 3.
    const aIn = await traffic(a, 'direction=in&protocol=a2a');
    const refused = aIn.find((entry) => entry.verdict === 'chain') as TrafficEntry;
    const [aOut] = await traffic(a, 'direction=out');
    expect(aOut).toMatchObject({ callee: b.agent.id, verdict: 'accepted', chain: { hop: 2 } });
    const chainId = aOut!.chain!.id;
    expect(refused).toMatchObject({
      protocol: 'a2a',
      status: 400,
      code: 'DELEGATION_EXCEEDED',
      chain: { id: chainId, hop: 3 },
      a2a: { failedAt: 'limits' },
    });
    expect(refused.message).toMatch(
      new RegExp(
        `^This call came back to this agent: it is hop 3 of chain ${chainId}, which this agent itself passed on \\d+ s ago \\(at hop 2\\)\\. Agents are calling each other in a loop`,
      ),
    );
    expect(aIn.find((entry) => entry.verdict === 'accepted')?.chain).toBeUndefined();

    // B's console: A's call in at hop 2, accepted; its own call out at hop 3, refused by A, in A's words.
    const [bIn] = await traffic(b, 'direction=in');
    expect(bIn).toMatchObject({ sender: a.agent.id, verdict: 'accepted', chain: { id: chainId, hop: 2 } });
    const [bOut] = await traffic(b, 'direction=out');
    expect(bOut).toMatchObject({ protocol: 'a2a', status: 400, chain: { id: chainId, hop: 3 } });
    expect(bOut?.verdict).not.toBe('accepted');
    expect(bOut?.message).toMatch(/came back to this agent/);
  });

  it('a chain that arrives deep stops at the hop limit: B refuses hop 5 (limit 4), and says so', async () => {
    const reply = await askA('and tomorrow?', { id: 'upstream-chain-7', hop: 4 });

    // A took hop 4 (its limit) and its agent called B at hop 5, which B refused before its agent ran.
    expect(a.gateway.toolCalls.map((call) => [call.name, call.isError])).toEqual([['samvad_call', true]]);
    expect(a.gateway.toolCalls[0]!.text).toMatch(/refused the call with DELEGATION_EXCEEDED \(HTTP 400\)/);
    expect(a.gateway.toolCalls[0]!.text).toMatch(/hop 5 of a chain of calls between agents/);
    expect(chats(b)).toHaveLength(0);
    expect(reply).toContain('samvad_call answered with an error:');

    const [bIn] = await traffic(b, 'direction=in');
    expect(bIn).toMatchObject({
      sender: a.agent.id,
      verdict: 'chain',
      status: 400,
      code: 'DELEGATION_EXCEEDED',
      chain: { id: 'upstream-chain-7', hop: 5 },
      passed: ['size', 'shape', 'timestamp', 'signature'],
    });
    expect(bIn?.message).toMatch(
      /^This call is hop 5 of a chain of calls between agents \(chain upstream-chain-7\), and this agent takes calls at most 4 hops deep \(its operator's setting hopLimit\)/,
    );
    const [aIn] = await traffic(a, 'direction=in');
    expect(aIn).toMatchObject({ verdict: 'accepted', chain: { id: 'upstream-chain-7', hop: 4 } });
    const [aOut] = await traffic(a, 'direction=out');
    // The callee's published code, at the step that code comes from (B's words say which rule refused).
    expect(aOut).toMatchObject({ verdict: 'delegation', code: 'DELEGATION_EXCEEDED', chain: { hop: 5 } });
    expect(aOut?.message).toMatch(/hop 5 of a chain of calls between agents/);
  });

  it('a raised limit lets the same chain go one hop further (the setting applies at once)', async () => {
    b.agent.app.updateSettings({ hopLimit: 5 });
    try {
      await askA('once more', { id: 'upstream-chain-8', hop: 4 });
      // B took hop 5 now; its agent called A at hop 6, over A's limit of 4: refused there.
      expect(chats(b)).toHaveLength(1);
      expect(b.gateway.toolCalls[0]!.text).toMatch(/hop 6 of a chain of calls between agents/);
    } finally {
      b.agent.app.updateSettings({ hopLimit: 4 });
    }
  });

  it("past A's daily budget for B, A's agent is told so by the tool; the console shows the budget spent", async () => {
    const before = await api<OutboundBudgetView>(a, '/api/outbound/budgets');
    const used = before.callees.find((row) => row.callee === b.agent.id)!;
    expect(used.calls).toBeGreaterThanOrEqual(3);
    expect(used.tokens).toBeGreaterThan(0);
    a.agent.app.updateSettings({ outboundCallsPerDay: used.calls });
    try {
      const reply = await askA('is it raining?');
      expect(a.gateway.toolCalls[0]).toMatchObject({ name: 'samvad_call', isError: true });
      expect(a.gateway.toolCalls[0]!.text).toContain(
        `The operator's daily budget for calls to ${b.agent.id} is spent: ${used.calls} of its ${used.calls} calls (setting outboundCallsPerDay) today. It resets at UTC midnight (`,
      );
      expect(reply).toContain('samvad_call answered with an error:');
      // Nothing reached B.
      expect(chats(b)).toHaveLength(0);
      const after = await api<OutboundBudgetView>(a, '/api/outbound/budgets');
      expect(after).toMatchObject({ callsPerDay: used.calls, tokensPerDay: 100_000 });
      expect(after.callees.find((row) => row.callee === b.agent.id)).toMatchObject({
        calls: used.calls,
        spent: 'calls',
      });
      const [aOut] = await traffic(a, 'direction=out');
      expect(aOut).toMatchObject({ verdict: 'rate-limit', status: 429 });
    } finally {
      a.agent.app.updateSettings({ outboundCallsPerDay: 100 });
    }
  });
});
