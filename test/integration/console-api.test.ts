import { mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsole, type ConsoleHandle, type ConsoleOptions } from '../../src/console/console-server.js';
import { CONTENT_SECURITY_POLICY } from '../../src/console/security-headers.js';
import type {
  ApiError,
  SelfTestResponse,
  SettingsResponse,
  SettingsUpdateResponse,
  StatusResponse,
  TrafficEntry,
  TrafficResponse,
} from '../../src/protocol/console-api.js';
import type { AgentCard } from '../../src/protocol/index.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startRegistryDouble, type RegistryDouble } from '../fixtures/registry-double.js';
import { startTunnelServer, type TunnelServer } from '../fixtures/tunnel-server.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { envelope, post, sign } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';
import { readSse, type SseBlock } from '../helpers/sse.js';

// The operator console on its own loopback port, against a real agent, gateway double and registry double.
let gateway: GatewayDouble;
let registry: RegistryDouble;
let agent: TestAgent;
let peer: TestAgent;
let con: ConsoleHandle;
let uiDir: string;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: 'gw-token-console' });
  registry = await startRegistryDouble();
  const gatewaySettings = { gatewayUrl: gateway.url, gatewayToken: 'gw-token-console' };
  agent = await startAgent({ settings: { ...gatewaySettings, registryUrl: registry.url } });
  peer = await startAgent({ settings: gatewaySettings });
  // A built UI beside a file it must never serve.
  const root = tempDir('console-ui-');
  uiDir = join(root, 'ui');
  mkdirSync(join(uiDir, 'assets'), { recursive: true });
  writeFileSync(join(uiDir, 'index.html'), '<!doctype html><title>Console</title><div id="root"></div>');
  writeFileSync(join(uiDir, 'assets', 'app-1234.js'), 'console.log("ui");');
  writeFileSync(join(uiDir, 'assets', 'app-1234.css'), 'body{}');
  writeFileSync(join(root, 'secret.txt'), 'TOP-SECRET');
  symlinkSync(join(root, 'secret.txt'), join(uiDir, 'link.txt'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  con = await openConsole(agent);
});

afterAll(async () => {
  await con.close();
  for (const cleanup of cleanups.reverse()) await cleanup();
  await agent.close();
  await peer.close();
  await registry.close();
  await gateway.close();
});

function openConsole(target: TestAgent, options: Partial<ConsoleOptions> = {}): Promise<ConsoleHandle> {
  const store = openSettingsStore(target.dataDir);
  return startConsole({
    app: target.app,
    store,
    dataDir: target.dataDir,
    port: 0,
    staticDir: uiDir,
    ...options,
  });
}

interface Answer<T> {
  status: number;
  headers: Headers;
  text: string;
  json: T;
}

async function api<T = unknown>(
  path: string,
  init: { method?: string; body?: unknown; token?: string | null; headers?: Record<string, string> } = {},
  target: ConsoleHandle = con,
): Promise<Answer<T>> {
  const token = init.token === undefined ? target.token : init.token;
  const headers: Record<string, string> = { ...init.headers };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (init.body !== undefined) headers['content-type'] ??= 'application/json';
  const response = await fetch(`${target.url}${path}`, {
    method: init.method ?? 'GET',
    headers,
    body:
      init.body === undefined
        ? undefined
        : typeof init.body === 'string'
          ? init.body
          : JSON.stringify(init.body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json: json as T };
}

/** node:http, because fetch will not forge a Host header or send `..` in a path. */
function raw(
  path: string,
  headers: Record<string, string>,
  target: ConsoleHandle = con,
): Promise<{ status: number; body: string }> {
  const { port } = new URL(target.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function card(): Promise<AgentCard> {
  return (await (await fetch(`${agent.url}/.well-known/agent.json`)).json()) as AgentCard;
}

/** An open /api/events stream, read block by block. */
async function events(target: ConsoleHandle = con) {
  const abort = new AbortController();
  const response = await fetch(`${target.url}/api/events?token=${target.token}`, { signal: abort.signal });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const blocks = readSse(response)[Symbol.asyncIterator]();
  const next = async (event?: string, timeoutMs = 3000): Promise<SseBlock> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const timeout = new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`no ${event ?? 'block'} within ${timeoutMs} ms`)),
          deadline - Date.now(),
        ),
      );
      const { value, done } = await Promise.race([blocks.next(), timeout]);
      if (done) throw new Error('the event stream ended');
      if (event === undefined || value.event === event) return value;
    }
  };
  /** The next `state` event of this kind; others (a card rebuilt along the way) are skipped. */
  const nextState = async (kind: string): Promise<unknown> => {
    for (;;) {
      const block = await next('state');
      if ((block.data as { kind?: string }).kind === kind) return block.data;
    }
  };
  return { next, nextState, close: () => abort.abort() };
}

