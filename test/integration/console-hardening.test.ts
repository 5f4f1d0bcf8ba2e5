// Secrets through the console (issue 11, item 7), each a reproduction against a real agent and console:
// the gateway URL's password in GET /api/settings, the write-only gateway token sent to an address a
// console user chose, the console token printed to output that ends up in service logs, and a console token
// that runs commands through `tunnelCommand`.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import type { ApiError, SettingsResponse, SettingsUpdateResponse } from '../../src/protocol/console-api.js';
import type { Settings } from '../../src/settings/schema.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { freePort, startChildAgent } from '../helpers/child-agent.js';
import { until } from '../helpers/polling.js';

const TOKEN = 'gw-token-hardening';
const PASSWORD = 'url-pass-7f3a';
const NEW_ADDRESS_ERROR =
  "gatewayToken: the gateway's address changes: enter its token again, so your current token is never sent to a new address";

let gateway: GatewayDouble;
/** Another gateway: the "new address" a console user points the bridge at. It records what it is sent. */
let elsewhere: GatewayDouble;

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
  elsewhere = await startGatewayDouble({ token: 'another-token' });
});

afterAll(async () => {
  await gateway.close();
  await elsewhere.close();
});

// Each test counts only what the other gateway received during it.
beforeEach(() => void elsewhere.requests.splice(0));

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Setup {
  agent: TestAgent;
  con: ConsoleHandle;
  api<T>(method: string, body?: unknown): Promise<{ status: number; text: string; json: T }>;
  stored(): Settings;
}

