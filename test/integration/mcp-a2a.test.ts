import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSdkA2AAgent, type SdkA2AAgent, type SdkA2AOptions } from '../fixtures/a2a-sdk-agent.js';
import { KEYS, startA2AAgent } from '../helpers/a2a-agent.js';
import { startMcpBridge, type McpBridge } from '../helpers/mcp-bridge.js';
import { until } from '../helpers/polling.js';
import { blockValue, inspect } from '../helpers/untrusted-blocks.js';

// Issue 17, item 3: the operator's agent calls A2A agents through the bridge's MCP server. The callee here
// is an agent built with the A2A SDK's own server (its request handler, task store and Express adapters:
// JSON-RPC, HTTP+JSON, v0.3), driven through the real MCP server by the official MCP client.

let mcp: McpBridge;
const agents: SdkA2AAgent[] = [];

beforeAll(async () => {
  mcp = await startMcpBridge({ outboundPerMinute: 10_000, outboundTimeoutMs: 5000 });
});

afterEach(() => mcp.bridge.app.updateSettings({ outboundTimeoutMs: 5000 }));

afterAll(async () => {
  for (const agent of agents) await agent.close();
  await mcp.close();
});

async function sdkAgent(options: SdkA2AOptions = {}): Promise<SdkA2AAgent> {
  const agent = await startSdkA2AAgent(options);
  agents.push(agent);
  return agent;
}

const send = (agent: { url: string }, message: string, extra: Record<string, unknown> = {}) =>
  mcp.tool('a2a_send', { agent: agent.url, message, ...extra });

const lastEvent = () => mcp.events.at(-1);
const rpcs = (agent: SdkA2AAgent) => agent.requests.map((r) => r.rpc ?? `${r.method} ${r.path}`);

describe('the tool list', () => {
  it('has the A2A tools beside the SAMVAD ones, none taking a credential', async () => {
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      ['a2a_agent_card', 'a2a_send', 'a2a_task', 'samvad_agent_card', 'samvad_call', 'samvad_task'].sort(),
    );
    const a2aSend = tools.find((t) => t.name === 'a2a_send');
    expect(Object.keys(a2aSend?.inputSchema.properties ?? {}).sort()).toEqual(
      ['agent', 'contextId', 'message', 'mode', 'taskId'].sort(),
    );
    expect(a2aSend?.inputSchema.required?.sort()).toEqual(['agent', 'message']);
    const props = a2aSend?.inputSchema.properties as Record<string, { enum?: string[] }>;
    expect(props.mode?.enum).toEqual(['blocking', 'stream', 'submit']);
    const task = tools.find((t) => t.name === 'a2a_task');
    expect(task?.inputSchema.required?.sort()).toEqual(['agent', 'taskId']);
    const fields = tools.flatMap((t) => Object.keys(t.inputSchema.properties ?? {}));
    expect(fields.filter((field) => /token|credential|auth|header|key|secret/i.test(field))).toEqual([
      'delegationToken',
    ]);
    expect(a2aSend?.description).toMatch(/untrusted/);
  });
});

