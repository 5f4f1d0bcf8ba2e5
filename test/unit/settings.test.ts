import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Conf from 'conf';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultDataDir } from '../../src/settings/data-dir.js';
import { parseServeArgs, SERVE_HELP } from '../../src/settings/flags.js';
import {
  DEFAULT_SETTINGS,
  redactSettings,
  SETTING_NAMES,
  settingsSchema,
  validateSettings,
  type Settings,
} from '../../src/settings/schema.js';
import { openSettingsStore, SettingsError, settingsConfOptions } from '../../src/settings/store.js';

const posixOnly = process.platform === 'win32' ? it.skip : it;
const KEY_A = 'A'.repeat(43) + '=';
const KEY_B = 'B'.repeat(42) + 'E=';
let dataDir: string;

function errorOf(action: () => unknown): Error | undefined {
  try {
    action();
  } catch (error) {
    return error as Error;
  }
  return undefined;
}

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'agent-bridge-settings-'));
});
afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('schema and defaults', () => {
  it('gives every setting with a default its default, and leaves optional ones unset', () => {
    const settings = openSettingsStore(dataDir).get();
    expect(settings).toEqual(DEFAULT_SETTINGS);
    expect(settings).toMatchObject({
      port: 8787,
      host: '127.0.0.1',
      consolePort: 8788,
      // Safe by default: callers reach a dedicated agent, and each new sender waits for the operator.
      gatewayAgent: 'public',
      access: 'pairing',
      injectionScreen: 'flag',
      pendingExpiryHours: 24,
      registryUrl: 'https://samvad.dev',
      gatewayTimeoutMs: 120_000,
      tunnel: 'localtunnel',
      chatTrust: 'public',
      cardTTL: 300,
      rpm: 60,
      perSender: 10,
      tokensPerDay: 100_000,
      taskRetentionHours: 24,
      shutdownGraceSeconds: 10,
    });
    expect(settings.gatewayUrl).toBeUndefined();
    expect(settings.gatewayToken).toBeUndefined();
    expect(settings.gatewayModel).toBeUndefined();
    expect(settings.publicUrl).toBeUndefined();
  });

  it('carries the same defaults in the JSON Schema that conf is given', () => {
    for (const name of SETTING_NAMES) {
      const schema = settingsSchema[name] as { default?: unknown };
      expect(schema.default, name).toEqual((DEFAULT_SETTINGS as Partial<Settings>)[name]);
    }
  });
});

