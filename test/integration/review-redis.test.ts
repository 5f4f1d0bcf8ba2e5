// Review of issue 15, finding 5: a restart of Redis counts as possible loss of nonces unless Redis fsyncs every
// write. A failover is a new Redis process too, yet fsync on the old primary says nothing about what its
// replica received: replication is asynchronous, so a nonce acknowledged by the primary just before it fell
// can be missing on the replica that takes over, and an envelope sent before can be replayed. Real
// redis-servers (both `appendonly yes`, `appendfsync always`), the replica cut off from its primary before
// the nonce is written (replication lag), then promoted behind the address the bridge connects to.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, expect, it } from 'vitest';
import { RedisCallLimits } from '../../src/state/redis-call-limits.js';
import { RedisConnection } from '../../src/state/redis-connection.js';
import { startRedisServer } from '../fixtures/redis-server.js';
import { tempDir } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The address the bridge knows Redis by (a floating IP, a DNS name, a Sentinel-aware proxy): switchable. */
async function startSwitch(port: number): Promise<{ url: string; failOver(to: number): void }> {
  let target = port;
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    for (const socket of open) socket.destroy();
    server.close();
  });
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}/0`,
    failOver: (to) => {
      target = to;
      for (const socket of open) socket.destroy();
    },
  };
}

it('a failover to a replica that missed the newest writes holds calls for the nonce window', async () => {
  const primary = await startRedisServer({ persistence: 'aof-always' });
  const replica = await startRedisServer({ persistence: 'aof-always' });
  const onReplica = new Redis(replica.url);
  onReplica.on('error', () => undefined);
  cleanups.push(
    () => primary.close(),
    () => replica.close(),
    () => onReplica.disconnect(),
  );
  const address = await startSwitch(primary.port);
  const connection = new RedisConnection({
    url: address.url,
    wipeHoldMs: 60_000,
    memoryFile: join(tempDir(), 'redis-sentinel'),
  });
  await connection.connect();
  cleanups.push(() => connection.disconnect());
  const limits = new RedisCallLimits(connection, { perMinute: 100_000, perSender: 100_000 });
  const check = (nonce: string) =>
    Promise.resolve()
      .then(() =>
        limits.check({
          sender: 'agent://p.example',
          nonce,
          nonceExpiresAt: Date.now() + 60_000,
          tokensPerDay: 0,
        }),
      )
      .catch((error: unknown) => error);

  // The replica follows the primary, sentinel included.
  await onReplica.replicaof('127.0.0.1', primary.port);
  expect(await check('replicated')).toEqual({ ok: true });
  // The first sync takes a few seconds on a loaded machine (a full resync through the AOF).
  await until(
    async () => (await onReplica.exists('agent-bridge:nonce:agent://p.example replicated')) === 1,
    15_000,
    'the nonce on the replica',
  );

  // Replication lags (here: cut), the primary acknowledges a nonce, then falls; the replica takes over.
  await onReplica.replicaof('NO', 'ONE');
  expect(await check('acknowledged-by-the-primary')).toEqual({ ok: true });
  await primary.kill();
  address.failOver(replica.port);
  await until(() => !connection.health().up, 5000, 'the connection cut');
  await until(
    () => connection.health().up || !connection.health().problem?.includes('does not answer'),
    10_000,
    'the bridge back on the new primary',
  );

  // The envelope with that nonce, sent again, must not pass: calls wait out the window.
  expect(await check('acknowledged-by-the-primary')).toMatchObject({
    code: 'AGENT_UNAVAILABLE',
    httpStatus: 503,
  });
});
