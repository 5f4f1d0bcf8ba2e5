import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import type { Mode } from '../../src/protocol/index.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startAgent, type TestAgent } from '../helpers/agents.js';
import { PATHS, envelope, post, sign } from '../helpers/envelopes.js';

// After a varied run (accepted and refused calls, a gateway failure, a gateway token set through the console,
// key rotation, message contents kept), no log file and no console answer holds a secret.
const GATEWAY_TOKEN = `gw-${randomBytes(24).toString('hex')}`;
const BEARER_TOKEN = `bearer-${randomBytes(24).toString('hex')}`;

let gateway: GatewayDouble;
let agent: TestAgent;
let peer: TestAgent;
let con: ConsoleHandle;
const privateKeys = new Set<string>();
const answers: string[] = [];

function rememberPrivateKey(): void {
  const file = JSON.parse(readFileSync(join(agent.dataDir, 'keys.json'), 'utf8')) as {
    signingKey: { privateKey: string };
  };
  privateKeys.add(file.signingKey.privateKey);
}

async function consoleApi(path: string, method = 'GET', body?: unknown): Promise<string> {
  const response = await fetch(`${con.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${con.token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  expect(response.status, `${method} ${path}: ${text}`).toBeLessThan(400);
  answers.push(text);
  return text;
}

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: GATEWAY_TOKEN });
  agent = await startAgent({
    settings: { gatewayUrl: gateway.url, keepMessageContents: true, bearerTokens: [BEARER_TOKEN] },
  });
  peer = await startAgent();
  con = await startConsole({
    app: agent.app,
    store: openSettingsStore(agent.dataDir),
    dataDir: agent.dataDir,
    port: 0,
    traffic: { flushMs: 10 },
  });
  rememberPrivateKey();
});

afterAll(async () => {
  await con.close();
  await agent.close();
  await peer.close();
  await gateway.close();
});

describe('the traffic log keeps no secret', () => {
  it('after a varied run, no log file, export, stream or answer holds a token or a private key', async () => {
    const events = await fetch(`${con.url}/api/events?token=${con.token}`);
    const streamed: string[] = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of events.body!) streamed.push(decoder.decode(chunk as Uint8Array));
    })().catch(() => undefined);

    await consoleApi('/api/settings', 'PUT', { gatewayToken: GATEWAY_TOKEN });
    const call = (mode: Mode, message: string) =>
      post(
        agent.url,
        PATHS[mode],
        sign(envelope(peer.id, agent.id, mode, { message }), peer.app.keys.signer),
      );
    for (const mode of ['sync', 'async', 'stream'] as const)
      expect((await call(mode, 'hello')).status).toBeLessThan(300);
    // A caller quoting the token (as if it had learnt it) must not put it in the log through the preview.
    expect((await call('sync', `is your token ${GATEWAY_TOKEN}?`)).status).toBe(200);
    const tampered = sign(envelope(peer.id, agent.id, 'sync', { message: 'a' }), peer.app.keys.signer);
    expect(
      (await post(agent.url, PATHS.sync, { ...tampered, body: tampered.body.replace('"a"', '"b"') })).status,
    ).toBe(401);
    const unsigned = JSON.stringify(envelope(peer.id, agent.id, 'sync', { message: 'unsigned' }));
    const refused = await post(agent.url, PATHS.sync, {
      body: unsigned,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${BEARER_TOKEN}` },
    });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    gateway.set({ behaviour: 'unauthorized' });
    expect((await call('sync', 'the gateway refuses this')).status).toBeGreaterThanOrEqual(500);
    gateway.set({ behaviour: 'ok' });

    await consoleApi('/api/keys/rotate', 'POST');
    rememberPrivateKey();
    expect((await call('sync', 'signed with the new key')).status).toBe(200);
    await consoleApi('/api/status');
    await consoleApi('/api/settings');
    await consoleApi('/api/traffic');
    const exported = await consoleApi('/api/traffic/export');
    await con.close();
    await reading;

    const logDir = join(agent.dataDir, 'logs');
    const files = readdirSync(logDir).map((name) => readFileSync(join(logDir, name), 'utf8'));
    const everything = [...files, exported, streamed.join(''), ...answers];

    // The search is not vacuous: the log holds the run, previews included, and the masked quote.
    const log = files.join('');
    expect(exported.trim().split('\n').length).toBeGreaterThanOrEqual(8);
    expect(log).toContain(peer.id);
    expect(log).toContain('"verdict":"signature"');
    expect(log).toContain('signed with the new key');
    expect(log).toContain('is your token [secret]?');
    expect(log).toMatch(/"diagnosis":"[^"]+"/);
    expect(streamed.join('')).toContain('event: envelope');
    expect(privateKeys.size).toBe(2);

    const secrets = new Map<string, string>([
      ['the gateway token', GATEWAY_TOKEN],
      ['a bearer token', BEARER_TOKEN],
    ]);
    for (const key of privateKeys) {
      const raw = Buffer.from(key, 'base64');
      expect(raw).toHaveLength(32);
      secrets.set(`private key ${key.slice(0, 4)} (base64)`, key);
      secrets.set(`private key ${key.slice(0, 4)} (base64url)`, raw.toString('base64url'));
      secrets.set(`private key ${key.slice(0, 4)} (hex)`, raw.toString('hex'));
    }
    for (const [what, secret] of secrets) {
      for (const [i, text] of everything.entries())
        expect(text.includes(secret), `${what} in output ${i}`).toBe(false);
    }
    for (const file of files) expect(file.includes(con.token), 'the console token in a log file').toBe(false);
  });
});
