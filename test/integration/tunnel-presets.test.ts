// Issue 16, item 5: stable-address providers as presets of the `command` tunnel. Each preset runs against a
// stand-in for its tool (test/fixtures/fake-tunnel-tools.mjs, first on PATH as `tailscale`, `cloudflared`,
// `ngrok`) that checks its command line as the real program reads it and prints what the real program
// prints: the preset must hand the tool the right arguments and find the public URL in that output. Through
// the console, a preset is the only way to set the command: its values fill fields, never a command line.
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import type { SettingsResponse, TunnelPresetView } from '../../src/protocol/console-api.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { CommandProvider } from '../../src/tunnel/command-provider.js';
import { PresetError, TUNNEL_PRESETS, presetViews, renderPreset } from '../../src/tunnel/presets.js';
import type { TunnelState } from '../../src/tunnel/state.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';

const TOOLS = resolve(dirname(fileURLToPath(import.meta.url)), '../fixtures/fake-tunnel-tools.mjs');
const bin = tempDir('agent-bridge-tools-');
const argvFile = join(bin, 'argv.jsonl');
const savedPath = process.env.PATH;

beforeAll(() => {
  for (const tool of ['tailscale', 'cloudflared', 'ngrok']) {
    const script = join(bin, tool);
    writeFileSync(script, `#!/bin/sh\nexec "${process.execPath}" "${TOOLS}" ${tool} "$@"\n`);
    chmodSync(script, 0o755);
  }
  // The shell the provider starts finds the stand-ins first (this test file runs in a worker of its own).
  process.env.PATH = `${bin}${delimiter}${savedPath ?? ''}`;
  process.env.FAKE_TUNNEL_ARGV_FILE = argvFile;
});

afterAll(() => {
  process.env.PATH = savedPath;
  delete process.env.FAKE_TUNNEL_ARGV_FILE;
  rmSync(bin, { recursive: true, force: true });
});

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  rmSync(argvFile, { force: true });
});

/** What the stand-ins were started with. */
function started(): { tool: string; argv: string[] }[] {
  if (!existsSync(argvFile)) return [];
  return readFileSync(argvFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { tool: string; argv: string[] });
}

const CASES = [
  {
    id: 'tailscale-funnel',
    values: {},
    url: 'https://agent-box.tail1234.ts.net:8443',
    argv: (port: number) => ['tailscale', 'funnel', '--https=8443', String(port)],
  },
  {
    id: 'cloudflared-named',
    values: { tunnel: 'agent-bridge', hostname: 'agent.example.test' },
    url: 'https://agent.example.test',
    argv: (port: number) => [
      'cloudflared',
      'tunnel',
      '--no-autoupdate',
      'run',
      '--url',
      `http://127.0.0.1:${port}`,
      'agent-bridge',
    ],
  },
  {
    id: 'ngrok-domain',
    values: { domain: 'quiet-otter.ngrok.app' },
    url: 'https://quiet-otter.ngrok.app',
    argv: (port: number) => [
      'ngrok',
      'http',
      `127.0.0.1:${port}`,
      '--url',
      'https://quiet-otter.ngrok.app',
      '--log',
      'stdout',
      '--log-format',
      'logfmt',
    ],
  },
];

describe('each preset with its tool', () => {
  it('covers every preset', () => {
    expect(CASES.map((c) => c.id).sort()).toEqual(TUNNEL_PRESETS.map((p) => p.id).sort());
  });

  it.each(CASES)('$id: runs the tool as it expects and reads the public URL it prints', async (c) => {
    const { command, urlPattern } = renderPreset(c.id, c.values);
    const connection = await new CommandProvider({ command, urlPattern, urlTimeoutMs: 5000 }).open(8787, {
      signal: new AbortController().signal,
    });
    closers.push(() => connection.close());
    expect(connection.url).toBe(c.url);
    expect(started().map(({ tool, argv }) => [tool, ...argv])).toEqual([c.argv(8787)]);
  });
});

