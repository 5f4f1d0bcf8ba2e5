import { TaskState } from '@a2a-js/sdk';
import { AgentEvent } from '@a2a-js/sdk/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Settings } from '../../src/settings/schema.js';
import {
  artifact,
  startSdkA2AAgent,
  status,
  task,
  type SdkA2AAgent,
  type SdkA2AOptions,
} from '../fixtures/a2a-sdk-agent.js';
import { startHostileAgent } from '../fixtures/hostile-agent.js';
import { startMcpBridge, type McpBridge } from '../helpers/mcp-bridge.js';
import { blockValue } from '../helpers/untrusted-blocks.js';

// The A2A tools under the SAMVAD tools' rules (issue 17, item 3): the outbound policy (an interface a card
// lists on another host included), one per-minute cap over every request to any agent (counted at the
// callee), the deadline, the reply limit, the address rules, no redirects. Callees: the A2A SDK's server.

const DEFAULTS: Partial<Settings> = {
  outbound: 'any',
  outboundAllowed: [],
  outboundPerMinute: 10_000,
  outboundTimeoutMs: 5000,
  outboundMaxReplyBytes: 262_144,
  devHttpPeers: true,
};

let mcp: McpBridge;
const closing: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  mcp = await startMcpBridge(DEFAULTS);
});

afterEach(async () => {
  mcp.bridge.app.updateSettings(DEFAULTS);
  for (const agent of closing.splice(0)) await agent.close();
});

afterAll(() => mcp.close());

async function sdkAgent(options: SdkA2AOptions = {}): Promise<SdkA2AAgent> {
  const agent = await startSdkA2AAgent(options);
  closing.push(agent);
  return agent;
}

const send = (agent: { url: string }, message: string, extra: Record<string, unknown> = {}) =>
  mcp.tool('a2a_send', { agent: agent.url, message, ...extra });

