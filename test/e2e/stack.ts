// The headless app as `npm run serve` starts it, on loopback: the gateway double behind it, the real
// localtunnel client against the loopback tunnel server, the registry double, and the operator console on its
// own port. Plus a second agent (the peer, approved through allowedPeers) that sends signed envelopes, and a
// third (the stranger) whose first call waits for the operator's approval (access policy `pairing`). The
// gateway's OpenClaw config (a temp file) gives `main` every tool and `public`, the agent callers reach, none.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { restrictedAgentSnippet } from '../../src/bridge/agent-snippet.js';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import { appFetch } from '../../src/lib/http.js';
import type { AgentCard } from '../../src/protocol/index.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startRegistryDouble, type RegistryDouble } from '../fixtures/registry-double.js';
import { startTunnelServer, type TunnelServer } from '../fixtures/tunnel-server.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { envelope, post, sign, type Reply } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';

export interface Stack {
  gateway: GatewayDouble;
  tunnel: TunnelServer;
  registry: RegistryDouble;
  agent: TestAgent;
  peer: TestAgent;
  stranger: TestAgent;
  console: ConsoleHandle;
  /** The gateway's OpenClaw config file (JSON5), as the operator edits it. */
  openclawConfig: string;
  /** The agent's id now (with the tunnel online: `agent://<id>.localhost:PORT`). */
  agentId(): string;
  /** The card as a caller sees it, fetched through the public (tunnel) URL. */
  publicCard(): Promise<AgentCard>;
  /** A signed chat envelope from the peer to the agent (sync, Form A headers). */
  signedCall(message: string, traceId?: string): Promise<Reply>;
  /** The same from the stranger, whom the operator has not approved (yet). */
  strangerCall(message: string): Promise<Reply>;
  /** Signed, then its body changed: the signature no longer covers what arrives. */
  tamperedCall(traceId?: string): Promise<Reply>;
  close(): Promise<void>;
}

export async function startStack(): Promise<Stack> {
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    // Reverse order: the console before the agent, the agent before the servers it talks to.
    for (const closer of closers.reverse()) await closer().catch((error: unknown) => console.warn(error));
  };
  try {
    const gateway = await startGatewayDouble({ token: 'gw-token-e2e' });
    closers.push(() => gateway.close());
    const tunnel = await startTunnelServer();
    closers.push(() => tunnel.close());
    const registry = await startRegistryDouble();
    closers.push(() => registry.close());
    // The peer answers chat through the same gateway double: the operator's agent calls it (MCP) too.
    const peer = await startAgent({ settings: { gatewayUrl: gateway.url, gatewayToken: 'gw-token-e2e' } });
    closers.push(() => peer.close());
    const stranger = await startAgent();
    closers.push(() => stranger.close());

    // The gateway's config as a careful operator has it: every tool globally (local onboarding's "full"),
    // and the restricted agent the console's snippet describes for callers.
    const configDir = tempDir('e2e-openclaw-');
    closers.push(async () => rmSync(configDir, { recursive: true, force: true }));
    const configPath = join(configDir, 'openclaw.json');
    const snippet = restrictedAgentSnippet('public')
      .replace(/^\/\/.*$/gm, '')
      .trim();
    writeFileSync(configPath, snippet.replace(/^\{/, '{ tools: { profile: "full" },'));

    const agent = await startAgent({
      settings: {
        gatewayUrl: gateway.url,
        gatewayToken: 'gw-token-e2e',
        tunnel: 'localtunnel',
        tunnelHost: tunnel.url,
        registryUrl: registry.url,
        access: 'pairing',
        allowedPeers: [peer.id],
      },
      env: { OPENCLAW_CONFIG_PATH: configPath },
      // As the CLI: the gateway's health is probed at start (and every 30 s after).
      gatewayProbeMs: 30_000,
      // Quicker reconnects than production, and no periodic reachability checks during the run.
      tunnel: { backoff: { initialMs: 100, maxMs: 500 }, checkIntervalMs: 60_000 },
    });
    closers.push(() => agent.close());

    const store = openSettingsStore(agent.dataDir);
    const con = await startConsole({ app: agent.app, store, dataDir: agent.dataDir, port: 0 });
    closers.push(() => con.close());

    await until(() => agent.app.tunnelState.status === 'online', 10_000, 'the tunnel online');

    const agentId = () => agent.app.card().id;
    const call = (message: string, traceId?: string, from = peer) =>
      sign(
        envelope(from.id, agentId(), 'sync', { message }, traceId ? { traceId } : {}),
        from.app.keys.signer,
      );
    return {
      gateway,
      tunnel,
      registry,
      agent,
      peer,
      stranger,
      console: con,
      openclawConfig: configPath,
      agentId,
      publicCard: async () => {
        const response = await appFetch(`${agent.app.agentUrl}/.well-known/agent.json`);
        if (!response.ok) throw new Error(`the public card answered HTTP ${response.status}`);
        return (await response.json()) as AgentCard;
      },
      signedCall: (message, traceId) => post(agent.url, '/agent/message', call(message, traceId)),
      strangerCall: (message) => post(agent.url, '/agent/message', call(message, undefined, stranger)),
      tamperedCall: (traceId) => {
        const signed = call('what was signed', traceId);
        return post(agent.url, '/agent/message', {
          ...signed,
          body: signed.body.replace('what was signed', 'what was sent instead'),
        });
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
