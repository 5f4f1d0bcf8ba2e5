// Issue 17, item 5: the console's A2A pieces against a real agent and console on loopback ports.
// GET /api/traffic?protocol= (and its 400), and the status's `a2a` part: the agent card's address once
// there is a public one, and the live keys (issued through the console's own API, one revoked, one expired).
// The traffic entries are envelope events emitted on the app, as its pipelines emit them: the A2A front
// door that fills them from real calls is built beside this (its own tests cover that end).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EnvelopeEvent } from '../../src/agent/events.js';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import type { ApiError, StatusResponse, TrafficResponse } from '../../src/protocol/console-api.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { A2A_KEYS_FILE, A2AKeyFile } from '../../src/state/a2a-key-store.js';
import { startAgent, type TestAgent } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';

let agent: TestAgent;
let con: ConsoleHandle;

beforeAll(async () => {
  agent = await startAgent();
  con = await consoleFor(agent);
});

const consoleFor = (on: TestAgent) =>
  startConsole({ app: on.app, store: openSettingsStore(on.dataDir), dataDir: on.dataDir, port: 0 });

afterAll(async () => {
  await con.close();
  await agent.close();
});

async function api<T>(
  path: string,
  body?: unknown,
  method = 'POST',
  at: ConsoleHandle = con,
): Promise<{ status: number; json: T }> {
  const response = await fetch(`${at.url}${path}`, {
    method: body === undefined ? 'GET' : method,
    headers: {
      authorization: `Bearer ${at.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as T };
}

const event = (overrides: Partial<EnvelopeEvent>): EnvelopeEvent => ({
  time: new Date().toISOString(),
  endpoint: '/agent/message',
  signatureForm: 'headers',
  verdict: 'accepted',
  status: 200,
  durationMs: 5,
  bytesIn: 10,
  bytesOut: 20,
  ...overrides,
});

describe('GET /api/traffic?protocol=', () => {
  it('lists SAMVAD calls (entries without a protocol too) or A2A calls, and refuses any other value', async () => {
    agent.app.emit('envelope', event({ sender: 'agent://old.example' }));
    agent.app.emit('envelope', event({ sender: 'agent://new.example', protocol: 'samvad' }));
    agent.app.emit(
      'envelope',
      event({
        endpoint: '/a2a/jsonrpc',
        sender: 'a2a-key:k1',
        callerName: 'Research bot',
        signatureForm: 'none',
        protocol: 'a2a',
        a2a: { method: 'SendMessage', version: '1.0', transport: 'jsonrpc', taskState: 'completed' },
      }),
    );
    const senders = async (query: string) =>
      (await api<TrafficResponse>(`/api/traffic${query}`)).json.entries.map((e) => e.sender).sort();
    await until(async () => (await senders('')).length === 3);

    expect(await senders('?protocol=samvad')).toEqual(['agent://new.example', 'agent://old.example']);
    const a2a = (await api<TrafficResponse>('/api/traffic?protocol=a2a')).json.entries;
    expect(a2a).toMatchObject([
      { sender: 'a2a-key:k1', callerName: 'Research bot', a2a: { method: 'SendMessage', version: '1.0' } },
    ]);

    const bad = await api<ApiError>('/api/traffic?protocol=mcp');
    expect(bad.status).toBe(400);
    expect(bad.json.error.fields).toEqual([
      { field: 'protocol', message: 'protocol: must be samvad or a2a' },
    ]);
  });
});

describe('GET /api/status a2a', () => {
  it('has no card URL without a public address, then the public one; counts live keys only', async () => {
    const status = async () => (await api<StatusResponse>('/api/status')).json.a2a;
    expect(await status()).toEqual({ cardUrl: null, keys: 0 });

    await api('/api/a2a/keys', { name: 'Research bot' });
    const revoked = await api<{ key: { id: string } }>('/api/a2a/keys', { name: 'Old bot' });
    await api('/api/a2a/keys', { name: 'Brief bot', expiresAt: new Date(Date.now() + 1500).toISOString() });
    expect((await status()).keys).toBe(3);
    expect((await api(`/api/a2a/keys/${revoked.json.key.id}/revoke`, {})).status).toBe(200);
    expect((await status()).keys).toBe(2);
    // The third key expires: no longer live.
    await until(async () => (await status()).keys === 1, 5000);

    const saved = await api('/api/settings', { publicUrl: 'https://agent.example.org/' }, 'PUT');
    expect(saved.status).toBe(200);
    expect((await status()).cardUrl).toBe('https://agent.example.org/.well-known/agent-card.json');
  });
});

describe('GET /api/status a2a keys', () => {
  it('counts the keys from what it read until they change, not by listing them at every poll', async () => {
    const status = async () => (await api<StatusResponse>('/api/status')).json.a2a;
    await api('/api/a2a/keys', { name: 'Counted bot' });
    const before = (await status()).keys!;
    const reads = vi.spyOn(A2AKeyFile.prototype, 'list');
    try {
      for (let poll = 0; poll < 3; poll++) expect((await status()).keys).toBe(before);
      expect(reads).not.toHaveBeenCalled();
      // A change is counted at the next poll.
      await api('/api/a2a/keys', { name: 'Another bot' });
      expect((await status()).keys).toBe(before + 1);
    } finally {
      reads.mockRestore();
    }
  });

  it('says the count is unknown, and why, when the key store cannot be read (not 0)', async () => {
    const broken = await startAgent();
    const brokenConsole = await consoleFor(broken);
    try {
      // A torn keys file: the data-dir store refuses to read it rather than forget a revocation.
      writeFileSync(join(broken.dataDir, A2A_KEYS_FILE), '{"keys": [');
      const { json } = await api<StatusResponse>('/api/status', undefined, 'GET', brokenConsole);
      expect(json.a2a.keys).toBeNull();
      expect(json.a2a.keysProblem).toMatch(/A2A keys could not be read/);
    } finally {
      await brokenConsole.close();
      await broken.close();
    }
  });
});
