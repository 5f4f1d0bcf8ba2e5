// Settings shows every value in use and where it comes from (issue 16: the gateway URL field was empty while
// the bridge used the address in openclaw.json). GET /api/settings names the source of each setting: its
// default, settings.json, a flag or environment variable of this run, or OpenClaw's config, with the value in
// use when the setting itself is not set. Secrets say only whether one is in use and from where.
// The settings are built as `serve` builds them: the store, then the parsed flags and environment.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import type { SettingsResponse, SettingsUpdateResponse } from '../../src/protocol/console-api.js';
import { parseServeArgs } from '../../src/settings/flags.js';
import { SETTING_NAMES } from '../../src/settings/schema.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';

const OPENCLAW_TOKEN = 'openclaw-file-token-7f3a';
const dataDir = tempDir('settings-sources-');
const configDir = tempDir('settings-sources-openclaw-');
const configPath = join(configDir, 'openclaw.json');
let agent: TestAgent;
let con: ConsoleHandle;

beforeAll(async () => {
  writeFileSync(
    configPath,
    JSON.stringify({ gateway: { port: 18999, auth: { mode: 'token', token: OPENCLAW_TOKEN } } }),
  );
  const store = openSettingsStore(dataDir);
  store.update({ agentName: 'Saved name', rpm: 60 });
  const parsed = parseServeArgs(['--per-sender', '7'], { GATEWAY_AGENT: 'helper' });
  agent = await startAgent({
    dataDir,
    // The saved settings hold the default port (8787): a test listens on an ephemeral one, so it runs beside
    // an agent the operator has running.
    settings: { ...store.get(), ...parsed.overrides, port: 0 },
    env: { OPENCLAW_CONFIG_PATH: configPath },
  });
  con = await startConsole({ app: agent.app, store, dataDir, port: 0, origins: parsed.origins });
});

afterAll(async () => {
  await con?.close();
  await agent?.close();
  rmSync(configDir, { recursive: true, force: true });
});

async function api<T>(method = 'GET', body?: unknown): Promise<{ json: T; text: string }> {
  const response = await fetch(`${con.url}/api/settings`, {
    method,
    headers: { authorization: `Bearer ${con.token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return { json: JSON.parse(text) as T, text };
}

describe('GET /api/settings: where each value comes from', () => {
  it('shows the gateway address in use from openclaw.json while the setting is empty, and its token as set', async () => {
    const { json, text } = await api<SettingsResponse>();
    expect(json.settings.gatewayUrl).toBeUndefined();
    expect(json.sources.gatewayUrl).toEqual({
      source: 'openclaw.json',
      from: configPath,
      value: 'http://127.0.0.1:18999',
    });
    expect(json.secrets.gatewayToken).toEqual({ set: true });
    expect(json.sources.gatewayToken).toEqual({ source: 'openclaw.json', from: configPath });
    expect(text).not.toContain(OPENCLAW_TOKEN);
  });

  it('names the flag, the environment variable, settings.json or the default', async () => {
    const { json } = await api<SettingsResponse>();
    expect(json.sources.perSender).toEqual({ source: 'flag', from: '--per-sender' });
    expect(json.sources.gatewayAgent).toEqual({ source: 'env', from: 'GATEWAY_AGENT' });
    expect(json.sources.agentName).toEqual({ source: 'settings' });
    // Saved, though equal to the default: the operator chose it.
    expect(json.sources.rpm).toEqual({ source: 'settings' });
    expect(json.sources.cardTTL).toEqual({ source: 'default' });
    expect(json.sources.bearerTokens).toEqual({ source: 'default' });
    // Not set: the bridge asks for the agent for callers.
    expect(json.sources.gatewayModel).toEqual({ source: 'default', value: 'openclaw/helper' });
    // Every setting has one, so one added later shows its source with no more work.
    expect(Object.keys(json.sources).sort()).toEqual([...SETTING_NAMES].sort());
  });

  it('a value saved in the console over a flag is in use now; the flag applies again at the next start', async () => {
    const { json } = await api<SettingsUpdateResponse>('PUT', { perSender: 9 });
    expect(json.settings.perSender).toBe(9);
    expect(json.sources.perSender).toEqual({ source: 'settings', overridesAtStart: '--per-sender' });
  });

  it('a gateway address saved in the console is the setting, no longer openclaw.json', async () => {
    const { json } = await api<SettingsUpdateResponse>('PUT', {
      gatewayUrl: 'http://127.0.0.1:18999/',
      gatewayToken: 'typed-again',
    });
    expect(json.sources.gatewayUrl).toEqual({ source: 'settings' });
    expect(json.sources.gatewayToken).toEqual({ source: 'settings' });
    const cleared = await api<SettingsUpdateResponse>('PUT', { gatewayUrl: null, gatewayToken: null });
    expect(cleared.json.sources.gatewayUrl).toMatchObject({ source: 'openclaw.json' });
    expect(cleared.json.secrets.gatewayToken).toEqual({ set: true });
  });
});

describe('the gateway address from the environment (as the desktop app reads it)', () => {
  it('says which variables', async () => {
    const other = await startAgent({ env: { OPENCLAW_GATEWAY_URL: 'http://127.0.0.1:18998' } });
    const store = openSettingsStore(other.dataDir);
    const otherConsole = await startConsole({ app: other.app, store, dataDir: other.dataDir, port: 0 });
    try {
      const response = await fetch(`${otherConsole.url}/api/settings`, {
        headers: { authorization: `Bearer ${otherConsole.token}` },
      });
      const json = (await response.json()) as SettingsResponse;
      expect(json.sources.gatewayUrl).toEqual({
        source: 'env',
        from: 'GATEWAY_URL or OPENCLAW_GATEWAY_URL',
        value: 'http://127.0.0.1:18998',
      });
      expect(json.secrets.gatewayToken).toEqual({ set: false });
      expect(json.sources.gatewayToken).toEqual({ source: 'default' });
    } finally {
      await otherConsole.close();
      await other.close();
    }
  });
});
