// Issue 15, finding 3: strangers spent the agent-wide rate limit. Six throwaway identities, ten calls each,
// all refused 403, left an approved sender at 429; once the operator denied all six, their next 60 calls were
// still charged. Against a real agent on loopback and the gateway double, its limits in the data dir and on a
// real redis-server: the senders who will be refused are decided before the agent-wide bucket is charged,
// new senders spend a small bucket of their own on their way to the pending list, and the approved sender
// keeps its service throughout. Refusals before the nonce step keep the nonce (PROTOCOL.md §4).
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Signer } from '../../src/protocol/index.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server.js';
import { agentPool, type TestAgent, type TestAgentOptions } from '../helpers/agents.js';
import { startCardHost, testKey, type CardHost, type TestKey } from '../helpers/card-host.js';
import { PATHS, envelope, post, sign, type Reply } from '../helpers/envelopes.js';
import { expectError } from '../helpers/verify.js';

const TOKEN = 'gw-strangers-3b1f';
let gateway: GatewayDouble;
let redis: RedisServer;
let admin: Redis;
const hosts: CardHost[] = [];

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
  redis = await startRedisServer();
  admin = new Redis(redis.url);
});
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
});
afterAll(async () => {
  admin.disconnect();
  await redis.close();
  await gateway.close();
});

/** An agent identity: its card on loopback, and the key it signs with. */
interface Identity {
  id: string;
  key: TestKey;
}

async function identity(name: string): Promise<Identity> {
  const key = testKey(name);
  const host = await startCardHost([{ kid: key.kid, key: key.key, active: true }]);
  hosts.push(host);
  return { id: host.id, key };
}

function call(agent: TestAgent, from: Identity, message = 'hello', signer: Signer = from.key.signer) {
  return post(agent.url, PATHS.sync, sign(envelope(from.id, agent.id, 'sync', { message }), signer));
}

const statuses = (replies: Reply[]) => replies.map((reply) => reply.status);

// The data dir's buckets run on the agent's clock, held still here so that nothing refills; Redis's run on
// Redis's own clock, which refills one call a second of the 60 a minute: far fewer than a test makes.
const HOMES: [string, boolean][] = [
  ['the data dir', false],
  ['Redis', true],
];

describe.each(HOMES)('limits in %s', (_home, onRedis) => {
  const pool = agentPool(() => ({
    gatewayUrl: gateway.url,
    gatewayToken: TOKEN,
    access: 'pairing',
    rpm: 60,
    perSender: 10,
    ...(onRedis ? { redisUrl: redis.url } : {}),
  }));
  afterEach(() => pool.closeAll());
  const start = async (options: TestAgentOptions = {}) => {
    if (onRedis) await admin.flushall();
    const frozen = Date.now();
    return pool.start({ now: () => frozen, ...options });
  };

  it('six strangers, ten calls each, then denied and ten more: the approved sender keeps its service', async () => {
    const agent = await start();
    const friend = await identity('friend');
    agent.app.access.approve(friend.id);
    const strangers = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => identity(`stranger-${n}`)));

    for (const stranger of strangers) {
      const replies: Reply[] = [];
      for (let i = 0; i < 10; i++) replies.push(await call(agent, stranger, `let me in ${i}`));
      expect(statuses(replies)).toEqual(Array(10).fill(403));
      expectError(replies[9]!, 403, 'AUTH_FAILED', /not yet approved/);
    }
    expect(agent.app.access.view().pending).toHaveLength(6);
    const before: Reply[] = [];
    for (let i = 0; i < 5; i++) before.push(await call(agent, friend, `still here ${i}`));
    expect(statuses(before), before[0]!.text).toEqual(Array(5).fill(200));

    for (const stranger of strangers) agent.app.access.deny(stranger.id);
    for (const stranger of strangers) {
      for (let i = 0; i < 10; i++) {
        expectError(await call(agent, stranger, `again ${i}`), 403, 'AUTH_FAILED', /operator declined/);
      }
    }
    const after: Reply[] = [];
    for (let i = 0; i < 5; i++) after.push(await call(agent, friend, `and still ${i}`));
    expect(statuses(after), after[0]!.text).toEqual(Array(5).fill(200));
  });

  it("new senders have a small bucket of their own (a tenth of the card's limit): past it they wait, no one else does", async () => {
    const agent = await start();
    const friend = await identity('friend');
    agent.app.access.approve(friend.id);
    const strangers = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((n) => identity(`new-${n}`)));
    for (const stranger of strangers.slice(0, 6)) expect((await call(agent, stranger)).status).toBe(403);
    const seventh = await call(agent, strangers[6]!);
    expectError(seventh, 429, 'RATE_LIMITED', /senders its operator has not approved/);
    expect(Number(seventh.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(agent.app.access.view().pending).toHaveLength(6);
    expect((await call(agent, friend)).status).toBe(200);
  });

  it('a waiting sender is refused before the limits: its calls count on its request, cost no allowance, keep their nonce', async () => {
    const agent = await start({ settings: { perSender: 2 } });
    const stranger = await identity('waiting');
    expect((await call(agent, stranger, 'first')).status).toBe(403);
    const kept = envelope(stranger.id, agent.id, 'sync', { message: 'kept for later' });
    for (let i = 0; i < 3; i++) {
      expectError(await post(agent.url, PATHS.sync, sign(kept, stranger.key.signer)), 403, 'AUTH_FAILED');
    }
    expect(agent.app.access.view().pending[0]).toMatchObject({ count: 4, preview: 'first' });
    agent.app.access.approve(stranger.id);
    // The very envelope refused three times goes through: no refusal before the nonce step spent it.
    const reply = await post(agent.url, PATHS.sync, sign(kept, stranger.key.signer));
    expect(reply.status, reply.text).toBe(200);
  });

  it('under the allowlist, strangers are refused before any limit', async () => {
    const agent = await start({ settings: { access: 'allowlist', rpm: 5 } });
    const friend = await identity('friend');
    agent.app.access.approve(friend.id);
    const stranger = await identity('outsider');
    for (let i = 0; i < 10; i++) {
      expectError(await call(agent, stranger), 403, 'AUTH_FAILED', /accepts calls only from senders/);
    }
    const replies: Reply[] = [];
    for (let i = 0; i < 5; i++) replies.push(await call(agent, friend));
    expect(statuses(replies)).toEqual(Array(5).fill(200));
  });

  it('unsigned calls the policy refuses are refused before any limit', async () => {
    const agent = await start({ settings: { allowUnsigned: true, rpm: 5 } });
    const friend = await identity('friend');
    agent.app.access.approve(friend.id);
    for (let i = 0; i < 10; i++) {
      const reply = await post(agent.url, PATHS.sync, {
        body: JSON.stringify({ skill: 'chat', payload: { message: 'no signature' } }),
        headers: { 'content-type': 'application/json' },
      });
      expectError(reply, 401, 'AUTH_FAILED', /unsigned calls are refused/);
    }
    const replies: Reply[] = [];
    for (let i = 0; i < 5; i++) replies.push(await call(agent, friend));
    expect(statuses(replies)).toEqual(Array(5).fill(200));
  });
});
