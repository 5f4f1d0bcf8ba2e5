// Issue 15, finding 2: an approval is bound to the keys that sign, not to the keys a card lists. A new holder
// of an approved id (a released tunnel address, an expired domain) that listed the old owner's key as
// inactive beside its own got 200. Against real agents on loopback and the gateway double, with the access
// lists in the data dir and on a real redis-server: the new holder asks again and the operator sees why
// (API, and `serve`'s line); a rotation announced by a call signed with the old key keeps the approval; one
// nobody announced asks again; pinned keys, allowed peers, our own id; approvals stored before this change.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovedRecord } from '../../src/access/access-store.js';
import { startConsole } from '../../src/console/console-server.js';
import type { AccessResponse } from '../../src/protocol/console-api.js';
import type { Signer } from '../../src/protocol/index.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server.js';
import { agentPool, tempDir, type TestAgent, type TestAgentOptions } from '../helpers/agents.js';
import { startCardHost, testKey, type CardHost } from '../helpers/card-host.js';
import { freePort, startChildAgent } from '../helpers/child-agent.js';
import { PATHS, envelope, post, sign, type Form, type Reply } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';
import { expectError } from '../helpers/verify.js';

const TOKEN = 'gw-access-keys-9d2e';
const CHAT = '/v1/chat/completions';
const NOTE = /^approved before, but this call was signed with a key that approval does not know/;

let gateway: GatewayDouble;
let redis: RedisServer;
let admin: Redis;
const hosts: CardHost[] = [];
/** Senders: fresh agents, each a stranger to the agent under test. */
const senders = agentPool(() => ({}));

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
  redis = await startRedisServer();
  admin = new Redis(redis.url);
});
afterEach(async () => {
  await senders.closeAll();
  for (const host of hosts.splice(0)) await host.close();
});
afterAll(async () => {
  admin.disconnect();
  await redis.close();
  await gateway.close();
});

/** Where the access lists live: the data dir, or a real redis-server shared by replicas. */
const HOMES: [string, boolean][] = [
  ['the data dir', false],
  ['Redis', true],
];

