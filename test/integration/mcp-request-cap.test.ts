import { afterEach, describe, expect, it } from 'vitest';
import { startHostileAgent, type HostileAgent } from '../fixtures/hostile-agent.js';
import { startMcpBridge, type McpBridge } from '../helpers/mcp-bridge.js';

// Issue 15, finding 7: with the cap at 2 a minute, one async samvad_call made 25 requests to the callee in
// 36 s. The cap counts every HTTP request the bridge sends (card fetch, call, submission, each poll); an
// async call that runs out of allowance hands back its taskId. Counted where it matters: at the callee.

let mcp: McpBridge | undefined;
const callees: HostileAgent[] = [];

afterEach(async () => {
  await mcp?.close();
  for (const callee of callees.splice(0)) await callee.close();
});

/** A callee whose task never finishes: it would be polled until the timeout. */
async function slowCallee(): Promise<HostileAgent> {
  const callee = await startHostileAgent({
    poll: { status: 200, body: { taskId: 'task-1', status: 'running', progress: 0.1 } },
  });
  callees.push(callee);
  return callee;
}

describe('the outbound per-minute cap', () => {
  it('counts each request: an async call that runs out returns its taskId, after exactly the allowance', async () => {
    mcp = await startMcpBridge({ outboundPerMinute: 2, outboundTimeoutMs: 4000 });
    const callee = await slowCallee();
    const answer = await mcp.tool('samvad_call', {
      agent: callee.id,
      skill: 'echo',
      payload: {},
      mode: 'async',
    });
    expect(answer.isError).toBe(false);
    expect(answer.text).toMatch(
      /still pending after .* stopped following it: .*\(setting outboundPerMinute\)/,
    );
    expect(answer.text).toMatch(/taskId: task-1\n/);
    expect(callee.requests).toEqual(['GET /.well-known/agent.json', 'POST /agent/task']);
    expect(mcp.events.at(-1)).toMatchObject({ verdict: 'accepted', status: 202, taskId: 'task-1' });
    expect(mcp.events.at(-1)?.message).toMatch(/^Stopped following task task-1: Too many requests/);

    // Within the minute: a poll is refused before it is sent; the cached card costs nothing.
    const poll = await mcp.tool('samvad_task', { agent: callee.id, taskId: 'task-1' });
    expect(poll.isError).toBe(true);
    expect(poll.text).toMatch(
      /allows 2 a minute \(setting outboundPerMinute; every card fetch, call and task poll counts\)/,
    );
    expect(mcp.events.at(-1)).toMatchObject({ verdict: 'rate-limit', status: 429 });
    expect((await mcp.tool('samvad_agent_card', { agent: callee.id })).isError).toBe(false);
    expect(callee.requests).toHaveLength(2);
  });

  it('a call to a new agent needs two requests (its card, then the call): with one left it sends only the first', async () => {
    mcp = await startMcpBridge({ outboundPerMinute: 3, outboundTimeoutMs: 4000 });
    const [first, second] = [await slowCallee(), await slowCallee()];
    expect((await mcp.tool('samvad_call', { agent: first.id, skill: 'echo', payload: {} })).isError).toBe(
      false,
    );
    const refused = await mcp.tool('samvad_call', { agent: second.id, skill: 'echo', payload: {} });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/allows 3 a minute/);
    expect(first.requests).toEqual(['GET /.well-known/agent.json', 'POST /agent/message']);
    expect(second.requests).toEqual(['GET /.well-known/agent.json']);
  });
});