describe('the values a preset takes', () => {
  it('go into a shell command line: only names made of letters, digits, dots and dashes pass', () => {
    for (const hostile of [
      'agent.example.com; rm -rf ~',
      '$(id).example.com',
      'agent.example.com`id`',
      "agent.example.com' | sh",
      'agent.example.com\nid',
      'https://agent.example.com',
      'localhost',
      '',
    ]) {
      let error: unknown;
      try {
        renderPreset('ngrok-domain', { domain: hostile });
      } catch (caught) {
        error = caught;
      }
      expect(error, JSON.stringify(hostile)).toBeInstanceOf(PresetError);
      expect((error as PresetError).problems).toEqual([
        {
          field: 'domain',
          message:
            'domain: Reserved domain must be like your-name.ngrok.app (letters, digits, dots and dashes)',
        },
      ]);
    }
    expect(() => renderPreset('cloudflared-named', { hostname: 'a.example.com' })).toThrow(
      /tunnel: Tunnel name must be like agent-bridge/,
    );
    expect(() => renderPreset('no-such', {})).toThrow(
      'No tunnel preset "no-such": use one of tailscale-funnel, cloudflared-named, ngrok-domain.',
    );
  });

  it('are escaped in the URL pattern: a dot matches only a dot', () => {
    const { urlPattern } = renderPreset('ngrok-domain', { domain: 'a.ngrok.app' });
    const pattern = new RegExp(urlPattern);
    expect(pattern.exec('lvl=info msg="started tunnel" url=https://a.ngrok.app')?.[0]).toBe(
      'https://a.ngrok.app',
    );
    expect(pattern.test('lvl=info msg="started tunnel" url=https://aXngrok.app')).toBe(false);
  });
});

describe('through the console', () => {
  let agent: TestAgent;
  let con: ConsoleHandle;
  const states: TunnelState[] = [];

  beforeAll(async () => {
    agent = await startAgent({ tunnel: { backoff: { initialMs: 60_000, maxMs: 60_000 } } });
    agent.app.on('tunnel', (state) => states.push(state));
    con = await startConsole({
      app: agent.app,
      store: openSettingsStore(agent.dataDir),
      dataDir: agent.dataDir,
      port: 0,
    });
  });

  afterAll(async () => {
    await con.close();
    await agent.close();
  });

  async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
    const response = await fetch(`${con.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${con.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as T };
  }

  it('lists the presets with their command lines, fields and what each needs', async () => {
    const { json } = await api<SettingsResponse>('GET', '/api/settings');
    expect(json.tunnelPresets).toEqual(presetViews());
    const ids = json.tunnelPresets.map((preset: TunnelPresetView) => preset.id);
    expect(ids).toEqual(['tailscale-funnel', 'cloudflared-named', 'ngrok-domain']);
    for (const preset of json.tunnelPresets) {
      expect(preset.command).toContain('{port}');
      expect(preset.needs.length).toBeGreaterThan(40);
    }
  });

  it('refuses bad values with the field named, and saves nothing', async () => {
    const { status, json } = await api<{ error: { fields: { field: string }[] } }>(
      'POST',
      '/api/tunnel/preset',
      { id: 'ngrok-domain', values: { domain: 'x.example.com; touch /tmp/pwned' } },
    );
    expect(status).toBe(400);
    expect(json.error.fields.map((f) => f.field)).toEqual(['domain']);
    expect(agent.app.currentSettings.tunnel).toBe('none');
    expect(agent.app.currentSettings.tunnelCommand).toBeUndefined();
  });

  it('still refuses a command line of its own (403)', async () => {
    const { status } = await api('PUT', '/api/settings', {
      tunnel: 'command',
      tunnelCommand: 'ngrok http {port} --url https://x.ngrok.app',
    });
    expect(status).toBe(403);
  });

  it('sets the command tunnel from a preset: the agent starts the tool and comes online at its address', async () => {
    const { status, json } = await api<SettingsResponse & { applied: string[] }>(
      'POST',
      '/api/tunnel/preset',
      { id: 'ngrok-domain', values: { domain: 'quiet-otter.ngrok.app' } },
    );
    expect(status).toBe(200);
    const expected = renderPreset('ngrok-domain', { domain: 'quiet-otter.ngrok.app' });
    expect(json.settings).toMatchObject({
      tunnel: 'command',
      tunnelCommand: expected.command,
      tunnelUrlPattern: expected.urlPattern,
    });
    expect(json.applied).toEqual(expect.arrayContaining(['tunnel', 'tunnelCommand', 'tunnelUrlPattern']));
    // Saved in the store, so the next start uses it too.
    expect(openSettingsStore(agent.dataDir).get()).toMatchObject({ tunnelCommand: expected.command });
    await until(
      () => states.some((s) => s.status === 'online' && s.url === 'https://quiet-otter.ngrok.app'),
      5000,
      'the tunnel online at the reserved domain',
    );
    expect(started().map((s) => s.tool)).toEqual(['ngrok']);
  });
});