function signedCall(message = 'hello console') {
  return post(
    agent.url,
    '/agent/message',
    sign(envelope(peer.id, agent.id, 'sync', { message }), peer.app.keys.signer),
  );
}

describe('access', () => {
  it('refuses /api without the token, saying where to find it', async () => {
    for (const token of [null, 'wrong-token', `${con.token}x`]) {
      const answer = await api<ApiError>('/api/status', { token });
      expect(answer.status, String(token)).toBe(401);
      expect(answer.json.error.message).toMatch(/console\.json/);
      expect(answer.json.error.message).toContain(join(agent.dataDir, 'console.json'));
      expect(answer.json.error.fix).toMatch(/Authorization: Bearer/);
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    expect((await api('/api/status')).status).toBe(200);
  });

  it('takes ?token= only on /api/events (EventSource cannot send headers)', async () => {
    expect((await api(`/api/status?token=${con.token}`, { token: null })).status).toBe(401);
    const stream = await events();
    expect((await stream.next('hello')).data).toEqual({ lastId: expect.any(Number) });
    stream.close();
    const refused = await fetch(`${con.url}/api/events?token=nope`);
    expect(refused.status).toBe(401);
    await refused.text();
  });

  it('refuses a Host other than its own loopback address (DNS rebinding)', async () => {
    const { port } = new URL(con.url);
    const auth = { authorization: `Bearer ${con.token}` };
    for (const host of [
      'evil.example',
      `evil.example:${port}`,
      `127.0.0.1:${Number(port) + 1}`,
      `[::1]:${port}`,
    ]) {
      const answer = await raw('/api/status', { ...auth, host });
      expect(answer.status, host).toBe(403);
      expect((JSON.parse(answer.body) as ApiError).error.message).toMatch(/DNS rebinding/);
      expect((await raw('/', { host })).status, `${host} on /`).toBe(403);
    }
    expect((await raw('/api/status', { ...auth, host: `localhost:${port}` })).status).toBe(200);
    expect((await raw('/api/status', { ...auth, host: `127.0.0.1:${port}` })).status).toBe(200);
  });

  it('refuses requests from other web pages (Origin)', async () => {
    const { port } = new URL(con.url);
    for (const origin of [
      'http://evil.example',
      'null',
      `http://127.0.0.1:${Number(port) + 1}`,
      `https://127.0.0.1:${port}`,
    ]) {
      const answer = await api<ApiError>('/api/status', { headers: { origin } });
      expect(answer.status, origin).toBe(403);
      expect(answer.json.error.fix).toContain(con.url);
    }
    expect((await api('/api/status', { headers: { origin: con.url } })).status).toBe(200);
    expect((await api('/api/status', { headers: { origin: `http://localhost:${port}` } })).status).toBe(200);
  });

  it('sends a strict CSP and the other security headers on the UI, the API and refusals', async () => {
    const answers = [
      await fetch(`${con.url}/`),
      await fetch(`${con.url}/assets/app-1234.js`),
      await fetch(`${con.url}/api/status`, { headers: { authorization: `Bearer ${con.token}` } }),
      await fetch(`${con.url}/api/status`),
    ];
    for (const answer of answers) {
      await answer.text();
      expect(answer.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
      expect(answer.headers.get('x-frame-options')).toBe('DENY');
    }
    expect(CONTENT_SECURITY_POLICY).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
        "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    );
  });

  it('serves nothing of the console on the agent port', async () => {
    for (const path of ['/', '/api/status', '/api/events', '/index.html']) {
      const answer = await fetch(`${agent.url}${path}`, {
        headers: { authorization: `Bearer ${con.token}` },
      });
      expect(answer.status, path).toBe(404);
      await answer.text();
    }
  });

  it('writes console.json (0600) with its URL and token; on close it keeps the token, not the URL', async () => {
    const other = await startAgent();
    cleanups.push(() => other.close());
    const second = await openConsole(other);
    const path = join(other.dataDir, 'console.json');
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ url: second.url, token: second.token });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(second.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(second.token).not.toBe(con.token);
    await second.close();
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ url: '', token: second.token });
  });

  it('listens on 127.0.0.1 only', async () => {
    await expect(openConsole(agent, { host: '0.0.0.0' })).rejects.toThrow(/127\.0\.0\.1 only/);
    expect(new URL(con.url).hostname).toBe('127.0.0.1');
  });
});

