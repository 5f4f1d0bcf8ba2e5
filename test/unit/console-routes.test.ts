import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa, { type Context } from 'koa';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AccessError } from '../../src/access/access-control.js';
import type { AgentBridgeApp } from '../../src/app.js';
import { consoleApi } from '../../src/console/api.js';
import type { ApiDeps } from '../../src/console/api-deps.js';
import { errorsAsJson } from '../../src/console/error-reply.js';
import { ConsoleError } from '../../src/console/errors.js';
import { KeyStoreError } from '../../src/keys/keystore.js';
import type { ApiError } from '../../src/protocol/console-api.js';
import { RegistryError } from '../../src/registry/registry-client.js';

// The route table and the one error-mapping middleware, over a stand-in app whose next answer (or failure)
// each test sets. The real app behind these routes is under test in test/integration/console-api.test.ts.
let server: Server;
let base: string;
let fail: (() => never) | undefined;
const reported: unknown[] = [];
const revoked: string[] = [];

/** Runs the test's failure, if it set one, in place of the app's answer. */
function answer<T>(value: T): T {
  if (fail) fail();
  return value;
}

const key = { kid: 'k-1', active: true, signing: true };
const app = {
  keys: {
    rotate: () => answer(key),
    revoke: (kid: string) => {
      revoked.push(kid);
      return answer({ ...key, kid, active: false });
    },
    list: () => [key],
  },
  registrar: { current: { status: 'registered' } },
  register: async () =>
    answer({ id: 'agent://x', name: 'x', registeredAt: '2026-01-01T00:00:00Z', url: 'u' }),
  currentSettings: { tunnel: 'localtunnel', acceptedExposedAgent: { agent: 'main', tools: [], at: '' } },
  publicAddress: { startTunnel: () => answer(undefined), stopTunnel: () => undefined },
  access: {
    view: () => answer({ policy: 'pairing', pending: [], approved: [], denied: [] }),
    approve: () => answer(2),
    deny: () => answer(1),
    revoke: () => answer(undefined),
  },
  gatewayWatch: { probeNow: async () => answer({ condition: 'up' }) },
  gatewayTarget: {
    view: { id: 'main', check: 'present' },
    acceptance: (agent: string, tools: string[]) => answer({ agent, tools, at: '2026-01-01T00:00:00Z' }),
  },
  selfTest: async () => answer({ ok: true, stages: [] }),
  a2aKeys: { list: async () => answer([]), activeCount: async () => answer(0) },
} as unknown as AgentBridgeApp;

const deps: ApiDeps = {
  app,
  log: { lastId: 1, size: 1, query: () => answer([]), all: () => [{ id: 1 }] },
  events: {
    attach(ctx: Context) {
      ctx.respond = false;
      ctx.res.writeHead(200, { 'content-type': 'text/event-stream' });
      ctx.res.end('event: hello\ndata: {"lastId":0}\n\n');
    },
    state: () => undefined,
  },
  settings: { view: () => answer({ settings: {} }), update: (body: unknown) => answer({ body }) },
  mcp: { view: () => answer({ token: 't' }), regenerate: () => answer({ token: 'u' }) },
  status: () => answer({ agent: {}, tunnel: { status: 'off' } }),
  tunnel: () => ({ status: 'off' }),
  gatewayCheckWaitMs: 5000,
} as unknown as ApiDeps;