describe('the outbound policy', () => {
  it('off: every A2A tool refuses, nothing reaches the agent, the refusal is logged', async () => {
    const agent = await sdkAgent();
    mcp.bridge.app.updateSettings({ outbound: 'off' });
    for (const [name, args] of [
      ['a2a_agent_card', { agent: agent.url }],
      ['a2a_send', { agent: agent.url, message: 'hi' }],
      ['a2a_task', { agent: agent.url, taskId: 't-1' }],
    ] as const) {
      const answer = await mcp.tool(name, args);
      expect(answer.isError).toBe(true);
      expect(answer.text).toMatch(/turned calls to other agents off \(setting outbound: off\)/);
    }
    expect(agent.requests).toEqual([]);
    expect(mcp.events.at(-1)).toMatchObject({
      protocol: 'a2a',
      verdict: 'access',
      status: 403,
      callee: agent.url,
    });
  });

  it('allowlist: the agent listed by its https base URL or its agent:// id; any other refused', async () => {
    const agent = await sdkAgent();
    const host = new URL(agent.url).host;
    mcp.bridge.app.updateSettings({ outbound: 'allowlist', outboundAllowed: ['https://elsewhere.example'] });
    const refused = await send(agent, 'hi');
    expect(refused.text).toBe(
      `${agent.url} is not on the operator's list of agents this agent may call (setting outbound: allowlist). ` +
        'Tell the operator if you need it; they can add it on the console (Access > Calls out).',
    );
    expect(agent.requests).toEqual([]);
    for (const entry of [`https://${host}`, `agent://${host}`]) {
      mcp.bridge.app.updateSettings({ outboundAllowed: [entry] });
      expect((await send(agent, 'hi')).isError, entry).toBe(false);
    }
  });

  it("allowlist: an interface the listed agent's card names on another host is refused; under any, it is called", async () => {
    const elsewhere = await sdkAgent();
    const agent = await sdkAgent({
      card: (card) => {
        const [first] = card.supportedInterfaces as { url: string }[];
        first!.url = `${elsewhere.url}/a2a/jsonrpc`;
        return card;
      },
    });
    mcp.bridge.app.updateSettings({
      outbound: 'allowlist',
      outboundAllowed: [agent.url.replace('http:', 'https:')],
    });
    const refused = await send(agent, 'hi');
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(
      new RegExp(
        `^The card of ${agent.url} sends this request to another address, and its host is not on the operator's list of agents this agent may call: nothing was sent there\\.`,
      ),
    );
    expect(blockValue(refused.text, 'the address its card gives')).toBe(`${elsewhere.url}/a2a/jsonrpc`);
    expect(elsewhere.requests).toEqual([]);
    mcp.bridge.app.updateSettings({ outbound: 'any' });
    expect((await send(agent, 'hi')).isError).toBe(false);
    expect(elsewhere.requests.map((r) => r.rpc)).toEqual(['SendMessage']);
  });

  it('address rules: https only, public addresses only (loopback only with --dev-http-peers), no agent:// ids', async () => {
    const agent = await sdkAgent();
    mcp.bridge.app.updateSettings({ devHttpPeers: false });
    const port = new URL(agent.url).port;
    expect((await mcp.tool('a2a_agent_card', { agent: agent.url })).text).toBe(
      `http://127.0.0.1:${port} is not https: agents are reached over https only.`,
    );
    expect((await mcp.tool('a2a_agent_card', { agent: `https://127.0.0.1:${port}` })).text).toMatch(
      /cannot be called: 127\.0\.0\.1 is not a public address/,
    );
    expect((await mcp.tool('a2a_agent_card', { agent: 'https://10.1.2.3' })).text).toMatch(
      /^https:\/\/10\.1\.2\.3 cannot be called: 10\.1\.2\.3 is not a public address/,
    );
    expect((await mcp.tool('a2a_agent_card', { agent: 'https://printer.local' })).text).toMatch(
      /is not a public host name/,
    );
    expect((await mcp.tool('a2a_agent_card', { agent: 'agent://a.example' })).text).toMatch(
      /named by their https base URL/,
    );
    expect(agent.requests).toEqual([]);
  });

  it('never follows a redirect: of the card to another origin, or of a call', async () => {
    const target = await sdkAgent();
    const movedCard = await sdkAgent({
      intercept: (seen) =>
        seen.path === '/.well-known/agent-card.json'
          ? { status: 302, headers: { Location: `${target.url}/.well-known/agent-card.json` } }
          : undefined,
    });
    expect((await mcp.tool('a2a_agent_card', { agent: movedCard.url })).text).toBe(
      `${movedCard.url}/.well-known/agent-card.json redirects elsewhere: a card must be served by the agent's own origin.`,
    );
    const movedCall = await sdkAgent({
      intercept: (seen) =>
        seen.rpc ? { status: 307, headers: { Location: `${target.url}/a2a/jsonrpc` } } : undefined,
    });
    const answer = await send(movedCall, 'hi');
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/answered in a way the A2A client could not use \(HTTP 307\)/);
    expect(target.requests).toEqual([]);
  });
});

