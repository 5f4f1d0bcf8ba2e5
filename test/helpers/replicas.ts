import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { onTestFinished } from 'vitest';
import type { Client } from '@a2a-js/sdk/client';
import { a2aClient, type ClientOptions, type Transport } from './a2a-agent.js';
import { startAgent, tempDir, type TestAgent, type TestAgentOptions } from './agents.js';

/** The one address replicas are known by (on their cards); nothing listens there. */
const PUBLIC_URL = 'http://127.0.0.1:9';

export interface ReplicaOptions extends TestAgentOptions {
  /** The redis-server they share (test/fixtures/redis-server.ts). */
  redis: { url: string };
  /** The gateway they all call (test/fixtures/gateway-double.ts). */
  gateway: { url: string; token: string };
}

/**
 * `count` replicas of one agent as apps in this process, on a fresh (flushed) Redis database, sharing one
 * key file (the first creates the key) and one public address, as behind a balancer; a task lease of one
 * second, so a stopped replica's tasks are taken over quickly. `options.settings` win over these. Call it in
 * a test: the replicas are closed, and their key file removed, when the test ends.
 */
export async function startReplicas(count: number, options: ReplicaOptions): Promise<TestAgent[]> {
  const { redis, gateway, ...agentOptions } = options;
  const admin = new Redis(redis.url);
  try {
    await admin.flushall();
  } finally {
    admin.disconnect();
  }
  const keysDir = tempDir();
  const started: TestAgent[] = [];
  onTestFinished(async () => {
    // A replica a test stopped on purpose (its Redis closed under it) may fail to stop again: still cleaned up.
    for (const agent of started) await agent.close().catch(() => undefined);
    rmSync(keysDir, { recursive: true, force: true });
  });
  for (let i = 0; i < count; i++) {
    started.push(
      await startAgent({
        ...agentOptions,
        env: { GATEWAY_URL: gateway.url, GATEWAY_TOKEN: gateway.token },
        settings: {
          redisUrl: redis.url,
          keysFile: join(keysDir, 'keys.json'),
          publicUrl: PUBLIC_URL,
          taskLeaseSeconds: 1,
          ...agentOptions.settings,
        },
      }),
    );
  }
  return started;
}

/** The SDK's own A2A client of one replica: what its card names (the public address) is routed to it. */
export function replicaClient(
  replica: TestAgent,
  key: string,
  transport: Transport = 'JSONRPC',
  options: ClientOptions = {},
): Promise<Client> {
  const route = (url: string) =>
    url.startsWith(PUBLIC_URL) ? replica.url + url.slice(PUBLIC_URL.length) : url;
  return a2aClient(replica.url, key, transport, { ...options, route });
}
