import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentBridgeApp, type AppOptions } from '../../src/app.js';
import { DEFAULT_SETTINGS, type Settings } from '../../src/settings/schema.js';

export interface TestAgent {
  app: AgentBridgeApp;
  url: string;
  id: string;
  dataDir: string;
  /** Stops the agent; the data dir stays so a test can start it again. */
  stop(): Promise<void>;
  /** Stops the agent and removes its data dir. */
  close(): Promise<void>;
}

export interface TestAgentOptions extends Partial<Omit<AppOptions, 'settings' | 'dataDir'>> {
  settings?: Partial<Settings>;
  dataDir?: string;
}

export function tempDir(prefix = 'agent-bridge-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A real agent on an ephemeral loopback port, with its own data dir; loopback peers resolve over http. */
export async function startAgent(options: TestAgentOptions = {}): Promise<TestAgent> {
  const dataDir = options.dataDir ?? tempDir();
  const settings: Settings = {
    ...DEFAULT_SETTINGS,
    port: 0,
    tunnel: 'none',
    devHttpPeers: true,
    rpm: 10_000,
    perSender: 10_000,
    // Most tests are about other steps; the access policy's own tests (access-*.test.ts) set `pairing`.
    access: 'open',
    ...options.settings,
  };
  // A test never takes the operator's ports: `npm test` runs beside an agent that is running (issue 26).
  if (settings.port === DEFAULT_SETTINGS.port) {
    throw new Error(`A test agent must listen on an ephemeral port (port: 0), not ${settings.port}.`);
  }
  // No periodic gateway probe unless a test asks: tests count the gateway double's requests.
  const app = new AgentBridgeApp({
    gatewayProbeMs: 0,
    ...options,
    dataDir,
    settings,
    env: options.env ?? {},
  });
  const url = await app.start();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await app.stop(1000);
  };
  return {
    app,
    url,
    id: app.card().id,
    dataDir,
    stop,
    close: async () => {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Agents that share default settings (e.g. the gateway double's URL and token) and are closed together:
 * `start` merges per-test settings over the defaults; `closeAll` stops and removes every one.
 */
export function agentPool(defaults: () => Partial<Settings>) {
  const started: TestAgent[] = [];
  return {
    async start(options: TestAgentOptions = {}): Promise<TestAgent> {
      const agent = await startAgent({ ...options, settings: { ...defaults(), ...options.settings } });
      started.push(agent);
      return agent;
    },
    async closeAll(): Promise<void> {
      // Newest first: an agent restarted on an earlier one's data dir stops before that dir is removed.
      for (const agent of started.splice(0).reverse()) await agent.close();
    },
  };
}