describe('the UI files', () => {
  it('serves index.html and assets with their content types, without the token', async () => {
    const index = await fetch(`${con.url}/`);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await index.text()).toContain('<div id="root">');
    const script = await fetch(`${con.url}/assets/app-1234.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toBe('console.log("ui");');
    const style = await fetch(`${con.url}/assets/app-1234.css`);
    expect(style.headers.get('content-type')).toBe('text/css; charset=utf-8');
    await style.text();
    // The UI's own routes survive a reload; a missing asset does not pretend to be the page.
    expect(await (await fetch(`${con.url}/traffic`)).text()).toContain('<div id="root">');
    expect((await fetch(`${con.url}/assets/missing.js`)).status).toBe(404);
  });

  it('never serves a file outside its folder (directory traversal)', async () => {
    for (const path of [
      '/../secret.txt',
      '/%2e%2e/secret.txt',
      '/assets/..%2f..%2fsecret.txt',
      '/..%5csecret.txt',
      '/link.txt',
      '/%00index.html',
    ]) {
      const answer = await raw(path, { host: new URL(con.url).host });
      expect(answer.status, path).toBeGreaterThanOrEqual(400);
      expect(answer.body, path).not.toContain('TOP-SECRET');
    }
  });

  it('answers a page that says to build the UI when it is missing', async () => {
    const bare = await openConsole(peer, { staticDir: join(uiDir, 'not-built') });
    cleanups.push(() => bare.close());
    const page = await fetch(`${bare.url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('npm run build');
  });
});

describe('API basics', () => {
  it('answers an unknown /api path with 404, a wrong method with 405', async () => {
    const missing = await api<ApiError>('/api/nope');
    expect(missing.status).toBe(404);
    expect(missing.json.error.message).toMatch(/No console API/);
    const wrong = await api<ApiError>('/api/status', { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
    expect((await api('/api/keys/rotate')).status).toBe(405);
  });

  it('refuses bodies over 64 KiB with 413 and non-JSON with 400', async () => {
    const big = await api<ApiError>('/api/settings', {
      method: 'PUT',
      body: { agentDescription: 'x'.repeat(70_000) },
    });
    expect(big.status).toBe(413);
    expect(big.json.error.message).toMatch(/64 KiB/);
    const notJson = await api<ApiError>('/api/settings', { method: 'PUT', body: '{"rpm": ' });
    expect(notJson.status).toBe(400);
    const wrongType = await api('/api/settings', {
      method: 'PUT',
      body: 'rpm=5',
      headers: { 'content-type': 'text/plain' },
    });
    expect(wrongType.status).toBe(400);
  });

  it('reports the status: agent, gateway, tunnel, registry, keys and traffic', async () => {
    const { json: status } = await api<StatusResponse>('/api/status');
    expect(status.agent).toMatchObject({
      id: agent.id,
      localUrl: agent.url,
      protocolVersion: '1.2',
      health: 'ok',
    });
    expect(status.agent.card.id).toBe(agent.id);
    expect(status.gateway).toMatchObject({
      status: 'configured',
      url: gateway.url,
      model: 'openclaw/public',
      agent: { id: 'public', model: 'openclaw/public' },
    });
    expect(status.access).toEqual({ policy: 'open', pending: 0, knocks: { waiting: 0 } });
    expect(status.tunnel).toEqual({ status: 'off', provider: 'none' });
    expect(status.keys.length).toBeGreaterThan(0);
    expect(status.traffic.perMinute).toHaveLength(15);
  });

  it('shows the gateway problem with its fix after a failed call', async () => {
    gateway.set({ behaviour: 'disabled-404' });
    try {
      expect((await signedCall('will fail')).status).toBeGreaterThanOrEqual(500);
      const { json: status } = await api<StatusResponse>('/api/status');
      expect(status.gateway.problem?.fix).toMatch(/chatCompletions/);
      expect(status.gateway.lastCallOk).toBe(false);
      expect(status.agent.health).toBe('degraded');
    } finally {
      gateway.set({ behaviour: 'ok' });
    }
    expect((await signedCall('works again')).status).toBe(200);
    expect((await api<StatusResponse>('/api/status')).json.gateway.problem).toBeUndefined();
  });
});

describe('traffic and events', () => {
  it('streams an envelope entry within a second of a signed call', async () => {
    const stream = await events();
    try {
      const hello = await stream.next('hello');
      const started = performance.now();
      const reply = await signedCall('timed');
      expect(reply.status).toBe(200);
      const block = await stream.next('envelope');
      const elapsed = block.at - started;
      expect(elapsed).toBeLessThan(1000);
      const entry = block.data as TrafficEntry;
      expect(entry).toMatchObject({ sender: peer.id, skill: 'chat', verdict: 'accepted', status: 200 });
      expect(entry.id).toBeGreaterThan((hello.data as { lastId: number }).lastId);
    } finally {
      stream.close();
    }
  });

  it('lists traffic newest first, filters it and exports it as NDJSON', async () => {
    const tampered = sign(envelope(peer.id, agent.id, 'sync', { message: 'a' }), peer.app.keys.signer);
    const refused = await post(agent.url, '/agent/message', {
      ...tampered,
      body: tampered.body.replace('"a"', '"b"'),
    });
    expect(refused.status).toBe(401);
    await signedCall('last');

    const all = await api<TrafficResponse>('/api/traffic');
    const ids = all.json.entries.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(all.json.total).toBe(ids.length);
    const bad = await api<TrafficResponse>('/api/traffic?verdict=refused&status=4xx');
    expect(bad.json.entries[0]).toMatchObject({ verdict: 'signature', status: 401 });
    expect(bad.json.entries.every((e) => e.verdict !== 'accepted')).toBe(true);
    expect((await api<TrafficResponse>('/api/traffic?limit=1')).json.entries).toHaveLength(1);
    const invalid = await api<ApiError>('/api/traffic?status=teapot');
    expect(invalid.status).toBe(400);
    expect(invalid.json.error.fields?.[0]?.field).toBe('status');

    const exported = await api('/api/traffic/export');
    expect(exported.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(exported.headers.get('content-disposition')).toMatch(
      /^attachment; filename="agent-bridge-traffic-.+\.jsonl"$/,
    );
    const lines = exported.text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as TrafficEntry);
    expect(lines.map((e) => e.id)).toEqual([...ids].reverse());
  });

  it('keeps a stream alive with comments, bounds the number of streams and forgets closed ones', async () => {
    const other = await startAgent();
    cleanups.push(() => other.close());
    const small = await openConsole(other, { events: { keepAliveMs: 50, maxStreams: 2 } });
    cleanups.push(() => small.close());
    const first = await events(small);
    const second = await events(small);
    expect((await first.next()).event).toBe('hello');
    expect((await first.next(undefined, 1000)).comment).toBe('keep-alive');
    const third = await api<ApiError>('/api/events', {}, small);
    expect(third.status).toBe(503);
    expect(third.json.error.fix).toMatch(/Close console tabs/);
    first.close();
    // Once the first client has gone, there is room again.
    const reopen = new AbortController();
    cleanups.push(() => reopen.abort());
    await until(
      async () => {
        const answer = await fetch(`${small.url}/api/events?token=${small.token}`, { signal: reopen.signal });
        if (answer.status === 200) return true;
        await answer.text();
        return false;
      },
      2000,
      'a free stream slot',
    );
    second.close();
  });
});

describe('settings', () => {
  it('reads every setting but never a secret', async () => {
    const { json, text } = await api<SettingsResponse>('/api/settings');
    expect(json.settings).toMatchObject({ gatewayUrl: gateway.url, rpm: agent.app.currentSettings.rpm });
    expect(json.settings).not.toHaveProperty('gatewayToken');
    expect(json.settings).not.toHaveProperty('bearerTokens');
    expect(json.secrets).toEqual({ gatewayToken: { set: true }, bearerTokens: { count: 0 } });
    expect(text).not.toContain('gw-token-console');
  });

  it('refuses invalid values naming each field and its rule, and saves nothing', async () => {
    const before = agent.app.currentSettings.rpm;
    const answer = await api<ApiError>('/api/settings', {
      method: 'PUT',
      body: { rpm: 0, gatewayUrl: 'not a url', bogus: 1, agentName: 'Fine' },
    });
    expect(answer.status).toBe(400);
    const fields = Object.fromEntries(answer.json.error.fields!.map((f) => [f.field, f.message]));
    expect(Object.keys(fields).sort()).toEqual(['bogus', 'gatewayUrl', 'rpm']);
    expect(fields.rpm).toMatch(/integer between 1 and/);
    expect(fields.gatewayUrl).toMatch(/http/);
    expect(fields.bogus).toMatch(/not a known setting/);
    expect(agent.app.currentSettings.rpm).toBe(before);
    expect(agent.app.currentSettings.agentName).not.toBe('Fine');
  });

  it('applies changes live and saves them in the store (rpm changes the card)', async () => {
    const answer = await api<SettingsUpdateResponse>('/api/settings', {
      method: 'PUT',
      body: { rpm: 123, agentName: 'Console Agent' },
    });
    expect(answer.status).toBe(200);
    expect(answer.json.applied.sort()).toEqual(['agentName', 'rpm']);
    expect(answer.json.settings).toMatchObject({ rpm: 123, agentName: 'Console Agent' });
    expect((await card()).rateLimit.requestsPerMinute).toBe(123);
    expect((await card()).name).toBe('Console Agent');
    expect(openSettingsStore(agent.dataDir).get()).toMatchObject({ rpm: 123, agentName: 'Console Agent' });
  });

  it('treats the gateway token as write-only: "" keeps it, a value sets it, null clears it', async () => {
    const token = () => agent.app.currentSettings.gatewayToken;
    const stored = () => openSettingsStore(agent.dataDir).get().gatewayToken;
    const set = await api<SettingsUpdateResponse>('/api/settings', {
      method: 'PUT',
      body: { gatewayToken: 'new-secret-42' },
    });
    expect(set.text).not.toContain('new-secret-42');
    expect(set.json.secrets.gatewayToken.set).toBe(true);
    expect(set.json.applied).toEqual(['gatewayToken']);
    expect([token(), stored()]).toEqual(['new-secret-42', 'new-secret-42']);

    const kept = await api<SettingsUpdateResponse>('/api/settings', {
      method: 'PUT',
      body: { gatewayToken: '', rpm: 124 },
    });
    expect(kept.json.applied).toEqual(['rpm']);
    expect(token()).toBe('new-secret-42');

    // Cleared: the token (like the address) comes back from the environment or the OpenClaw config, here none.
    const cleared = await api<SettingsUpdateResponse>('/api/settings', {
      method: 'PUT',
      body: { gatewayToken: null, gatewayUrl: null },
    });
    expect(cleared.json.secrets.gatewayToken.set).toBe(false);
    expect([token(), stored()]).toEqual([undefined, undefined]);
    expect((await api<StatusResponse>('/api/status')).json.gateway.status).toBe('missing GATEWAY_TOKEN');

    await api('/api/settings', {
      method: 'PUT',
      body: { gatewayToken: 'gw-token-console', gatewayUrl: gateway.url },
    });
    expect((await api<StatusResponse>('/api/status')).json.gateway.status).toBe('configured');
  });

  it('says which changes need a restart, until they are undone', async () => {
    const port = agent.app.currentSettings.port;
    const moved = await api<SettingsUpdateResponse>('/api/settings', {
      method: 'PUT',
      body: { port: 45678 },
    });
    expect(moved.json.restartNeeded).toEqual(['port']);
    expect(moved.json.applied).toEqual([]);
    expect((await api<SettingsResponse>('/api/settings')).json.restartNeeded).toEqual(['port']);
    expect((await api<StatusResponse>('/api/status')).json.restartNeeded).toEqual(['port']);
    // The agent keeps serving where it is.
    expect((await fetch(`${agent.url}/agent/health`)).status).toBe(200);
    const back = await api<SettingsUpdateResponse>('/api/settings', { method: 'PUT', body: { port } });
    expect(back.json.restartNeeded).toEqual([]);
  });

  it('announces a settings change on the event stream', async () => {
    const stream = await events();
    try {
      await stream.next('hello');
      await api('/api/settings', { method: 'PUT', body: { perSender: 77 } });
      expect(await stream.nextState('settings')).toEqual({ kind: 'settings' });
    } finally {
      stream.close();
    }
  });
});

describe('keys', () => {
  it('rotates: the card lists the new key, the old stays active for a cardTTL; a state event follows', async () => {
    const stream = await events();
    try {
      await stream.next('hello');
      const before = (await card()).publicKeys.map((k) => k.kid);
      const rotated = await api<{ key: { kid: string; signing: boolean }; keys: { kid: string }[] }>(
        '/api/keys/rotate',
        { method: 'POST' },
      );
      expect(rotated.status).toBe(200);
      expect(rotated.json.key.signing).toBe(true);
      expect(before).not.toContain(rotated.json.key.kid);
      const after = await card();
      expect(after.publicKeys.find((k) => k.kid === rotated.json.key.kid)?.active).toBe(true);
      for (const kid of before) expect(after.publicKeys.find((k) => k.kid === kid)?.active).toBe(true);
      expect(await stream.nextState('keys')).toEqual({ kind: 'keys' });
    } finally {
      stream.close();
    }
  });

  it('revokes a key: the card marks it inactive at once', async () => {
    const { json: status } = await api<StatusResponse>('/api/status');
    const old = status.keys.find((k) => !k.signing && k.active)!;
    const revoked = await api<{ key: { kid: string; active: boolean } }>(`/api/keys/${old.kid}/revoke`, {
      method: 'POST',
    });
    expect(revoked.json.key).toMatchObject({ kid: old.kid, active: false });
    expect((await card()).publicKeys.find((k) => k.kid === old.kid)?.active).toBe(false);
  });

  it('answers 404 with a fix for an unknown kid', async () => {
    const answer = await api<ApiError>('/api/keys/k-20000101-000000/revoke', { method: 'POST' });
    expect(answer.status).toBe(404);
    expect(answer.json.error.fix).toMatch(/Keys page/);
  });
});

describe('registry and self-test', () => {
  it('registers the public URL and returns the record', async () => {
    await api('/api/settings', { method: 'PUT', body: { publicUrl: agent.url } });
    // Which registry it will use, said before registering (issue 26, item 13).
    expect((await api<StatusResponse>('/api/status')).json.registry).toMatchObject({
      status: 'unregistered',
      registryUrl: registry.url,
    });
    const answer = await api<{ record: unknown }>('/api/registry/register', { method: 'POST' });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json.record).toEqual({
      registry: registry.url,
      url: agent.url,
      id: agent.id,
      name: agent.app.currentSettings.agentName,
      registeredAt: expect.any(String),
    });
    expect(registry.records.get(agent.url)?.id).toBe(agent.id);
    expect((await api<StatusResponse>('/api/status')).json.registry.status).toBe('registered');
  });

  it('answers 502 with the message and fix when the registry fails', async () => {
    registry.set('error-500');
    try {
      const answer = await api<ApiError>('/api/registry/register', { method: 'POST' });
      expect(answer.status).toBe(502);
      expect(answer.json.error.message).toMatch(/HTTP 500/);
      expect(answer.json.error.fix).toMatch(/try again/i);
      const { json: status } = await api<StatusResponse>('/api/status');
      expect(status.registry).toMatchObject({
        status: 'registered',
        lastError: { fix: answer.json.error.fix },
      });
    } finally {
      registry.set('ok');
    }
  });

  it('runs the self-test and reports each stage', async () => {
    const answer = await api<SelfTestResponse>('/api/selftest', { method: 'POST' });
    expect(answer.status).toBe(200);
    expect(answer.json.stages.map((s) => [s.name, s.ok])).toEqual([
      ['resolve', true],
      ['card', true],
      ['signature', true],
      ['gateway', true],
      ['reply-signature', true],
    ]);
    expect(answer.json).toMatchObject({ ok: true, url: agent.app.agentUrl });
    // The last stage names the Ed25519 library in use (sodium-native is installed here).
    expect(answer.json.stages.at(-1)?.detail).toMatch(/; Ed25519 by libsodium$/);
  });
});

describe('tunnel', () => {
  let tunnel: TunnelServer;
  let tunnelled: TestAgent;
  let tcon: ConsoleHandle;

  beforeAll(async () => {
    tunnel = await startTunnelServer();
    tunnelled = await startAgent({
      settings: { tunnel: 'localtunnel', tunnelHost: tunnel.url },
      tunnel: { backoff: { initialMs: 100, maxMs: 500 }, checkIntervalMs: 60_000 },
    });
    tcon = await openConsole(tunnelled);
    await until(() => tunnelled.app.tunnelState.status === 'online', 10_000, 'the tunnel');
  });

  afterAll(async () => {
    await tcon.close();
    await tunnelled.close();
    await tunnel.close();
  });

  it('stops and starts the tunnel, reporting its state and a state event', async () => {
    const stream = await events(tcon);
    try {
      await stream.next('hello');
      const stopped = await api<{ tunnel: StatusResponse['tunnel'] }>(
        '/api/tunnel/stop',
        { method: 'POST' },
        tcon,
      );
      expect(stopped.json.tunnel).toEqual({ status: 'off', provider: 'localtunnel' });
      expect(await stream.nextState('tunnel')).toEqual({ kind: 'tunnel' });
      expect(tunnelled.app.agentUrl).toBe(tunnelled.url);

      const started = await api<{ tunnel: StatusResponse['tunnel'] }>(
        '/api/tunnel/start',
        { method: 'POST' },
        tcon,
      );
      expect(started.json.tunnel.status).toMatch(/connecting|online/);
      await until(
        async () => (await api<StatusResponse>('/api/status', {}, tcon)).json.tunnel.status === 'online',
        10_000,
        'the tunnel online again',
      );
      const { json: status } = await api<StatusResponse>('/api/status', {}, tcon);
      expect(status.agent.url).toMatch(/^http:\/\/[a-z0-9]+\.localhost:\d+$/);
    } finally {
      stream.close();
    }
  });

  it('refuses to start a tunnel when none is configured, saying how', async () => {
    const answer = await api<ApiError>('/api/tunnel/start', { method: 'POST' });
    expect(answer.status).toBe(409);
    expect(answer.json.error.fix).toMatch(/Settings/);
  });
});
