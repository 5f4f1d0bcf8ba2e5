import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { existsSync, rmSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server.js';
import { startRegistryDouble, type RegistryDouble } from '../fixtures/registry-double.js';
import { startAgent, type TestAgent, type TestAgentOptions } from '../helpers/agents.js';
import { envelope, post, sign } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';
import { startReplicas } from '../helpers/replicas.js';

// Replicas as apps in this process (the CLI processes are in replicas.test.ts): what needs a test seam a
// child process cannot take (loopback callbacks), a registry, or reading a replica's own state.
let redis: RedisServer;
let admin: Redis;
let gateway: GatewayDouble;
let registry: RegistryDouble;
const open: TestAgent[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
  admin = new Redis(redis.url);
  gateway = await startGatewayDouble({ token: 'gw-token-123' });
  registry = await startRegistryDouble();
});

afterEach(async () => {
  for (const agent of open.splice(0)) await agent.close().catch(() => undefined);
  gateway.set({ behaviour: 'ok' });
});

afterAll(async () => {
  admin.disconnect();
  await registry.close();
  await gateway.close();
  await redis.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const replicas = (count: number, options: TestAgentOptions = {}) =>
  startReplicas(count, { ...options, redis, gateway });

describe('replicas in one process', () => {
  it('deliver the callback of a stopped replica’s task once, from one of the others', async () => {
    const received: string[] = [];
    const hook: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push(body);
        res.end();
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    try {
      // The loopback receiver stands in for a public https endpoint (no public host can be reached here).
      const [a, b, c] = await replicas(3, {
        callbacks: { allowHttp: true, isAllowedAddress: () => true, backoffMs: [] },
      });
      const peer = await startAgent();
      open.push(peer);
      gateway.set({ behaviour: 'hang' });
      const callbackUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/done`;
      const accepted = await post(
        a!.url,
        '/agent/task',
        sign(envelope(peer.id, a!.id, 'async', { message: 'slow' }, { callbackUrl }), peer.app.keys.signer),
      );
      expect(accepted.status, accepted.text).toBe(202);
      const taskId = accepted.json.taskId as string;
      await until(async () => (await b!.app.server.tasks.get(taskId))?.status === 'running', 3000, 'running');

      // a goes silent as a crashed replica would: no more lease renewals, no more Redis.
      a!.app.shared!.close();
      await until(() => received.length > 0, 5000, 'the callback');
      await new Promise((resolve) => setTimeout(resolve, 1500)); // two more looks by b and c
      expect(received).toHaveLength(1);
      expect(JSON.parse(received[0]!)).toMatchObject({
        status: 'error',
        error: {
          code: 'AGENT_UNAVAILABLE',
          message: expect.stringMatching(/replica running this task stopped/),
        },
      });
      expect(await c!.app.server.tasks.get(taskId)).toMatchObject({
        status: 'failed',
        callback: { state: 'delivered' },
      });
    } finally {
      await new Promise((resolve) => hook.close(resolve));
    }
  });

  it('run a task held at one replica when the operator approves its sender at another', async () => {
    const [a, b] = await replicas(2, { settings: { access: 'pairing' } });
    const peer = await startAgent();
    open.push(peer);
    const accepted = await post(
      b!.url,
      '/agent/task',
      sign(envelope(peer.id, b!.id, 'async', { message: 'held' }), peer.app.keys.signer),
    );
    expect(accepted.status, accepted.text).toBe(202);
    const taskId = accepted.json.taskId as string;
    await until(() => a!.app.access.summary().pending === 1, 3000, "the request on a's list");
    a!.app.access.approve(peer.id);
    await until(async () => (await b!.app.server.tasks.get(taskId))?.status === 'done', 5000, 'done');
    const done = await b!.app.server.tasks.get(taskId);
    expect(await b!.app.server.tasks.view(done!)).toMatchObject({ result: { reply: 'echo: held' } });
    await until(() => b!.app.access.summary().pending === 0, 3000, "the request gone from b's list");
  });

  it('bring the approvals of an agent that ran alone into an empty Redis, for every replica', async () => {
    const alone = await startAgent({ settings: { access: 'pairing' } });
    dirs.push(alone.dataDir);
    const peer = await startAgent();
    open.push(peer);
    alone.app.access.approve(peer.id);
    await alone.stop();
    await admin.flushall();
    const first = await startAgent({
      dataDir: alone.dataDir,
      env: { GATEWAY_URL: gateway.url, GATEWAY_TOKEN: 'gw-token-123' },
      settings: { access: 'pairing', redisUrl: redis.url },
    });
    open.push(first);
    const second = await startAgent({
      env: { GATEWAY_URL: gateway.url, GATEWAY_TOKEN: 'gw-token-123' },
      settings: { access: 'pairing', redisUrl: redis.url, keysFile: join(alone.dataDir, 'keys.json') },
    });
    open.push(second);
    expect(second.app.access.store.isApproved(peer.id)).toBe(true);
    const reply = await post(
      second.url,
      '/agent/message',
      sign(envelope(peer.id, second.id, 'sync', { message: 'still approved' }), peer.app.keys.signer),
    );
    expect(reply.status, reply.text).toBe(200);

    // Imported once: the file is set aside, so a revocation made since stays revoked after a restart.
    expect(existsSync(join(alone.dataDir, 'access.json'))).toBe(false);
    expect(existsSync(join(alone.dataDir, 'access.json.imported'))).toBe(true);
    second.app.access.revoke(peer.id);
    await until(() => !first.app.access.store.isApproved(peer.id), 3000, 'the revocation at the first');
    await first.stop();
    const again = await startAgent({
      dataDir: alone.dataDir,
      env: { GATEWAY_URL: gateway.url, GATEWAY_TOKEN: 'gw-token-123' },
      settings: { access: 'pairing', redisUrl: redis.url },
    });
    open.push(again);
    expect(again.app.access.store.isApproved(peer.id)).toBe(false);
  });

  it('refuse an operator decision while Redis is down, and carry decisions made before to every replica after', async () => {
    const [a, b] = await replicas(2, { settings: { access: 'pairing' } });
    const peer = await startAgent();
    open.push(peer);
    a!.app.access.approve(peer.id);
    await until(() => b!.app.access.store.isApproved(peer.id), 3000, 'the approval at b');
    await redis.stop();
    await until(() => !a!.app.stateHealth().up, 5000, 'down');
    expect(() => a!.app.access.revoke(peer.id)).toThrow(expect.objectContaining({ status: 503 }));
    // A key rotated meanwhile (the key file is shared storage, Redis only carries the news).
    const { kid } = a!.app.keys.rotate();
    await redis.restart();
    await until(() => b!.app.stateHealth().up, 10_000, 'back up');
    await until(() => b!.app.card().publicKeys[0]?.kid === kid, 3000, "the new key on b's card");
    expect(a!.app.access.store.isApproved(peer.id)).toBe(true);
    expect(b!.app.access.store.isApproved(peer.id)).toBe(true);
  });

  it('run every held task of a sender approved at one replica, wherever it was held', async () => {
    const [a, b] = await replicas(2, { settings: { access: 'pairing' } });
    const peer = await startAgent();
    open.push(peer);
    const submit = (agent: TestAgent, message: string) =>
      post(
        agent.url,
        '/agent/task',
        sign(envelope(peer.id, agent.id, 'async', { message }), peer.app.keys.signer),
      );
    // Both at once: each replica writes its copy of the one pending request.
    const [atA, atB] = await Promise.all([submit(a!, 'one'), submit(b!, 'two')]);
    expect(atA.status, atA.text).toBe(202);
    expect(atB.status, atB.text).toBe(202);
    await until(() => a!.app.access.summary().pending === 1, 3000, 'the request');
    a!.app.access.approve(peer.id);
    // Not a latency check: a replica learns of the approval from the shared state, which takes longer on a
    // machine busy with the whole suite (5 s was once not enough there).
    const ids = [atA.json.taskId as string, atB.json.taskId as string];
    const done = async (id: string) => (await a!.app.server.tasks.get(id))?.status === 'done';
    await until(async () => (await Promise.all(ids.map(done))).every(Boolean), 12_000, `tasks ${ids} done`);
  });

  it('share the registration: registered at one replica, shown registered by the other', async () => {
    const [a, b] = await replicas(2, { settings: { registryUrl: registry.url } });
    // The registry reads the card at the public URL: here, a's own address stands for the balancer's.
    a!.app.updateSettings({ publicUrl: a!.url });
    b!.app.updateSettings({ publicUrl: a!.url });
    const record = await a!.app.register();
    await until(() => b!.app.registrar.current.status === 'registered', 3000, "b's registration");
    expect(b!.app.registrar.record).toEqual(record);
  });
});