beforeAll(async () => {
  const koa = new Koa();
  koa.silent = true;
  const api = consoleApi(deps);
  koa.use(errorsAsJson((error) => reported.push(error)));
  koa.use((ctx) => api(ctx));
  server = createServer(koa.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  fail = undefined;
  reported.length = 0;
  revoked.length = 0;
});

async function call(method: string, path: string, body?: unknown) {
  const answer = await fetch(`${base}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await answer.text();
  return { status: answer.status, headers: answer.headers, text };
}

const errorOf = (text: string) => (JSON.parse(text) as ApiError).error;

const ROUTES: [method: string, path: string, body?: unknown][] = [
  ['GET', '/api/status'],
  ['GET', '/api/events'],
  ['GET', '/api/traffic'],
  ['GET', '/api/traffic/export'],
  ['POST', '/api/keys/rotate'],
  ['POST', '/api/keys/k-1/revoke'],
  ['POST', '/api/registry/register'],
  ['POST', '/api/tunnel/start'],
  ['POST', '/api/tunnel/stop'],
  ['GET', '/api/access'],
  ['POST', '/api/access/approve', { sender: 'agent://a' }],
  ['POST', '/api/access/deny', { sender: 'agent://a' }],
  ['POST', '/api/access/revoke', { sender: 'agent://a' }],
  ['POST', '/api/gateway/check'],
  ['POST', '/api/gateway/accept', { agent: 'main', tools: ['exec'] }],
  ['POST', '/api/gateway/withdraw'],
  ['GET', '/api/mcp'],
  ['POST', '/api/mcp/token'],
  ['GET', '/api/settings'],
  ['PUT', '/api/settings', { rpm: 120 }],
  ['POST', '/api/selftest'],
];

describe('the console route table', () => {
  it.each(ROUTES)('answers %s %s', async (method, path, body) => {
    const reply = await call(method, path, body);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.text).not.toBe('');
    if (path !== '/api/events') expect(reply.headers.get('cache-control')).toBe('no-store');
  });

  it('decodes a path parameter, and refuses one that is not valid URL encoding', async () => {
    expect((await call('POST', '/api/keys/k%2D7/revoke')).status).toBe(200);
    expect(revoked).toEqual(['k-7']);
    const bad = await call('POST', '/api/keys/%E0%A4/revoke');
    expect(bad.status).toBe(400);
    expect(errorOf(bad.text).message).toBe('The path is not valid URL encoding.');
    expect(revoked).toEqual(['k-7']);
  });

  it('answers a wrong method with 405 and the methods the path has, in Allow', async () => {
    for (const [method, path, allow] of [
      ['DELETE', '/api/status', 'GET'],
      ['GET', '/api/keys/rotate', 'POST'],
      ['DELETE', '/api/settings', 'GET, PUT'],
      ['PATCH', '/api/keys/k-1/revoke', 'POST'],
      ['OPTIONS', '/api/access', 'GET'],
      // The router would answer HEAD with the GET route; the console does not.
      ['HEAD', '/api/events', 'GET'],
    ] as const) {
      const reply = await call(method, path);
      expect(reply.status, `${method} ${path}`).toBe(405);
      expect(reply.headers.get('allow'), `${method} ${path}`).toBe(allow);
      if (method !== 'HEAD') expect(errorOf(reply.text).message).toBe(`Use ${allow} for ${path}.`);
    }
  });

  it('answers an unknown path with 404 and where the paths are listed', async () => {
    for (const path of [
      '/api',
      '/api/nope',
      '/api/status/',
      '/api/Status',
      '/api/access/maybe',
      '/api/keys//revoke',
    ]) {
      const reply = await call('GET', path);
      expect(reply.status, path).toBe(404);
      expect(errorOf(reply.text)).toEqual({
        message: `No console API at ${path}.`,
        fix: 'See "Operator console API" in DESIGN.md for the paths.',
      });
    }
  });

  it('refuses a declared body over 64 KiB before the handler runs', async () => {
    const reply = await call('PUT', '/api/settings', { agentDescription: 'x'.repeat(70_000) });
    expect(reply.status).toBe(413);
    expect(errorOf(reply.text).message).toMatch(/64 KiB/);
  });
});

describe('errors thrown by a handler', () => {
  it("answer a ConsoleError's status, headers, message and fix, and report nothing", async () => {
    fail = () => {
      throw new ConsoleError(409, 'Already running.', 'Wait.', undefined, { 'Retry-After': '5' });
    };
    const reply = await call('POST', '/api/selftest');
    expect(reply.status).toBe(409);
    expect(reply.headers.get('retry-after')).toBe('5');
    expect(reply.headers.get('cache-control')).toBe('no-store');
    expect(JSON.parse(reply.text)).toEqual({ error: { message: 'Already running.', fix: 'Wait.' } });
    expect(reported).toEqual([]);
  });

  it('answer the domain errors written for the operator with their own status, message and fix', async () => {
    const cases: [Error, string, number, ApiError['error']][] = [
      [
        new KeyStoreError('unknown-kid', 'No key k-9.'),
        '/api/keys/k-9/revoke',
        404,
        { message: 'No key k-9.', fix: 'Pick a kid from the Keys page (GET /api/status lists them).' },
      ],
      [
        new KeyStoreError('unwritable', 'Cannot write keys.json.'),
        '/api/keys/rotate',
        500,
        { message: 'Cannot write keys.json.' },
      ],
      [
        new RegistryError('The registry answered HTTP 500.', 'Try again later.'),
        '/api/registry/register',
        502,
        { message: 'The registry answered HTTP 500.', fix: 'Try again later.' },
      ],
      [
        new AccessError(409, 'Allowed by a setting.', 'Remove it in Settings.'),
        '/api/access/revoke',
        409,
        { message: 'Allowed by a setting.', fix: 'Remove it in Settings.' },
      ],
    ];
    for (const [error, path, status, body] of cases) {
      fail = () => {
        throw error;
      };
      const reply = await call('POST', path, { sender: 'agent://a' });
      expect(reply.status, path).toBe(status);
      expect(errorOf(reply.text), path).toEqual(body);
    }
    expect(reported).toEqual([]);
  });

  it('answer anything else with a plain 500 that leaks nothing, and report it once', async () => {
    const internal = new Error('ENOENT: /home/operator/.secret/db at line 42');
    fail = () => {
      throw internal;
    };
    const reply = await call('GET', '/api/status');
    expect(reply.status).toBe(500);
    expect(errorOf(reply.text)).toEqual({
      message: 'The console failed to handle GET /api/status.',
      fix: 'The details are in the terminal (stderr) of Agent Bridge; try again, and report it if it repeats.',
    });
    expect(reply.text).not.toMatch(/ENOENT|secret|line 42|\bat .*\.ts/);
    expect(reported).toEqual([internal]);
  });
});
