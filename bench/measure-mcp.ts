// 8. What the MCP tool adds to an outbound call: a callee agent with an instant `echo` skill, called at c=1
// directly with the project's client (signed as the bridge, reply verified), and through the bridge's MCP
// server with the official MCP SDK client (`samvad_call`, sync: the same signing and verification, plus MCP
// framing, the HTTP hop to the console listener, the tool's policy checks and its result text). Both arms
// run in this process, alternating in A B B A blocks so a drift of the machine weighs on both alike.
import { rmSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Skill } from '../src/agent/skill.js';
import { AgentClient } from '../src/client/index.js';
import { startConsole } from '../src/console/console-server.js';
import { openSettingsStore } from '../src/settings/store.js';
import { startAgent } from '../test/helpers/agents.js';
import { mcpTransport } from '../test/helpers/mcp-client.js';
import { BENCH_SETTINGS } from './bench-agent.js';
import { summarize, type LatencySummary } from './stats.js';

export interface McpOptions {
  /** Calls per arm before measuring (JIT, connections, the card cache). */
  warmupCalls: number;
  /** Calls per run; each block runs A B B A. */
  callsPerRun: number;
  blocks: number;
}

export interface McpResult {
  direct: LatencySummary;
  mcp: LatencySummary;
  /** p50 via MCP minus p50 direct, ms. */
  overheadMs: number;
  errors: number;
  firstError?: string;
}

export interface McpFailure {
  error: string;
}

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

export async function measureMcp(options: McpOptions, progress: (step: string) => void): Promise<McpResult> {
  progress('8. MCP: a callee agent and a bridge with its console and MCP server');
  const callee = await startAgent({ settings: { ...BENCH_SETTINGS, access: 'open' }, extraSkills: [echo] });
  const bridge = await startAgent({
    // Thousands of calls to one agent: no daily budget for it (the default, 100 calls, is for agents' own loops).
    settings: {
      ...BENCH_SETTINGS,
      consolePort: 0,
      outboundPerMinute: 10_000,
      outboundCallsPerDay: 0,
      outboundTokensPerDay: 0,
    },
  });
  const con = await startConsole({
    app: bridge.app,
    store: openSettingsStore(bridge.dataDir),
    dataDir: bridge.dataDir,
    port: 0,
    staticDir: bridge.dataDir,
    // The log writes each outbound entry to disk as serve does; keep its flush off the timed path's way.
    onError: () => undefined,
  });
  const token = await readToken(con.url, con.token);
  const mcp = new Client({ name: 'bench', version: '1.0.0' });
  await mcp.connect(mcpTransport(con.mcp.url, token));
  const client = new AgentClient({ id: bridge.app.card().id, signer: bridge.app.keys.signer, devHttp: true });
  const payload = { text: 'hello' };
  let errors = 0;
  let firstError: string | undefined;
  const fail = (message: string) => {
    errors++;
    firstError ??= message;
  };
  const direct = async () => {
    const reply = await client.call(callee.id, 'echo', payload);
    if (reply.status !== 200 || !reply.verified) fail(`direct: HTTP ${reply.status}`);
  };
  const viaMcp = async () => {
    const result = await mcp.callTool({
      name: 'samvad_call',
      arguments: { agent: callee.id, skill: 'echo', payload },
    });
    if (result.isError) fail(`mcp: ${JSON.stringify(result.content).slice(0, 200)}`);
  };
  const run = async (call: () => Promise<void>, calls: number, into?: number[]) => {
    for (let i = 0; i < calls; i++) {
      const started = performance.now();
      await call();
      into?.push(performance.now() - started);
    }
  };
  try {
    progress('8. MCP: warming up both paths');
    await run(direct, options.warmupCalls);
    await run(viaMcp, options.warmupCalls);
    const samples = { direct: [] as number[], mcp: [] as number[] };
    progress(`8. MCP: samvad_call vs the client directly, c=1, ${options.blocks} x A B B A`);
    for (let block = 0; block < options.blocks; block++) {
      await run(direct, options.callsPerRun, samples.direct);
      await run(viaMcp, options.callsPerRun, samples.mcp);
      await run(viaMcp, options.callsPerRun, samples.mcp);
      await run(direct, options.callsPerRun, samples.direct);
    }
    const result: McpResult = {
      direct: summarize(samples.direct),
      mcp: summarize(samples.mcp),
      overheadMs: 0,
      errors,
    };
    result.overheadMs = result.mcp.p50 - result.direct.p50;
    if (firstError) result.firstError = firstError;
    return result;
  } finally {
    await mcp.close();
    await con.close();
    await bridge.stop();
    await callee.stop();
    rmSync(bridge.dataDir, { recursive: true, force: true });
    rmSync(callee.dataDir, { recursive: true, force: true });
  }
}

/** The MCP token, as a script would get it: GET /api/mcp with the console's token. */
async function readToken(consoleUrl: string, consoleToken: string): Promise<string> {
  const response = await fetch(`${consoleUrl}/api/mcp`, {
    headers: { Authorization: `Bearer ${consoleToken}` },
  });
  return ((await response.json()) as { token: string }).token;
}
