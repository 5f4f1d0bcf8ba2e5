import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import type {
  A2AKeyIssueResponse,
  A2AKeyRevokeResponse,
  A2AKeysResponse,
  ApiError,
} from '../../src/protocol/console-api.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server.js';
import { startAgent, type TestAgent } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';
import { readSse } from '../helpers/sse.js';

// The console's A2A keys API against a real agent and console on loopback ports (and, for the outage, a
// real redis-server): issue, list, revoke, what each refuses, and where the key never appears.
const closers: (() => Promise<unknown>)[] = [];
let agent: TestAgent;
let con: ConsoleHandle;

async function openConsole(target: TestAgent): Promise<ConsoleHandle> {
  const handle = await startConsole({
    app: target.app,
    store: openSettingsStore(target.dataDir),
    dataDir: target.dataDir,
    port: 0,
  });
  closers.push(() => handle.close());
  return handle;
}

beforeAll(async () => {
  agent = await startAgent({ settings: { perSender: 12, tokensPerDay: 50_000 } });
  closers.push(() => agent.close());
  con = await openConsole(agent);
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

async function api<T>(
  path: string,
  init: { method?: string; body?: unknown; token?: string | null } = {},
  target = con,
): Promise<{ status: number; headers: Headers; text: string; json: T }> {
  const token = init.token === undefined ? target.token : init.token;
  const response = await fetch(`${target.url}${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: JSON.parse(text) as T };
}

describe('the A2A keys API', () => {
  it('needs the console token', async () => {
    for (const [path, body] of [
      ['/api/a2a/keys', undefined],
      ['/api/a2a/keys', { name: 'x' }],
      ['/api/a2a/keys/0123456789ab/revoke', {}],
    ] as const) {
      expect((await api(path, { body, token: null })).status).toBe(401);
      expect((await api(path, { body, token: 'wrong' })).status).toBe(401);
    }
    expect((await api<A2AKeysResponse>('/api/a2a/keys')).json.keys).toEqual([]);
  });

  it('issues a key (201): the key in this answer only, never cached; the list and events follow', async () => {
    const stop = new AbortController();
    const events = await fetch(`${con.url}/api/events?token=${con.token}`, { signal: stop.signal });
    const blocks = readSse(events);
    const expiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const issued = await api<A2AKeyIssueResponse>('/api/a2a/keys', {
      body: { name: 'Research agent', expiresAt, limits: { requestsPerMinute: 3 } },
    });
    expect(issued.status).toBe(201);
    expect(issued.headers.get('cache-control')).toBe('no-store');
    const { key, secret, keys, defaults } = issued.json;
    expect(secret).toMatch(/^abk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(key).toMatchObject({
      name: 'Research agent',
      caller: `a2a-key:${key.id}`,
      expiresAt,
      limits: { requestsPerMinute: 3 },
      calls: 0,
      status: 'active',
    });
    expect(keys.map((each) => each.id)).toContain(key.id);
    expect(defaults).toEqual({ requestsPerMinute: 12, tokensPerDay: 50_000 });
    // The console is told the access lists changed: an open Access page reloads its keys.
    let block;
    do block = (await blocks.next()).value;
    while (!(block?.event === 'state' && (block.data as { kind: string }).kind === 'access'));
    stop.abort();

    // The running agent takes it at once, and counts its use.
    expect((await agent.app.a2aKeys.verify(secret)).ok).toBe(true);
    const listed = await api<A2AKeysResponse>('/api/a2a/keys');
    expect(listed.json.keys.find((each) => each.id === key.id)).toMatchObject({
      calls: 1,
      lastUsedAt: expect.any(String),
    });

    // Nowhere else: no other answer, no file of the data dir holds the key (or its secret part).
    const part = secret.slice(17);
    for (const path of ['/api/a2a/keys', '/api/status', '/api/access', '/api/traffic', '/api/settings']) {
      expect((await api(path)).text).not.toContain(part);
    }
    expect(listed.text).not.toMatch(/hash/);
    const files = readdirSync(agent.dataDir).filter((name) => statSync(join(agent.dataDir, name)).isFile());
    expect(files).toContain('a2a-keys.json');
    for (const name of files) expect(readFileSync(join(agent.dataDir, name), 'utf8')).not.toContain(part);
  });

  it('refuses a bad request with every field named, and an unknown key with 404', async () => {
    const bad = await api<ApiError>('/api/a2a/keys', {
      body: { name: '', limits: { tokensPerDay: 0 }, expiresAt: 'soon' },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.fields?.map((field) => field.field)).toEqual([
      'name',
      'expiresAt',
      'limits.tokensPerDay',
    ]);
    expect(bad.json.error.fix).toBe('Correct the fields named and issue again.');
    const notJson = await fetch(`${con.url}/api/a2a/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${con.token}`, 'content-type': 'text/plain' },
      body: 'name=x',
    });
    expect(notJson.status).toBe(400);
    await notJson.text();
    const unknown = await api<ApiError>('/api/a2a/keys/ffffffffffff/revoke', { body: {} });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toEqual({
      message: 'No A2A key has the id ffffffffffff.',
      fix: 'Pick a key from the list (GET /api/a2a/keys, or `agent-bridge keys list`).',
    });
    expect((await api('/api/a2a/keys/not-an-id/revoke', { body: {} })).status).toBe(400);
    expect((await api('/api/a2a/keys/0123456789ab/revoke')).status).toBe(405);
  });

  it('revokes a key: the running agent refuses it from the next request on', async () => {
    const { key, secret } = (await api<A2AKeyIssueResponse>('/api/a2a/keys', { body: { name: 'Partner' } }))
      .json;
    expect((await agent.app.a2aKeys.verify(secret)).ok).toBe(true);
    const revoked = await api<A2AKeyRevokeResponse>(`/api/a2a/keys/${key.id}/revoke`, { body: {} });
    expect(revoked.status).toBe(200);
    expect(revoked.json.key).toMatchObject({ id: key.id, status: 'revoked', revokedAt: expect.any(String) });
    expect(revoked.json.keys.find((each) => each.id === key.id)?.status).toBe('revoked');
    expect(revoked.text).not.toContain(secret.slice(17));
    expect(await agent.app.a2aKeys.verify(secret)).toMatchObject({ ok: false, refusal: 'revoked' });
    // Again: it stays revoked at its first time.
    const again = await api<A2AKeyRevokeResponse>(`/api/a2a/keys/${key.id}/revoke`, { body: {} });
    expect(again.json.key.revokedAt).toBe(revoked.json.key.revokedAt);
  });
});

describe('the A2A keys API on Redis', () => {
  let redis: RedisServer;

  beforeAll(async () => {
    redis = await startRedisServer();
    closers.push(() => redis.close());
  });

  it('changes no key while Redis does not answer (503, as access decisions), and a replica sees each change', async () => {
    const settings = { redisUrl: redis.url };
    const [one, two] = [await startAgent({ settings }), await startAgent({ settings })];
    closers.push(
      () => one.close(),
      () => two.close(),
    );
    const [oneConsole, twoConsole] = [await openConsole(one), await openConsole(two)];
    const issued = await api<A2AKeyIssueResponse>('/api/a2a/keys', { body: { name: 'Shared' } }, oneConsole);
    expect(issued.status).toBe(201);
    expect((await two.app.a2aKeys.verify(issued.json.secret)).ok).toBe(true);
    await api(`/api/a2a/keys/${issued.json.key.id}/revoke`, { body: {} }, twoConsole);
    await until(async () => !(await one.app.a2aKeys.verify(issued.json.secret)).ok, 1000, 'the revocation');

    await redis.stop();
    await until(() => !one.app.stateHealth().up, 5000, 'Redis down');
    const refused = await api<ApiError>('/api/a2a/keys', { body: { name: 'During the outage' } }, oneConsole);
    expect(refused.status).toBe(503);
    expect(refused.json.error.message).toMatch(
      /^Not issued: Redis at redis:\/\/127\.0\.0\.1:\d+\/0 does not answer/,
    );
    expect(refused.json.error.fix).toBe('Try again once Redis answers.');
    expect((await api<ApiError>('/api/a2a/keys', {}, oneConsole)).status).toBe(503);
    await redis.restart();
    await until(() => one.app.stateHealth().up, 10_000, 'Redis back');
    const listed = await api<A2AKeysResponse>('/api/a2a/keys', {}, oneConsole);
    expect(listed.json.keys.map((key) => [key.name, key.status])).toEqual([['Shared', 'revoked']]);
  });

  it("brings a data dir's keys into an empty Redis when the agent first runs there", async () => {
    const alone = await startAgent();
    const { secret } = await alone.app.a2aKeys.issue({ name: 'From before' });
    await alone.stop();
    const { redis: fresh } = { redis: await startRedisServer() };
    closers.push(() => fresh.close());
    const moved = await startAgent({ dataDir: alone.dataDir, settings: { redisUrl: fresh.url } });
    closers.push(() => moved.close());
    expect((await moved.app.a2aKeys.verify(secret)).ok).toBe(true);
    expect(readdirSync(alone.dataDir)).toContain('a2a-keys.json.imported');
  });
});