describe('the per-minute cap', () => {
  // A bridge of its own for each test: the window holds the other tests' requests for a minute.
  let fresh: McpBridge;
  const capped = async (outboundPerMinute: number) => {
    fresh = await startMcpBridge({ ...DEFAULTS, outboundPerMinute, outboundTimeoutMs: 4000 });
    closing.push(fresh);
    return fresh;
  };

  it('counts every request, card and polls included: a submit that runs out hands back its task', async () => {
    const agent = await sdkAgent();
    const mcp = await capped(3);
    const answer = await mcp.tool('a2a_send', { agent: agent.url, message: 'slow 3000', mode: 'submit' });
    const taskId = agent.runs[0]?.taskId as string;
    expect(answer.isError).toBe(false);
    expect(answer.text).toContain(
      `task ${taskId} is still working. The bridge stopped following it: the operator allows only so many requests to other agents a minute (setting outboundPerMinute), and every poll counts. taskId: ${taskId}\n`,
    );
    expect(agent.requests.map((r) => r.rpc ?? r.path)).toEqual([
      '/.well-known/agent-card.json',
      'SendMessage',
      'GetTask',
    ]);
    expect(mcp.events.at(-1)?.message).toMatch(
      new RegExp(`^Stopped following task ${taskId}: Too many requests`),
    );
    // Within the minute: a poll is refused before it is sent; the cached card costs nothing.
    const poll = await mcp.tool('a2a_task', { agent: agent.url, taskId });
    expect(poll.text).toMatch(
      /allows 3 a minute \(setting outboundPerMinute; every card fetch, call and task poll counts\)/,
    );
    expect(mcp.events.at(-1)).toMatchObject({ protocol: 'a2a', verdict: 'rate-limit', status: 429 });
    expect((await mcp.tool('a2a_agent_card', { agent: agent.url })).isError).toBe(false);
    expect(agent.requests).toHaveLength(3);
  });

  it('is one cap for both protocols: SAMVAD and A2A requests count together', async () => {
    const [a2a, other] = [await sdkAgent(), await sdkAgent()];
    const samvad = await startHostileAgent();
    closing.push(samvad);
    const mcp = await capped(2);
    expect((await mcp.tool('a2a_agent_card', { agent: a2a.url })).isError).toBe(false);
    expect((await mcp.tool('samvad_agent_card', { agent: samvad.id })).isError).toBe(false);
    const refused = await mcp.tool('a2a_agent_card', { agent: other.url });
    expect(refused.text).toMatch(/allows 2 a minute/);
    expect(other.requests).toEqual([]);
  });
});

describe('the deadline', () => {
  it('blocking: no answer in time is a 504 naming the setting', async () => {
    const agent = await sdkAgent();
    mcp.bridge.app.updateSettings({ outboundTimeoutMs: 1000 });
    const answer = await send(agent, 'slow 3000');
    expect(answer).toEqual({
      isError: true,
      text: `No complete answer from ${agent.url} within 1000 ms (setting outboundTimeoutMs).`,
    });
    expect(mcp.events.at(-1)).toMatchObject({ verdict: 'handler', status: 504, protocol: 'a2a' });
  });

  it('stream: out of time once the task is known, the task is handed back to follow', async () => {
    const agent = await sdkAgent();
    mcp.bridge.app.updateSettings({ outboundTimeoutMs: 1000 });
    const answer = await send(agent, 'slow 3000', { mode: 'stream' });
    const taskId = agent.runs[0]?.taskId as string;
    expect(answer.isError).toBe(false);
    expect(answer.text).toContain(`accepted the message (stream, `);
    expect(answer.text).toContain(`task ${taskId} is still working. taskId: ${taskId}\n`);
  });
});

describe('the reply limit', () => {
  const big = 'x'.repeat(5000);
  const bigReply: SdkA2AOptions = {
    script: ({ taskId, contextId }) => [
      AgentEvent.task(task(taskId, contextId, TaskState.TASK_STATE_WORKING)),
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: artifact(big),
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
      status(taskId, contextId, TaskState.TASK_STATE_COMPLETED),
    ],
  };

  it.each(['blocking', 'stream', 'submit'] as const)(
    '%s: an answer larger than outboundMaxReplyBytes is not read',
    async (mode) => {
      const agent = await sdkAgent(bigReply);
      mcp.bridge.app.updateSettings({ outboundMaxReplyBytes: 2048 });
      const answer = await send(agent, 'hi', { mode });
      expect(answer).toEqual({
        isError: true,
        text: `The answer from ${agent.url} is larger than the 2048 bytes allowed (setting outboundMaxReplyBytes), so it was not read.`,
      });
      expect(mcp.events.at(-1)).toMatchObject({ verdict: 'size', status: 502 });
      mcp.bridge.app.updateSettings({ outboundMaxReplyBytes: 262_144 });
      expect(blockValue((await send(agent, 'hi', { mode })).text, 'its reply')).toBe(big);
    },
  );

  it('a card over 64 KiB is not read', async () => {
    const agent = await sdkAgent({ card: (card) => ({ ...card, description: 'd'.repeat(70_000) }) });
    expect((await mcp.tool('a2a_agent_card', { agent: agent.url })).text).toBe(
      `The answer from ${agent.url} is larger than the 65536 bytes allowed for a card, so it was not read.`,
    );
  });
});
