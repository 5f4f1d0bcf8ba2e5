/**
 * Opt-in (`npm run test:openclaw`): the bridge's MCP server registered with the REAL `openclaw` CLI (pinned
 * in scripts/openclaw/paths.ts), exactly as the console tells the operator: its `openclaw mcp add` command run
 * by a shell, then `openclaw mcp probe`, which connects and lists the tools under the names the gateway's tool
 * policy uses. `mcp add`, `set` and `probe` read and write the config and connect to the server themselves:
 * no gateway process is needed. Everything runs in a throw-away HOME; the real ~/.openclaw is never touched.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_BIN, NODE_BIN_DIR, OPENCLAW_ENTRY, OPENCLAW_VERSION } from '../../scripts/openclaw/paths.js';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import type { McpResponse, StatusResponse } from '../../src/protocol/console-api.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { openclawAvailable } from './gateway.js';

const available = openclawAvailable();

describe.skipIf(!available)(`the MCP server in a real openclaw ${OPENCLAW_VERSION} config`, () => {
  let home: string;
  let configPath: string;
  let env: NodeJS.ProcessEnv;
  let bridge: TestAgent;
  let con: ConsoleHandle;

  beforeAll(async () => {
    home = tempDir('openclaw-mcp-');
    const stateDir = join(home, '.openclaw');
    const bin = join(home, 'bin');
    mkdirSync(stateDir, { recursive: true });
    mkdirSync(bin);
    configPath = join(stateDir, 'openclaw.json');
    writeFileSync(configPath, '{}\n', { mode: 0o600 });
    // `openclaw` on PATH, as on the operator's machine: the pinned package under its Node 24.
    writeFileSync(join(bin, 'openclaw'), `#!/bin/sh\nexec "${NODE_BIN}" "${OPENCLAW_ENTRY}" "$@"\n`);
    chmodSync(join(bin, 'openclaw'), 0o755);
    env = {
      PATH: [bin, NODE_BIN_DIR, process.env.PATH ?? '/usr/bin:/bin'].join(delimiter),
      HOME: home,
      OPENCLAW_HOME: home,
      OPENCLAW_STATE_DIR: stateDir,
      OPENCLAW_CONFIG_PATH: configPath,
      TMPDIR: home,
      LANG: 'C.UTF-8',
      NO_COLOR: '1',
      OPENCLAW_OFFLINE: '1',
      OPENCLAW_NO_AUTO_UPDATE: '1',
      OPENCLAW_DISABLE_BONJOUR: '1',
      OPENCLAW_SKIP_CHANNELS: '1',
    };
    bridge = await startAgent({ settings: { consolePort: 0 }, env: { OPENCLAW_CONFIG_PATH: configPath } });
    con = await startConsole({
      app: bridge.app,
      store: openSettingsStore(bridge.dataDir),
      dataDir: bridge.dataDir,
      port: 0,
      staticDir: home,
    });
  });

  afterAll(async () => {
    await con?.close();
    await bridge?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  async function api<T>(path: string, method = 'GET'): Promise<T> {
    const response = await fetch(`${con.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${con.token}` },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as T;
  }

  /**
   * A command line as the operator pastes it: through a shell. Asynchronous: the bridge answering the CLI's
   * probe runs in this very process.
   */
  function shell(command: string): Promise<{ status: number | null; out: string }> {
    return new Promise((resolve) => {
      execFile(
        'sh',
        ['-c', command],
        { env, cwd: home, encoding: 'utf8', timeout: 90_000 },
        (error, stdout, stderr) => {
          const status = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ status, out: `${stdout}${stderr}` });
        },
      );
    });
  }

  async function probe(): Promise<{ tools: string[]; servers: Record<string, { tools?: number }> }> {
    const result = await shell('openclaw mcp probe agent-bridge --json');
    expect(result.status, result.out).toBe(0);
    const json = result.out.slice(result.out.indexOf('{'));
    return JSON.parse(json) as { tools: string[]; servers: Record<string, { tools?: number }> };
  }

  it("the console's `openclaw mcp add` command saves the server; probe lists its tools by their policy names", async () => {
    const view = await api<McpResponse>('/api/mcp');
    const added = await shell(view.command);
    expect(added.status, added.out).toBe(0);
    expect(added.out).toContain('Saved MCP server "agent-bridge"');
    const saved = JSON.parse(readFileSync(configPath, 'utf8')) as {
      mcp: { servers: Record<string, { url: string; transport: string; headers: Record<string, string> }> };
    };
    expect(saved.mcp.servers['agent-bridge']).toEqual({
      url: con.mcp.url,
      transport: 'streamable-http',
      headers: { Authorization: `Bearer ${view.token}` },
    });

    const probed = await probe();
    expect(probed.servers['agent-bridge']?.tools).toBe(6);
    expect([...probed.tools].sort()).toEqual([
      'agent-bridge__a2a_agent_card',
      'agent-bridge__a2a_send',
      'agent-bridge__a2a_task',
      'agent-bridge__samvad_agent_card',
      'agent-bridge__samvad_call',
      'agent-bridge__samvad_task',
    ]);
    // The glob the README and the console tell the operator to deny matches them all.
    const status = await api<StatusResponse>('/api/status');
    const glob = new RegExp(`^${status.mcp.toolGlob.replace('*', '.*')}$`);
    expect(probed.tools.every((tool) => glob.test(tool))).toBe(true);
    expect(status.mcp).toMatchObject({ listedInGatewayConfig: true });
    expect(status.mcp.gatewayConfigProblem).toBeUndefined();
  });

  it('after a new token, the status says so, and the `openclaw mcp set` command repairs the entry', async () => {
    const fresh = await api<McpResponse>('/api/mcp/token', 'POST');
    const stale = await api<StatusResponse>('/api/status');
    expect(stale.mcp.gatewayConfigProblem).toMatch(/another token/);
    expect((await shell('openclaw mcp probe agent-bridge --json')).out).not.toContain('"tools": 6');

    const set = await shell(fresh.updateCommand);
    expect(set.status, set.out).toBe(0);
    expect((await api<StatusResponse>('/api/status')).mcp.gatewayConfigProblem).toBeUndefined();
    expect((await probe()).tools).toHaveLength(6);
  });
});
