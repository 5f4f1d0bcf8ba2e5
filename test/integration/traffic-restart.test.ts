// Issue 26, item 8: traffic.jsonl held 8 lines and, after a restart, the console showed "1 envelope". A real
// agent and its console take real calls (SAMVAD and A2A, accepted and refused), stop, and start again on the
// same data dir: GET /api/traffic serves the history the file kept, and new calls are numbered after it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import type { TrafficEntry, TrafficResponse } from '../../src/protocol/console-api.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { agentPool, type TestAgent } from '../helpers/agents.js';
import { PATHS, envelope, post, sign } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';

let gateway: GatewayDouble;
const pool = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: gateway.token }));
let caller: TestAgent;

beforeAll(async () => {
  gateway = await startGatewayDouble();
  caller = await pool.start();
});

afterAll(async () => {
  await pool.closeAll();
  await gateway.close();
});

const consoleOf = (agent: TestAgent) =>
  startConsole({
    app: agent.app,
    store: openSettingsStore(agent.dataDir),
    dataDir: agent.dataDir,
    port: 0,
  });

async function traffic(con: ConsoleHandle): Promise<TrafficResponse> {
  const response = await fetch(`${con.url}/api/traffic?limit=10000`, {
    headers: { authorization: `Bearer ${con.token}` },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as TrafficResponse;
}

function samvad(agent: TestAgent, message: string) {
  const env = envelope(caller.id, agent.id, 'sync', { message });
  return post(agent.url, PATHS.sync, sign(env, caller.app.keys.signer));
}

function a2a(agent: TestAgent, key: string | undefined, text: string) {
  return fetch(`${agent.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'A2A-Version': '1.0',
      ...(key ? { Authorization: `Bearer ${key}` } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }] } },
    }),
  });
}

/** What a restart may not change of an entry (its duration and bytes are as they were measured). */
const shown = (entries: TrafficEntry[]) =>
  entries.map(({ id, time, sender, protocol, verdict, status }) => ({
    id,
    time,
    sender,
    protocol,
    verdict,
    status,
  }));

describe('traffic across a restart', () => {
  it('serves what the file kept after the agent and its console start again on the data dir', async () => {
    const first = await pool.start({ settings: { access: 'pairing' } });
    first.app.access.approve(caller.id);
    const { secret } = await first.app.a2aKeys.issue({ name: 'Research bot' });
    let con = await consoleOf(first);

    expect((await samvad(first, 'hello')).status).toBe(200);
    expect((await a2a(first, secret, 'hello over A2A')).status).toBe(200);
    expect((await a2a(first, `abk_0123456789ab_${'A'.repeat(43)}`, 'a key never issued')).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await samvad(first, `again ${i}`)).status).toBe(200);
    await until(async () => (await traffic(con)).total === 8, 5000, 'eight entries');
    const before = (await traffic(con)).entries;
    await con.close();
    await first.stop();

    const second = await pool.start({ dataDir: first.dataDir, settings: { access: 'pairing' } });
    con = await consoleOf(second);
    try {
      const after = await traffic(con);
      expect(after.total).toBe(8);
      expect(shown(after.entries)).toEqual(shown(before));
      expect(after.entries.filter((e) => e.protocol === 'a2a')).toHaveLength(2);

      // A new call is numbered after the history, not from 1 again (the console's rows are keyed by id).
      expect((await samvad(second, 'after the restart')).status).toBe(200);
      await until(async () => (await traffic(con)).total === 9, 5000, 'the ninth entry');
      const newest = (await traffic(con)).entries[0]!;
      expect(newest.id).toBe(Math.max(...before.map((e) => e.id)) + 1);
    } finally {
      await con.close();
    }
  });
});
