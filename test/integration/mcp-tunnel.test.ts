import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import { appFetch } from '../../src/lib/http.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startTunnelServer, type TunnelServer } from '../fixtures/tunnel-server.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';

// The MCP server lives on the console's loopback listener: the tunnel reaches only the agent port, so
// /mcp through the public URL is the agent port's 404, token or not, while it answers on the console.
let tunnel: TunnelServer;
let bridge: TestAgent;
let con: ConsoleHandle;

beforeAll(async () => {
  tunnel = await startTunnelServer();
  bridge = await startAgent({
    settings: { consolePort: 0, tunnel: 'localtunnel', tunnelHost: tunnel.url },
    tunnel: { backoff: { initialMs: 100, maxMs: 500 }, checkIntervalMs: 60_000 },
  });
  con = await startConsole({
    app: bridge.app,
    store: openSettingsStore(bridge.dataDir),
    dataDir: bridge.dataDir,
    port: 0,
    staticDir: tempDir('mcp-tunnel-ui-'),
  });
  await until(() => bridge.app.tunnelState.status === 'online', 10_000, 'the tunnel online');
});

afterAll(async () => {
  await con.close();
  await bridge.close();
  await tunnel.close();
});

const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

function post(url: string, token: string) {
  return appFetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: list,
  });
}

describe('through the tunnel', () => {
  it('/mcp is not there: 404 from the agent port, with or without the token', async () => {
    const token = (JSON.parse(readFileSync(join(bridge.dataDir, 'mcp.json'), 'utf8')) as { token: string })
      .token;
    const publicUrl = bridge.app.agentUrl;
    expect(publicUrl).toMatch(/^http:\/\/[a-z0-9]+\.localhost:\d+$/);
    // The tunnel itself works: the card comes through it.
    const card = await appFetch(`${publicUrl}/.well-known/agent.json`);
    expect(card.status).toBe(200);
    await card.text();

    for (const path of ['/mcp', '/mcp/', '/api/mcp']) {
      const answer = await post(`${publicUrl}${path}`, token);
      expect(answer.status, path).toBe(404);
      expect(await answer.text()).not.toContain('samvad_call');
    }
    const routed = tunnel.requests.filter((r) => r.path.startsWith('/mcp'));
    expect(routed.length).toBeGreaterThan(0);

    // While the same request on the console's loopback listener lists the tools.
    const local = await post(con.mcp.url, token);
    expect(local.status).toBe(200);
    expect(await local.text()).toContain('samvad_call');
  });
});