describe('a2a_agent_card', () => {
  it('a card signed by the SDK with the key its JWKS publishes: verified, summarised, cached', async () => {
    const agent = await sdkAgent({ sign: 'matching' });
    const answer = await mcp.tool('a2a_agent_card', { agent: agent.url });
    expect(answer.isError).toBe(false);
    expect(answer.text).toContain(
      `Card of ${agent.url}, fetched from ${agent.url}/.well-known/agent-card.json (A2A 1.0). ` +
        'Card signature: verified (a JWS signature checked against the key set its own origin publishes). ' +
        'Its card asks for no credential.',
    );
    const summary = blockValue(answer.text, 'its card (a summary)') as Record<string, unknown>;
    expect(summary).toMatchObject({
      name: 'SDK test agent',
      capabilities: { streaming: true, pushNotifications: false },
      skills: [{ id: 'echo', name: 'Echo', tags: ['test'], examples: ['hello'] }],
    });
    expect(summary.interfaces).toEqual([
      { url: `${agent.url}/a2a/jsonrpc`, binding: 'JSONRPC', version: '1.0' },
      { url: `${agent.url}/a2a/rest`, binding: 'HTTP+JSON', version: '1.0' },
      { url: `${agent.url}/a2a/jsonrpc`, binding: 'JSONRPC', version: '0.3' },
    ]);
    expect(rpcs(agent)).toEqual(['GET /.well-known/agent-card.json', 'GET /.well-known/jwks.json']);
    expect(lastEvent()).toMatchObject({
      direction: 'out',
      protocol: 'a2a',
      callee: agent.url,
      endpoint: '/.well-known/agent-card.json',
      verdict: 'accepted',
      signatureForm: 'none',
    });
    // A checked card is kept for its max-age: looking again costs no request; the card's own URL works too.
    expect(
      (await mcp.tool('a2a_agent_card', { agent: `${agent.url}/.well-known/agent-card.json` })).isError,
    ).toBe(false);
    expect(agent.requests).toHaveLength(2);
  });

  it('an unsigned card is said to be unsigned', async () => {
    const agent = await sdkAgent();
    const answer = await mcp.tool('a2a_agent_card', { agent: agent.url });
    expect(answer.text).toContain(
      `Card signature: none (the card is unsigned; what it says rests on plain HTTP from ${new URL(agent.url).host} (a loopback test address)).`,
    );
  });

  it("a card the SDK signed with security schemes: verified except them (the SDK's #663), said plainly", async () => {
    const agent = await sdkAgent({
      sign: 'matching',
      requires: { scheme: 'bearer', token: 'a-token-for-663' },
    });
    const answer = await mcp.tool('a2a_agent_card', { agent: agent.url });
    expect(answer.isError).toBe(false);
    expect(answer.text).toContain('Card signature: verified, except its security schemes');
    expect(answer.text).toContain('Its card names these ways to authenticate: HTTP bearer.');
  });

  it('a card signed with a key its JWKS does not hold is refused, and nothing is sent to that agent', async () => {
    const agent = await sdkAgent({ sign: 'mismatched' });
    const refused = `The card of ${agent.url} is signed, but none of its signatures verifies: the key set ${agent.url} publishes holds no key they verify with. It was refused, nothing it says is shown, and nothing was sent to that agent.`;
    const card = await mcp.tool('a2a_agent_card', { agent: agent.url });
    expect(card).toEqual({ isError: true, text: refused });
    const sent = await send(agent, 'hello');
    expect(sent).toEqual({ isError: true, text: refused });
    expect(agent.requests.filter((r) => r.rpc)).toEqual([]);
    expect(lastEvent()).toMatchObject({ protocol: 'a2a', verdict: 'handler', status: 502 });
  });

  it("this bridge's own A2A front door: its card (signed with the agent's key, its schemes too) verifies in full; with a key kept, a call goes through", async () => {
    const door = await startA2AAgent();
    try {
      const card = await mcp.tool('a2a_agent_card', { agent: door.url });
      expect(card.text).toContain(
        'Card signature: verified (a JWS signature checked against the key set its own origin publishes).',
      );
      expect(card.text).toContain('Its card names these ways to authenticate: HTTP bearer.');
      const kept = await fetch(`${mcp.console.url}/api/outbound/credentials`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${mcp.console.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: door.url, scheme: 'bearer', value: KEYS.alice }),
      });
      expect(kept.status).toBe(200);
      const answer = await send(door, 'hello', { mode: 'stream' });
      expect(answer.isError).toBe(false);
      expect(blockValue(answer.text, 'its reply')).toBe('Hello, alice.');
    } finally {
      await door.close();
    }
  });

  it('a card whose signature names a key set on another origin is refused', async () => {
    const other = await sdkAgent({ sign: 'matching' });
    const agent = await sdkAgent({
      sign: 'matching',
      card: (card) => {
        const [signature] = card.signatures as { protected: string }[];
        const header = JSON.parse(Buffer.from(signature!.protected, 'base64url').toString()) as Record<
          string,
          unknown
        >;
        header.jku = `${other.url}/.well-known/jwks.json`;
        signature!.protected = Buffer.from(JSON.stringify(header)).toString('base64url');
        return card;
      },
    });
    const answer = await mcp.tool('a2a_agent_card', { agent: agent.url });
    expect(answer.isError).toBe(true);
    expect(answer.text).toContain(
      `none of its signatures verifies: they name no key set (jku) on ${agent.url} itself`,
    );
    expect(other.requests).toEqual([]);
  });
});