describe('validateSettings', () => {
  it('accepts a valid subset and returns a copy', () => {
    const input = { port: 9000, allowedPeers: ['agent://a.example', 'agent://127.0.0.1:8787'] };
    const result = validateSettings(input);
    expect(result).toEqual({ ok: true, value: input });
    if (result.ok) expect(result.value.allowedPeers).not.toBe(input.allowedPeers);
  });

  it('names the field and the rule in plain words', () => {
    const result = validateSettings({
      port: 70000,
      tunnel: 'ngrok',
      rpm: 0,
      taskRetentionHours: 0.5,
      publicUrl: 'ftp://example.com',
      trustedPeerKeys: { 'agent://x': 'short' },
      colour: 'blue',
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const byField = Object.fromEntries(result.errors.map((error) => [error.field, error.message]));
    expect(byField).toEqual({
      port: 'port: must be an integer between 0 and 65535',
      tunnel: 'tunnel: must be one of: localtunnel, command, none',
      rpm: 'rpm: must be an integer between 1 and 1000000',
      taskRetentionHours: 'taskRetentionHours: must be an integer between 1 and 8760 (hours)',
      publicUrl: 'publicUrl: must be an http:// or https:// URL',
      trustedPeerKeys:
        'trustedPeerKeys: must map agent ids (agent://host) to base64 32-byte Ed25519 public keys',
      colour: 'colour: is not a known setting',
    });
  });

  it('never echoes a rejected secret', () => {
    const result = validateSettings({ bearerTokens: ['tiny'], gatewayToken: '' });
    expect(JSON.stringify(result)).not.toContain('tiny');
    expect(result.ok).toBe(false);
  });

  const research = {
    id: 'research',
    name: 'Research',
    description: 'Searches the web and answers with sources.',
    examples: ['What changed in Node 22?'],
    agent: 'research',
    audience: 'approved',
    limits: { requestsPerMinute: 5 },
    paused: false,
  };

  it('takes skills, and names the skill and the field of each problem (issue 27)', () => {
    expect(validateSettings({ skills: [research] })).toEqual({ ok: true, value: { skills: [research] } });
    const result = validateSettings({
      skills: [
        { ...research, audience: 'everyone', limits: { tokensPerDay: 0, perHour: 3 } },
        { ...research, name: 'Two\nlines', examples: ['a', 'b', 'c', 'd', 'e', 'f'] },
        { ...research, id: 'chat', agent: 'not an agent' },
        { ...research, id: 'Bad_Id', colour: 'blue' },
      ],
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.every((error) => error.field === 'skills')).toBe(true);
    expect(result.errors.map((error) => error.message)).toEqual([
      'skills[0] "research".audience: must be one of: public, approved, named',
      'skills[0] "research".limits.tokensPerDay: must be a whole number from 1 to 1,000,000,000; leave it out for the per-sender default',
      'skills[0] "research".limits.perHour: is not a limit: use requestsPerMinute and tokensPerDay',
      'skills[1] "research".name: must be one line of 1 to 100 characters (the cards show it)',
      'skills[1] "research".examples: must be a list of at most 5 sample requests, each one line of 1 to 200 characters',
      'skills[1] "research".id: is taken by another skill: each skill needs its own id',
      'skills[2] "chat".id: chat is the built-in skill: choose another id',
      'skills[2] "chat".agent: must be an OpenClaw agent id: 1 to 64 letters, digits, dots, dashes or underscores (the skill runs on openclaw/<agent>)',
      expect.stringMatching(/^skills\[3\]\.colour: is not a skill field: use id, name, /),
      'skills[3].id: must be 1 to 40 lower-case letters, digits or dashes, starting with a letter or digit (it is in the cards and the A2A paths)',
    ]);
    expect(validateSettings({ skills: 'research' })).toEqual({
      ok: false,
      errors: [{ field: 'skills', message: expect.stringMatching(/^skills: must be a list of skills/) }],
    });
  });

  it('keeps skills in the settings store, and refuses a hand-edited bad one by its skill and field', () => {
    const store = openSettingsStore(dataDir);
    store.update({ skills: [research] as Settings['skills'] });
    expect(openSettingsStore(dataDir).get().skills).toEqual([research]);
    const error = errorOf(() =>
      store.update({ skills: [{ ...research, audience: 'all' }] as unknown as Settings['skills'] }),
    );
    expect(error?.message).toMatch(/skills\[0\] "research"\.audience: must be one of/);
  });

  it('refuses what is not an object', () => {
    expect(validateSettings([1])).toEqual({
      ok: false,
      errors: [{ field: '', message: 'settings must be a JSON object' }],
    });
  });
});

describe('the settings store', () => {
  it('persists updates, stores only what was set, and reopens with them', () => {
    const store = openSettingsStore(dataDir);
    const updated = store.update({
      port: 9100,
      bearerTokens: ['token-one-123'],
      trustedPeerKeys: { 'agent://a': KEY_A },
    });
    expect(updated.port).toBe(9100);
    expect(store.path).toBe(join(dataDir, 'settings.json'));
    const onDisk = JSON.parse(readFileSync(store.path, 'utf8')) as Record<string, unknown>;
    expect(Object.keys(onDisk).sort()).toEqual(['bearerTokens', 'port', 'trustedPeerKeys']);

    const reopened = openSettingsStore(dataDir).get();
    expect(reopened).toEqual({
      ...DEFAULT_SETTINGS,
      port: 9100,
      bearerTokens: ['token-one-123'],
      trustedPeerKeys: { 'agent://a': KEY_A },
    });
  });

  posixOnly('keeps the settings file at mode 0600, narrowing a looser one', () => {
    const store = openSettingsStore(dataDir);
    store.update({ gatewayToken: 'secret-token' });
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    chmodSync(store.path, 0o644);
    openSettingsStore(dataDir);
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
  });

  it('refuses an invalid update with every field listed, and writes nothing', () => {
    const store = openSettingsStore(dataDir);
    store.update({ rpm: 30 });
    const error = errorOf(() => store.update({ rpm: -1, host: '', port: 80 }));
    expect(error).toBeInstanceOf(SettingsError);
    expect((error as SettingsError).errors.map((e) => e.field).sort()).toEqual(['host', 'rpm']);
    expect(error?.message).toContain('rpm: must be an integer between 1 and 1000000');
    expect(store.get()).toMatchObject({ rpm: 30, port: 8787 });
  });

  it('resets fields to their defaults', () => {
    const store = openSettingsStore(dataDir);
    store.update({ rpm: 30, gatewayUrl: 'http://127.0.0.1:18789' });
    const after = store.reset('rpm', 'gatewayUrl');
    expect(after.rpm).toBe(60);
    expect(after.gatewayUrl).toBeUndefined();
  });

  it('uses a conf instance it is given (as the desktop shell passes an electron-store)', () => {
    const conf = new Conf<Settings>(settingsConfOptions(dataDir));
    const store = openSettingsStore(dataDir, conf);
    expect(store.conf).toBe(conf);
    store.update({ agentName: 'Desk' });
    expect(conf.get('agentName')).toBe('Desk');
    // conf validates with the same schema, so even a direct write cannot store a bad value.
    expect(() => conf.set('port', -1)).toThrow();
  });

  it('explains a corrupt file without quoting it and never clears it', () => {
    const path = join(dataDir, 'settings.json');
    writeFileSync(path, '{"gatewayToken": "hunter2-secret", ');
    const error = errorOf(() => openSettingsStore(dataDir).get());
    expect(error).toBeInstanceOf(SettingsError);
    expect(error?.message).toContain(path);
    expect(error?.message).toContain('delete it');
    expect(error?.message).not.toContain('hunter2');
    expect(readFileSync(path, 'utf8')).toContain('hunter2');
  });

  it('names the bad field of a hand-edited file', () => {
    writeFileSync(join(dataDir, 'settings.json'), JSON.stringify({ port: 'eighty' }));
    const error = errorOf(() => openSettingsStore(dataDir).get());
    expect(error?.message).toContain('port: must be an integer between 0 and 65535');
    expect((error as SettingsError).errors).toEqual([
      { field: 'port', message: 'port: must be an integer between 0 and 65535' },
    ]);
  });
});

describe('redactSettings', () => {
  it('shows secrets only as set / not set and a count', () => {
    const settings = {
      ...DEFAULT_SETTINGS,
      gatewayToken: 'gw-secret-1',
      bearerTokens: ['bearer-a-123', 'bearer-b-456'],
    };
    const redacted = redactSettings(settings);
    expect(redacted.gatewayToken).toEqual({ set: true });
    expect(redacted.bearerTokens).toEqual({ set: true, count: 2 });
    expect(redacted.port).toBe(8787);
    const text = JSON.stringify(redacted);
    for (const secret of ['gw-secret-1', 'bearer-a-123', 'bearer-b-456']) expect(text).not.toContain(secret);
    expect(redactSettings({ ...DEFAULT_SETTINGS }).gatewayToken).toEqual({ set: false });
  });
});

describe('parseServeArgs', () => {
  it('maps every kind of flag to settings', () => {
    // prettier-ignore
    const argv = [
      '--port', '9000', '--host', '0.0.0.0', '--console-port', '0', '--data-dir', '/srv/bridge',
      '--gateway-url', 'http://127.0.0.1:18789', '--gateway-token', 'gw-token', '--gateway-model', 'openclaw/main',
      '--gateway-timeout', '2.5', '--tunnel', 'localtunnel', '--tunnel-host', 'http://localhost:9999',
      '--subdomain', 'my-agent', '--public-url', 'https://agent.example.com', '--registry-url', 'http://localhost:3000',
      '--allowed-peers', 'agent://a.example, agent://b.example', '--chat-trust', 'trusted-peers', '--card-ttl', '60',
      '--rpm', '100', '--per-sender', '5', '--tokens-per-day', '5000', '--dev-http-peers', '--allow-unsigned',
      '--bearer-token', 'bearer-one-1', '--bearer-token', 'bearer-two-2',
    ];
    expect(parseServeArgs(argv, {})).toEqual({
      dataDir: '/srv/bridge',
      dataDirFrom: 'flag',
      help: false,
      register: false,
      newConsoleToken: false,
      demo: false,
      origins: expect.objectContaining({ port: { source: 'flag', name: '--port' } }),
      overrides: {
        port: 9000,
        host: '0.0.0.0',
        consolePort: 0,
        gatewayUrl: 'http://127.0.0.1:18789',
        gatewayToken: 'gw-token',
        gatewayModel: 'openclaw/main',
        gatewayTimeoutMs: 2500,
        tunnel: 'localtunnel',
        tunnelHost: 'http://localhost:9999',
        subdomain: 'my-agent',
        publicUrl: 'https://agent.example.com',
        registryUrl: 'http://localhost:3000',
        allowedPeers: ['agent://a.example', 'agent://b.example'],
        chatTrust: 'trusted-peers',
        cardTTL: 60,
        rpm: 100,
        perSender: 5,
        tokensPerDay: 5000,
        devHttpPeers: true,
        allowUnsigned: true,
        bearerTokens: ['bearer-one-1', 'bearer-two-2'],
      },
    });
  });

  it('collects a repeated --trust-peer into one map (base64 padding included)', () => {
    const { overrides } = parseServeArgs(
      ['--trust-peer', `agent://a=${KEY_A}`, '--trust-peer', `agent://b:8787=${KEY_B}`],
      {},
    );
    expect(overrides.trustedPeerKeys).toEqual({ 'agent://a': KEY_A, 'agent://b:8787': KEY_B });
  });

  it('refuses a --trust-peer without a key', () => {
    expect(() => parseServeArgs(['--trust-peer', 'agent://a'], {})).toThrow(
      /--trust-peer: expected agent:\/\/host=BASE64KEY/,
    );
  });

  it('names an unknown flag and points at --help', () => {
    expect(() => parseServeArgs(['--port', '1', '--colour', 'blue'], {})).toThrow(
      'Unknown flag --colour. Run with --help to list the flags.',
    );
  });

  it('names the flag and the rule for a bad value', () => {
    expect(() => parseServeArgs(['--port', 'eighty'], {})).toThrow(
      '--port: must be an integer between 0 and 65535 (got "eighty")',
    );
    expect(() => parseServeArgs(['--gateway-timeout', 'soon'], {})).toThrow(
      '--gateway-timeout: must be a number of seconds between 0.1 and 3600',
    );
    expect(() => parseServeArgs(['--chat-trust', 'friends'], {})).toThrow(
      '--chat-trust: must be one of: public, authenticated, trusted-peers',
    );
  });

  it('does not echo a bad secret', () => {
    const error = errorOf(() => parseServeArgs(['--bearer-token', 'tiny'], {}));
    expect(error?.message).toContain('--bearer-token: must be a list of tokens');
    expect(error?.message).not.toContain('tiny');
  });

  it('reads env, and flags beat env', () => {
    const env = {
      PORT: '9001',
      GATEWAY_URL: 'http://gw.local:1',
      GATEWAY_TOKEN: 'env-token',
      GATEWAY_MODEL: 'openclaw:ops',
      AGENT_BRIDGE_DATA_DIR: '/env/dir',
    };
    expect(parseServeArgs([], env)).toEqual({
      dataDir: '/env/dir',
      dataDirFrom: 'env',
      help: false,
      register: false,
      newConsoleToken: false,
      demo: false,
      overrides: {
        port: 9001,
        gatewayUrl: 'http://gw.local:1',
        gatewayToken: 'env-token',
        gatewayModel: 'openclaw:ops',
      },
      // Where each came from, for the console's Settings page.
      origins: {
        port: { source: 'env', name: 'PORT' },
        gatewayUrl: { source: 'env', name: 'GATEWAY_URL' },
        gatewayToken: { source: 'env', name: 'GATEWAY_TOKEN' },
        gatewayModel: { source: 'env', name: 'GATEWAY_MODEL' },
      },
    });
    const flagged = parseServeArgs(
      ['--port', '9002', '--gateway-token', 'flag-token', '--data-dir', '/flag/dir'],
      env,
    );
    expect(flagged.dataDir).toBe('/flag/dir');
    expect(flagged.overrides).toMatchObject({
      port: 9002,
      gatewayToken: 'flag-token',
      gatewayUrl: 'http://gw.local:1',
    });
    expect(flagged.origins).toMatchObject({
      port: { source: 'flag', name: '--port' },
      gatewayToken: { source: 'flag', name: '--gateway-token' },
      gatewayUrl: { source: 'env', name: 'GATEWAY_URL' },
    });
  });

  it('ignores empty env values and names a bad env var', () => {
    expect(parseServeArgs([], { PORT: '' }).overrides).toEqual({});
    expect(() => parseServeArgs([], { PORT: '99999' })).toThrow(
      'PORT: must be an integer between 0 and 65535',
    );
  });

  it('returns help without judging the other flags', () => {
    expect(parseServeArgs(['--port', 'x', '--help'], {})).toEqual({
      overrides: {},
      origins: {},
      help: true,
      register: false,
      newConsoleToken: false,
      demo: false,
    });
    expect(parseServeArgs(['-h'], {}).help).toBe(true);
  });

  it('lists every flag in the help with its default and env var, one per line', () => {
    // prettier-ignore
    const flags = [
      'port', 'host', 'console-port', 'data-dir', 'gateway-url', 'gateway-token', 'gateway-model', 'gateway-timeout',
      'tunnel', 'tunnel-host', 'subdomain', 'tunnel-command', 'public-url', 'registry-url', 'allowed-peers',
      'trust-peer', 'bearer-token', 'chat-trust', 'card-ttl', 'rpm', 'per-sender', 'tokens-per-day',
      'dev-http-peers', 'allow-unsigned', 'help',
    ];
    const lines = SERVE_HELP.split('\n');
    for (const flag of flags) expect(lines.filter((line) => line.startsWith(`  --${flag} `))).toHaveLength(1);
    const line = (flag: string) => lines.find((l) => l.startsWith(`  --${flag} `)) ?? '';
    expect(line('port')).toMatch(/default: 8787; env: PORT/);
    expect(line('gateway-url')).toMatch(/env: GATEWAY_URL/);
    expect(line('gateway-timeout')).toMatch(/default: 120\)/);
    expect(line('card-ttl')).toMatch(/default: 300/);
    expect(line('data-dir')).toMatch(/env: AGENT_BRIDGE_DATA_DIR/);
  });
});

describe('defaultDataDir', () => {
  it('prefers AGENT_BRIDGE_DATA_DIR', () => {
    expect(defaultDataDir({ AGENT_BRIDGE_DATA_DIR: '/data/bridge', HOME: '/home/u' }, 'linux')).toBe(
      '/data/bridge',
    );
  });

  it('uses the folder Electron userData resolves to on each platform', () => {
    expect(defaultDataDir({ HOME: '/home/u' }, 'linux')).toBe('/home/u/.config/Agent Bridge');
    expect(defaultDataDir({ HOME: '/home/u', XDG_CONFIG_HOME: '/xdg' }, 'linux')).toBe('/xdg/Agent Bridge');
    expect(defaultDataDir({ HOME: '/Users/u' }, 'darwin')).toBe(
      '/Users/u/Library/Application Support/Agent Bridge',
    );
    expect(defaultDataDir({ APPDATA: 'C:\\Users\\u\\AppData\\Roaming' }, 'win32')).toBe(
      'C:\\Users\\u\\AppData\\Roaming\\Agent Bridge',
    );
    expect(defaultDataDir({ USERPROFILE: 'C:\\Users\\u' }, 'win32')).toBe(
      'C:\\Users\\u\\AppData\\Roaming\\Agent Bridge',
    );
  });
});

describe('--register', () => {
  it('is an action for this run, not a setting', () => {
    expect(parseServeArgs(['--register', '--tunnel', 'none'], {})).toEqual({
      overrides: { tunnel: 'none' },
      origins: { tunnel: { source: 'flag', name: '--tunnel' } },
      help: false,
      register: true,
      newConsoleToken: false,
      demo: false,
    });
  });
});

describe('--new-console-token', () => {
  it('is an action for this run, not a setting', () => {
    expect(parseServeArgs(['--new-console-token'], {})).toMatchObject({
      overrides: {},
      newConsoleToken: true,
    });
  });
});
