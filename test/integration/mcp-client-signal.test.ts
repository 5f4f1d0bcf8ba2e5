import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Skill } from '../../src/agent/skill.js';
import { startAgent, type TestAgent } from '../helpers/agents.js';
import { startMcpBridge, type McpBridge } from '../helpers/mcp-bridge.js';

// The bench's MCP measurement printed about 500 MaxListenersExceededWarnings (1,501-2,000 abort listeners
// on one AbortSignal). The signal was the MCP client transport's own, given to fetch on every tool call;
// the bridge's outbound path makes a signal per call. Many samvad_calls on one session, as the bench makes
// them: every signal involved ends with no listener pile, and Node warns about none.

const echo: Skill = {
  id: 'echo',
  name: 'Echo',
  description: 'Answers with its input at once',
  inputSchema: { type: 'object' },
  outputSchema: { type: 'object' },
  modes: ['sync'],
  trust: 'public',
  handler: async ({ payload }) => ({ echo: payload }),
};

let callee: TestAgent;
let mcp: McpBridge;
beforeAll(async () => {
  callee = await startAgent({ extraSkills: [echo] });
  // 300 calls to one agent: past the default daily budget for a callee (100), so no budget here.
  mcp = await startMcpBridge({ outboundPerMinute: 10_000, outboundCallsPerDay: 0, outboundTokensPerDay: 0 });
});
afterAll(async () => {
  await mcp.close();
  await callee.close();
});

it('leaves no abort listeners behind over 300 tool calls on one MCP session', async () => {
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  try {
    for (let i = 0; i < 300; i++) {
      const answer = await mcp.tool('samvad_call', { agent: callee.id, skill: 'echo', payload: { i } });
      expect(answer.isError, answer.text).toBe(false);
    }
  } finally {
    process.off('warning', onWarning);
  }
  // The SDK keeps the signal private; its close() aborts it. Fetch removes its listeners only at GC.
  const shared = (mcp.transport as unknown as { _abortController: AbortController })._abortController.signal;
  expect(getEventListeners(shared, 'abort').length).toBeLessThan(5);
  expect(warnings.map((w) => w.message)).toEqual([]);
}, 60_000);