/** An agent with `settings` (as flags or the settings file would give them) and its console. */
async function setup(settings: Partial<Settings> = {}): Promise<Setup> {
  const agent = await startAgent({
    settings: { gatewayUrl: gateway.url, gatewayToken: TOKEN, ...settings },
  });
  cleanups.push(() => agent.close());
  const store = openSettingsStore(agent.dataDir);
  const con = await startConsole({ app: agent.app, store, dataDir: agent.dataDir, port: 0 });
  cleanups.push(() => con.close());
  return {
    agent,
    con,
    async api<T>(method: string, body?: unknown) {
      const response = await fetch(`${con.url}/api/settings`, {
        method,
        headers: { authorization: `Bearer ${con.token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, text, json: JSON.parse(text) as T };
    },
    stored: () => openSettingsStore(agent.dataDir).get(),
  };
}

const withPassword = (url: string, password = PASSWORD) => {
  const parsed = new URL(url);
  parsed.username = 'operator';
  parsed.password = password;
  return parsed.toString();
};

/** Requests that carried the gateway token to `double`. */
const tokenSentTo = (double: GatewayDouble) =>
  double.requests.filter((r) => r.headers.authorization === `Bearer ${TOKEN}`).length;

/** Lets a request that would follow a change (the gateway agent check) arrive. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

function fieldsOf(answer: { json: ApiError }): Record<string, string> {
  return Object.fromEntries((answer.json.error.fields ?? []).map((f) => [f.field, f.message]));
}

describe("the gateway URL's password", () => {
  it('is masked in GET /api/settings, as in /api/status', async () => {
    const { api } = await setup({ gatewayUrl: withPassword(gateway.url) });
    const { json, text } = await api<SettingsResponse>('GET');
    expect(text).not.toContain(PASSWORD);
    expect(json.settings.gatewayUrl).toBe(withPassword(gateway.url, '***'));
  });

  it('is kept when a PUT echoes the masked URL back (a script sending every field)', async () => {
    const real = withPassword(gateway.url);
    const { api, agent, stored } = await setup({ gatewayUrl: real });
    const { json: view } = await api<SettingsResponse>('GET');
    expect(view.settings.gatewayUrl).toBe(withPassword(gateway.url, '***'));
    const answer = await api<SettingsUpdateResponse>('PUT', { ...view.settings, rpm: 77 });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json.applied).toEqual(['rpm']);
    expect(agent.app.currentSettings.gatewayUrl).toBe(real);
    expect(agent.app.gateway.current.config.url).toBe(real);
    // Nothing was written for the echoed URL: the store never held it (it came from the flags here).
    expect(stored().gatewayUrl).toBeUndefined();
  });

  it('is kept on a path change of the same origin and user; with another origin "***" is refused', async () => {
    const real = withPassword(gateway.url);
    const { api, agent } = await setup({ gatewayUrl: real });
    const masked = withPassword(gateway.url, '***');
    const moved = await api<SettingsUpdateResponse>('PUT', { gatewayUrl: `${masked}v1` });
    expect(moved.status, moved.text).toBe(200);
    expect(agent.app.currentSettings.gatewayUrl).toBe(`${real}v1`);

    const elsewhereMasked = withPassword(elsewhere.url, '***');
    const refused = await api<ApiError>('PUT', { gatewayUrl: elsewhereMasked, gatewayToken: 'new-token' });
    expect(refused.status).toBe(400);
    expect(fieldsOf(refused).gatewayUrl).toBe(
      'gatewayUrl: holds the hidden password (***) but names another address or user: type the password again',
    );
    expect(agent.app.currentSettings.gatewayUrl).toBe(`${real}v1`);
  });
});

describe('the gateway token when the address changes', () => {
  it('refuses a new origin without the token: 400 on gatewayToken, nothing saved, nothing sent there', async () => {
    const { api, agent, stored } = await setup();
    for (const body of [{ gatewayUrl: elsewhere.url }, { gatewayUrl: elsewhere.url, gatewayToken: '' }]) {
      const answer = await api<ApiError>('PUT', { ...body, rpm: 99 });
      expect(answer.status, answer.text).toBe(400);
      expect(fieldsOf(answer)).toEqual({ gatewayToken: NEW_ADDRESS_ERROR });
      expect(answer.json.error.message).toContain('nothing was saved');
    }
    expect(agent.app.currentSettings).toMatchObject({ gatewayUrl: gateway.url, rpm: 10_000 });
    expect(stored().gatewayUrl).toBeUndefined();
    await settle();
    expect(tokenSentTo(elsewhere)).toBe(0);
  });

  it('counts another port or scheme as another origin', async () => {
    const { api } = await setup();
    const { port } = new URL(gateway.url);
    for (const gatewayUrl of [`http://127.0.0.1:${Number(port) + 1}`, `https://127.0.0.1:${port}`]) {
      const answer = await api<ApiError>('PUT', { gatewayUrl });
      expect(answer.status, gatewayUrl).toBe(400);
      expect(fieldsOf(answer).gatewayToken).toBe(NEW_ADDRESS_ERROR);
    }
  });

  it('takes a new origin with its token, and sends only that token there', async () => {
    const { api, agent } = await setup();
    const answer = await api<SettingsUpdateResponse>('PUT', {
      gatewayUrl: elsewhere.url,
      gatewayToken: 'another-token',
    });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json.applied.sort()).toEqual(['gatewayToken', 'gatewayUrl']);
    expect(agent.app.gateway.current.config).toMatchObject({ url: elsewhere.url, token: 'another-token' });
    await settle();
    expect(tokenSentTo(elsewhere)).toBe(0);
  });

  it('needs no token for a path on the same origin', async () => {
    const { api, agent } = await setup();
    const answer = await api<SettingsUpdateResponse>('PUT', { gatewayUrl: `${gateway.url}/openclaw` });
    expect(answer.status, answer.text).toBe(200);
    expect(agent.app.gateway.current.config).toMatchObject({ url: `${gateway.url}/openclaw`, token: TOKEN });
  });

  it('treats clearing the URL (back to the env, OpenClaw config or default address) as a new origin', async () => {
    const { api, agent } = await setup();
    const refused = await api<ApiError>('PUT', { gatewayUrl: null });
    expect(refused.status).toBe(400);
    expect(fieldsOf(refused)).toEqual({ gatewayToken: NEW_ADDRESS_ERROR });
    expect(agent.app.currentSettings.gatewayUrl).toBe(gateway.url);

    const cleared = await api<SettingsUpdateResponse>('PUT', { gatewayUrl: null, gatewayToken: 'next' });
    expect(cleared.status, cleared.text).toBe(200);
    expect(agent.app.currentSettings.gatewayUrl).toBeUndefined();
  });

  it('never lets a cleared token fall back to the env or OpenClaw token while the address is set here', async () => {
    // The review's reproduction: point the gateway elsewhere with a dummy token, then clear the token so the
    // real one (from OPENCLAW_GATEWAY_TOKEN or openclaw.json) would be sent there.
    const agent = await startAgent({
      settings: { gatewayUrl: gateway.url },
      env: { OPENCLAW_GATEWAY_TOKEN: TOKEN },
    });
    cleanups.push(() => agent.close());
    const con = await startConsole({
      app: agent.app,
      store: openSettingsStore(agent.dataDir),
      dataDir: agent.dataDir,
      port: 0,
    });
    cleanups.push(() => con.close());
    const put = async (body: unknown) => {
      const response = await fetch(`${con.url}/api/settings`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${con.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, json: (await response.json()) as ApiError };
    };
    expect((await put({ gatewayUrl: elsewhere.url, gatewayToken: 'dummy' })).status).toBe(200);
    const refused = await put({ gatewayToken: null });
    expect(refused.status).toBe(400);
    expect(fieldsOf(refused).gatewayToken).toMatch(/clear the gateway URL too/);
    await settle();
    expect(tokenSentTo(elsewhere)).toBe(0);
    expect(agent.app.gateway.current.config).toMatchObject({ url: elsewhere.url, token: 'dummy' });
    // Both cleared: the env's token goes to the address from the same place (here the default), not elsewhere.
    expect((await put({ gatewayToken: null, gatewayUrl: null })).status).toBe(200);
    expect(agent.app.gateway.current.config.url).not.toBe(elsewhere.url);
    await settle();
    expect(tokenSentTo(elsewhere)).toBe(0);
  });

  it('needs no token when none is configured: there is nothing to leak', async () => {
    const { api, agent } = await setup({ gatewayToken: undefined });
    const answer = await api<SettingsUpdateResponse>('PUT', { gatewayUrl: elsewhere.url });
    expect(answer.status, answer.text).toBe(200);
    expect(agent.app.currentSettings.gatewayUrl).toBe(elsewhere.url);
  });
});

describe('the tunnel command through the console', () => {
  it('refuses to set tunnelCommand or tunnelUrlPattern: 403 with the field and where to set it', async () => {
    const { api, agent, stored } = await setup();
    const answer = await api<ApiError>('PUT', {
      tunnelCommand: 'touch /tmp/owned',
      tunnelUrlPattern: '(a+)+$',
      rpm: 55,
    });
    expect(answer.status, answer.text).toBe(403);
    expect(fieldsOf(answer)).toEqual({
      tunnelCommand:
        'tunnelCommand: cannot be changed from the console (it runs a program on this machine): set it with --tunnel-command or in settings.json on the machine',
      tunnelUrlPattern:
        'tunnelUrlPattern: cannot be changed from the console (it goes with the tunnel command): set it with --tunnel-url-pattern or in settings.json on the machine',
    });
    expect(answer.json.error.message).toContain('nothing was saved');
    expect(agent.app.currentSettings.tunnelCommand).toBeUndefined();
    expect(agent.app.currentSettings.rpm).toBe(10_000);
    expect(stored().tunnelCommand).toBeUndefined();
  });

  it("shows the operator's command, takes it echoed back unchanged, and refuses another or clearing it", async () => {
    const tunnelCommand = 'sleep 30 # {port}';
    const { api, agent } = await setup({ tunnelCommand });
    const { json: view } = await api<SettingsResponse>('GET');
    expect(view.settings.tunnelCommand).toBe(tunnelCommand);
    const echoed = await api<SettingsUpdateResponse>('PUT', { ...view.settings, perSender: 9 });
    expect(echoed.status, echoed.text).toBe(200);
    for (const value of ['sleep 31', null]) {
      const answer = await api<ApiError>('PUT', { tunnelCommand: value });
      expect(answer.status).toBe(403);
      expect(Object.keys(fieldsOf(answer))).toEqual(['tunnelCommand']);
    }
    expect(agent.app.currentSettings.tunnelCommand).toBe(tunnelCommand);
  });

  it('lets the console pick tunnel: command only when the operator set a command', async () => {
    const without = await setup();
    const refused = await without.api<ApiError>('PUT', { tunnel: 'command' });
    expect(refused.status).toBe(400);
    expect(fieldsOf(refused).tunnel).toBe(
      'tunnel: "command" runs the tunnel command set on this machine, and none is set: choose a stable-address preset, or set it with --tunnel-command or in settings.json on the machine',
    );
    expect(without.agent.app.currentSettings.tunnel).toBe('none');

    const operator = await setup({ tunnelCommand: 'sleep 30 # {port}' });
    const picked = await operator.api<SettingsUpdateResponse>('PUT', { tunnel: 'command' });
    expect(picked.status, picked.text).toBe(200);
    expect(operator.agent.app.currentSettings.tunnel).toBe('command');
    await operator.api('PUT', { tunnel: 'none' });
  });
});

describe('the console link printed by `serve`', () => {
  it('leaves the token out when the output is not a terminal, and says where it is', async () => {
    const dataDir = tempDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const child = await startChildAgent([
      '--port',
      String(port),
      '--data-dir',
      dataDir,
      '--tunnel',
      'none',
      '--console-port',
      '0',
      '--gateway-url',
      gateway.url,
      '--gateway-token',
      TOKEN,
    ]);
    cleanups.push(() => child.process.exitCode === null && child.process.kill('SIGKILL'));
    await until(() => child.output().includes('Access:'), 10_000, `the start output:\n${child.output()}`);
    const file = join(dataDir, 'console.json');
    const info = JSON.parse(readFileSync(file, 'utf8')) as { url: string; token: string };
    const output = child.output();
    expect(output).not.toContain(info.token);
    expect(output).toContain(
      `  Console:    ${info.url}/ (its token is not printed here: this output may be kept in a log)\n` +
        `              Get the link with the token: jq -r '.url + "/#token=" + .token' '${file}'\n`,
    );
    child.process.kill('SIGTERM');
    expect(await child.exited).toBe('0');
  });
});