describe.each(HOMES)('access lists in %s', (_home, onRedis) => {
  const pool = agentPool(() => ({
    gatewayUrl: gateway.url,
    gatewayToken: TOKEN,
    access: 'pairing',
    ...(onRedis ? { redisUrl: redis.url } : {}),
  }));
  afterEach(() => pool.closeAll());
  const start = async (options: TestAgentOptions = {}) => {
    if (onRedis) await admin.flushall();
    return pool.start(options);
  };

  it('a new holder of an approved id, listing the old key as inactive beside its own, asks again and the operator sees why', async () => {
    const agent = await start();
    const port = await freePort();
    const original = await senders.start({ settings: { port } });
    expect((await call(agent, original.id, original.app.keys.signer)).status).toBe(403);
    agent.app.access.approve(original.id);
    expect((await call(agent, original.id, original.app.keys.signer)).status).toBe(200);
    await original.stop();

    // Someone else now serves a card at that address, listing the first owner's key, inactive, beside its own.
    const [oldKey] = original.app.keys.publicKeys();
    const newHolder = testKey('new-holder');
    hosts.push(
      await startCardHost(
        [
          { ...oldKey!, active: false },
          { kid: newHolder.kid, key: newHolder.key, active: true },
        ],
        port,
      ),
    );
    gateway.requests.length = 0;
    const reply = await call(agent, original.id, newHolder.signer, 'sync', 'I am the one you approved');
    expectError(reply, 403, 'AUTH_FAILED', /not yet approved/);
    expect(forwarded('I am the one you approved')).toBe(false);

    const view = await consoleAccess(agent);
    expect(view.approved.map((a) => a.sender)).not.toContain(original.id);
    expect(view.pending).toEqual([
      expect.objectContaining({ sender: original.id, note: expect.stringMatching(NOTE) as unknown }),
    ]);
    expect(view.pending[0]!.note).toMatch(/someone else may hold this id now/);
  });

  it('a rotation announced by a call signed with the old key keeps the approval: the new key is admitted', async () => {
    let offset = 0;
    const agent = await start({ now: () => Date.now() + offset });
    // A card cached for 30 s; the key rotated out stays active for as long.
    const sender = await senders.start({ settings: { cardTTL: 30 } });
    await approved(agent, sender.id, sender.app.keys.signer);

    const old = sender.app.keys.signer;
    sender.app.keys.rotate();
    // The agent's copy of the card has expired: the next call fetches the one that lists both keys.
    offset = 31_000;
    expect((await call(agent, sender.id, old, 'sync', 'signed with my old key')).status).toBe(200);
    const reply = await call(agent, sender.id, sender.app.keys.signer, 'sync', 'and now with the new one');
    expect(reply.status, reply.text).toBe(200);
    expect(agent.app.access.view().pending).toEqual([]);
  });

  it('both forms at once announce too: the old key in the headers, the new one in the envelope', async () => {
    const agent = await start();
    const sender = await senders.start();
    await approved(agent, sender.id, sender.app.keys.signer);
    const old = sender.app.keys.signer;
    sender.app.keys.rotate();
    const env = envelope(sender.id, agent.id, 'sync', { message: 'two signatures' });
    // The envelope's own signature (new key) inside, the headers (old key) over that body.
    const inside = sign(env, sender.app.keys.signer, 'envelope');
    const headers = sign(JSON.parse(inside.body) as typeof env, old, 'headers');
    const both = await post(agent.url, PATHS.sync, headers);
    expect(both.status, both.text).toBe(200);
    expect((await call(agent, sender.id, sender.app.keys.signer)).status).toBe(200);
  });

  it('a rotation nobody announced asks again with the reason; once the operator approves, the new key is admitted', async () => {
    const agent = await start();
    const sender = await senders.start();
    await approved(agent, sender.id, sender.app.keys.signer);
    sender.app.keys.rotate();
    expectError(await call(agent, sender.id, sender.app.keys.signer), 403, 'AUTH_FAILED', /not yet approved/);
    expect(agent.app.access.view().pending[0]?.note).toMatch(NOTE);
    agent.app.access.approve(sender.id);
    expect((await call(agent, sender.id, sender.app.keys.signer)).status).toBe(200);
  });

  it("a key the operator pinned is the operator's word: admitted for an approved id, whatever it was bound to", async () => {
    const agent = await start();
    const sender = await senders.start();
    await approved(agent, sender.id, sender.app.keys.signer);
    const pinned = testKey('pinned');
    agent.app.updateSettings({ trustedPeerKeys: { [sender.id]: pinned.key } });
    const reply = await call(agent, sender.id, pinned.signer);
    expect(reply.status, reply.text).toBe(200);
    expect(agent.app.access.view().pending).toEqual([]);
  });

  it('allowed peers and our own id have no approval to bind: a new key passes', async () => {
    const friend = await senders.start();
    const agent = await start({ settings: { allowedPeers: [friend.id] } });
    expect((await call(agent, friend.id, friend.app.keys.signer)).status).toBe(200);
    friend.app.keys.rotate();
    expect((await call(agent, friend.id, friend.app.keys.signer)).status).toBe(200);
    expect((await call(agent, agent.id, agent.app.keys.signer)).status).toBe(200);
    agent.app.keys.rotate();
    expect((await call(agent, agent.id, agent.app.keys.signer)).status).toBe(200);
  });

  it('approvals stored before this change keep working: their listed keys count as bound, none binds the first', async () => {
    const [listed, unbound] = [await senders.start(), await senders.start()];
    const dataDir = tempDir();
    // As the previous release wrote them: every key the card listed, or no keys (approved ahead of a call).
    const approvedRecords: ApprovedRecord[] = [
      { sender: listed.id, approvedAt: Date.now(), keys: [testKey('retired').key, keyOf(listed)] },
      { sender: unbound.id, approvedAt: Date.now() },
    ];
    const file = { approved: approvedRecords, pending: [], denied: [] };
    writeFileSync(join(dataDir, 'access.json'), JSON.stringify(file));
    const agent = await start({ dataDir });
    expect((await call(agent, listed.id, listed.app.keys.signer)).status).toBe(200);
    expect((await call(agent, unbound.id, unbound.app.keys.signer)).status).toBe(200);
    // The first key that signed is bound now: another one, unannounced, asks again.
    unbound.app.keys.rotate();
    expectError(
      await call(agent, unbound.id, unbound.app.keys.signer),
      403,
      'AUTH_FAILED',
      /not yet approved/,
    );
    expect(agent.app.access.view().pending.map((p) => p.sender)).toEqual([unbound.id]);
  });
});