const BINDINGS: [string, SdkA2AOptions, Record<string, string>][] = [
  [
    'JSON-RPC 1.0',
    {},
    { blocking: 'SendMessage', stream: 'SendStreamingMessage', submit: 'SendMessage', get: 'GetTask' },
  ],
  [
    'HTTP+JSON 1.0',
    { bindings: ['HTTP+JSON'] },
    {
      blocking: 'POST /a2a/rest/message:send',
      stream: 'POST /a2a/rest/message:stream',
      submit: 'POST /a2a/rest/message:send',
      get: 'GET /a2a/rest/tasks/',
    },
  ],
  [
    'JSON-RPC 0.3 (a v0.3 card)',
    { v03Card: true },
    { blocking: 'message/send', stream: 'message/stream', submit: 'message/send', get: 'tasks/get' },
  ],
];

describe('a2a_send', () => {
  describe.each(BINDINGS)('over %s', (_binding, options, methods) => {
    it.each(['blocking', 'stream', 'submit'] as const)(
      '%s: the reply in a block, the task, its state and contextId said; one traffic entry',
      async (mode) => {
        const agent = await sdkAgent(options);
        const answer = await send(agent, 'hello there', { mode });
        expect(answer.isError).toBe(false);
        const [run] = agent.runs;
        expect(answer.text).toContain(`${agent.url}: task ${run?.taskId} is completed (${mode}, `);
        expect(answer.text).toContain(
          `contextId: ${run?.contextId}. To continue this conversation, call a2a_send with {"agent": "${agent.url}", "contextId": "${run?.contextId}", ...}.`,
        );
        expect(blockValue(answer.text, 'its reply')).toBe('echo: hello there');
        const sent = rpcs(agent).filter((r) => !r.includes('.well-known'));
        expect(sent[0]).toBe(methods[mode]);
        expect(sent.slice(1).every((r) => r.startsWith(methods.get as string))).toBe(true);
        expect(lastEvent()).toMatchObject({
          direction: 'out',
          protocol: 'a2a',
          callee: agent.url,
          endpoint: mode === 'stream' ? 'SendStreamingMessage' : 'SendMessage',
          mode: { blocking: 'sync', stream: 'stream', submit: 'async' }[mode],
          verdict: 'accepted',
          status: 200,
          taskId: run?.taskId,
        });
      },
    );
  });

  it('continues a conversation: the same contextId reaches the agent', async () => {
    const agent = await sdkAgent();
    const first = await send(agent, 'first');
    const contextId = /contextId: ([\w-]+)\./.exec(first.text)?.[1] as string;
    expect((await send(agent, 'second', { contextId })).isError).toBe(false);
    expect(agent.runs.map((run) => run.contextId)).toEqual([contextId, contextId]);
  });

  it('a task that asks for input: said so, with the taskId to answer it; the answer completes it', async () => {
    const agent = await sdkAgent();
    const asked = await send(agent, 'ask');
    const [run] = agent.runs;
    expect(asked.isError).toBe(false);
    expect(asked.text).toContain(
      `task ${run?.taskId} needs more input (input-required): its status message says what. Answer with a2a_send {"agent": "${agent.url}", "message": "...", "contextId": "${run?.contextId}", "taskId": "${run?.taskId}"}`,
    );
    expect(blockValue(asked.text, 'its status message')).toBe('Which city?');
    const answered = await send(agent, 'Paris', { contextId: run?.contextId, taskId: run?.taskId });
    expect(answered.text).toContain(`task ${run?.taskId} is completed`);
    expect(blockValue(answered.text, 'its reply')).toBe('echo: Paris');
  });

  it('an agent that answers with a message, not a task', async () => {
    const agent = await sdkAgent();
    const answer = await send(agent, 'direct hi');
    expect(answer.text).toMatch(
      new RegExp(`^${agent.url} answered with a message, not a task \\(blocking, `),
    );
    expect(blockValue(answer.text, 'its reply')).toBe('direct: direct hi');
  });

  it('a task that fails: an error, its status message in a block', async () => {
    const agent = await sdkAgent();
    const answer = await send(agent, 'fail');
    expect(answer.isError).toBe(true);
    expect(answer.text).toContain(`task ${agent.runs[0]?.taskId} ended failed (blocking, `);
    expect(blockValue(answer.text, 'its status message')).toBe('it broke');
    expect(lastEvent()?.message).toMatch(/^Task [\w-]+ ended failed\. its status message: "it broke"$/);
  });

  it('submit: a task not done in time comes back with its id and state; a2a_task follows it to the end', async () => {
    const agent = await sdkAgent();
    mcp.bridge.app.updateSettings({ outboundTimeoutMs: 1500 });
    const answer = await send(agent, 'slow 2500', { mode: 'submit' });
    const taskId = agent.runs[0]?.taskId as string;
    expect(answer.isError).toBe(false);
    expect(answer.text).toContain(`${agent.url} accepted the message (submit, `);
    expect(answer.text).toContain(
      `task ${taskId} is still working. taskId: ${taskId}\nCheck it later with a2a_task {"agent": "${agent.url}", "taskId": "${taskId}"}.`,
    );
    expect(lastEvent()).toMatchObject({ mode: 'async', verdict: 'accepted', taskId });
    const working = await mcp.tool('a2a_task', { agent: agent.url, taskId });
    expect(working.text).toBe(`Task ${taskId} on ${agent.url} is working: check again later.`);
    let done = working;
    await until(
      async () => /is completed/.test((done = await mcp.tool('a2a_task', { agent: agent.url, taskId })).text),
      5000,
      'the task to complete',
      200,
    );
    expect(blockValue(done.text, 'its reply')).toBe('echo: slow 2500');
    expect(lastEvent()).toMatchObject({ endpoint: 'GetTask', protocol: 'a2a', taskId });
  });
});

