// The agent under test: a real AgentBridgeApp on loopback whose card limits are raised so that the
// rate limits and the daily token budget never throttle a benchmark, with loopback peers over http.
import type { Settings } from '../src/settings/schema.js';
import { startAgent, type TestAgent } from '../test/helpers/agents.js';

export const BENCH_SETTINGS: Partial<Settings> = {
  rpm: 1_000_000,
  perSender: 1_000_000,
  tokensPerDay: 1_000_000_000,
  devHttpPeers: true,
};

export interface BenchAgentOptions {
  gatewayUrl: string;
  gatewayToken: string;
  /** Approved senders: the agent runs the default access policy (`pairing`), as an operator's does. */
  approved: string[];
  /** The agent's clock; the memory run moves it forward to expire every nonce. */
  now?: () => number;
  /**
   * Open a localtunnel through this server (the bench's loopback tunnel server), with the production
   * supervisor timings (backoff 1 s doubling to 30 s, 10 s per step), which the restart figures are about.
   */
  tunnelHost?: string;
  /** Shared state on Redis (as replicas run) instead of the data dir. */
  redisUrl?: string;
}

export interface BenchAgent extends TestAgent {
  /** An A2A key issued to the bench's A2A caller (its limits are the raised per-sender defaults). */
  a2aKey: string;
}

export async function startBenchAgent(options: BenchAgentOptions): Promise<BenchAgent> {
  const agent = await startAgent({
    settings: {
      ...BENCH_SETTINGS,
      access: 'pairing',
      gatewayUrl: options.gatewayUrl,
      gatewayToken: options.gatewayToken,
      ...(options.tunnelHost ? { tunnel: 'localtunnel', tunnelHost: options.tunnelHost } : {}),
      ...(options.redisUrl ? { redisUrl: options.redisUrl } : {}),
      // Comparing one feature's cost: e.g. BENCH_AGENT_SETTINGS='{"injectionScreen":"off"}'.
      ...(JSON.parse(process.env.BENCH_AGENT_SETTINGS ?? '{}') as Partial<Settings>),
    },
    now: options.now,
  });
  // Every call then takes the approved-sender path of the access check, as a real caller's would.
  for (const sender of options.approved) agent.app.access.approve(sender);
  const { secret } = await agent.app.a2aKeys.issue({ name: 'Bench caller' });
  return Object.assign(agent, { a2aKey: secret });
}