it('on Redis, an approval made while the lists reload (each change reloads them) stands, here and in Redis', async () => {
  await admin.flushall();
  const pool = agentPool(() => ({
    gatewayUrl: gateway.url,
    gatewayToken: TOKEN,
    access: 'pairing',
    redisUrl: redis.url,
  }));
  try {
    const agent = await pool.start();
    for (let i = 0; i < 20; i++) {
      const key = testKey(`k${i}`);
      const host = await startCardHost([{ kid: key.kid, key: key.key, active: true }]);
      hosts.push(host);
      expect((await call(agent, host.id, key.signer)).status).toBe(403);
      agent.app.access.approve(host.id);
      const reply = await call(agent, host.id, key.signer);
      expect(reply.status, `call ${i}: ${reply.text}`).toBe(200);
    }
    await until(
      async () => (await admin.hlen('agent-bridge:access:approved')) === 20,
      3000,
      'the approvals in Redis',
    );
  } finally {
    await pool.closeAll();
  }
});

it('`serve` prints the reason when an approved id asks again with another key', async () => {
  const port = await freePort();
  const dataDir = tempDir();
  const hostPort = await freePort();
  const [oldKey, newHolder] = [testKey('first-owner'), testKey('new-holder')];
  hosts.push(
    await startCardHost(
      [
        { kid: oldKey.kid, key: oldKey.key, active: false },
        { kid: newHolder.kid, key: newHolder.key, active: true },
      ],
      hostPort,
    ),
  );
  const id = `agent://127.0.0.1:${hostPort}`;
  const approval: ApprovedRecord = { sender: id, approvedAt: Date.now(), keys: [oldKey.key] };
  writeFileSync(
    join(dataDir, 'access.json'),
    JSON.stringify({ approved: [approval], pending: [], denied: [] }),
  );
  const child = await startChildAgent(
    [
      '--port',
      String(port),
      '--data-dir',
      dataDir,
      '--tunnel',
      'none',
      '--dev-http-peers',
      '--console-port',
      '0',
    ],
    { GATEWAY_URL: gateway.url, GATEWAY_TOKEN: TOKEN },
  );
  try {
    const to = `agent://127.0.0.1:${port}`;
    const reply = await post(
      child.url,
      PATHS.sync,
      sign(envelope(id, to, 'sync', { message: 'hi' }), newHolder.signer),
    );
    expect(reply.status, reply.text).toBe(403);
    await until(() => child.output().includes(`Access: ${id}`), 5000, 'the access line');
    const line =
      child
        .output()
        .split('\n')
        .find((l) => l.includes(`Access: ${id}`)) ?? '';
    expect(line).toMatch(/asks to talk to your agent/);
    expect(line).toMatch(
      /It was approved before, but this call was signed with a key that approval does not know/,
    );
  } finally {
    child.process.kill('SIGTERM');
    await child.exited;
  }
});

function call(
  agent: TestAgent,
  from: string,
  signer: Signer,
  mode: 'sync' = 'sync',
  message = 'hello',
  form: Form = 'headers',
): Promise<Reply> {
  return post(agent.url, PATHS[mode], sign(envelope(from, agent.id, mode, { message }), signer, form));
}

/** The sender asks, the operator approves, and its next call is answered. */
async function approved(agent: TestAgent, id: string, signer: Signer): Promise<void> {
  expect((await call(agent, id, signer)).status).toBe(403);
  agent.app.access.approve(id);
  const reply = await call(agent, id, signer);
  expect(reply.status, reply.text).toBe(200);
}

function keyOf(agent: TestAgent): string {
  return agent.app.keys.publicKeys().find((k) => k.active)!.key;
}

const forwarded = (text: string) =>
  gateway.requests
    .filter((r) => r.path === CHAT)
    .some((r) => JSON.stringify((r.json as { messages: unknown }).messages).includes(text));

/** GET /api/access, as the console's Access page reads it. */
async function consoleAccess(agent: TestAgent): Promise<AccessResponse> {
  const handle = await startConsole({
    app: agent.app,
    store: openSettingsStore(agent.dataDir),
    dataDir: agent.dataDir,
    port: 0,
  });
  try {
    const response = await fetch(`${handle.url}/api/access`, {
      headers: { authorization: `Bearer ${handle.token}` },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as AccessResponse;
  } finally {
    await handle.close();
  }
}