describe('a2a_task', () => {
  it('cancel: the agent cancels a task it runs', async () => {
    const agent = await sdkAgent();
    mcp.bridge.app.updateSettings({ outboundTimeoutMs: 1000 });
    const held = await send(agent, 'hold', { mode: 'submit' });
    const taskId = agent.runs[0]?.taskId as string;
    expect(held.text).toContain(`task ${taskId} is still working`);
    const canceled = await mcp.tool('a2a_task', { agent: agent.url, taskId, action: 'cancel' });
    expect(canceled.isError).toBe(false);
    expect(inspect(canceled.text).outside).toMatch(new RegExp(`^${agent.url} canceled task ${taskId}\\.`));
    expect(agent.runs[0]?.canceled).toBe(true);
    expect(lastEvent()).toMatchObject({ endpoint: 'CancelTask', verdict: 'accepted', taskId });
    const after = await mcp.tool('a2a_task', { agent: agent.url, taskId });
    expect(after.isError).toBe(true);
    expect(after.text).toContain(`Task ${taskId} on ${agent.url} ended canceled.`);
  });

  it('an unknown task: refused in its words, its message in a block', async () => {
    const agent = await sdkAgent();
    const answer = await mcp.tool('a2a_task', { agent: agent.url, taskId: 'no-such-task' });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(
      new RegExp(`^${agent.url} refused: it has no such task \\(or none this caller may see\\)\\.`),
    );
    expect(inspect(answer.text).blocks.map((b) => b.what)).toContain('its error message');
    expect(lastEvent()).toMatchObject({ endpoint: 'GetTask', verdict: 'handler', taskId: 'no-such-task' });
  });

  it('refuses a taskId that is not a short token before anything is sent', async () => {
    const agent = await sdkAgent();
    const answer = await mcp.tool('a2a_task', { agent: agent.url, taskId: 'a b\nc' });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/a taskId is letters, digits and \. _ ~ : \+ = -, at most 64 characters/);
    expect(agent.requests).toEqual([]);
  });
});
