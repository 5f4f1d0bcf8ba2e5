import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server.js';
import { startRoundRobinProxy, type RoundRobinProxy } from '../fixtures/round-robin-proxy.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { freePort, startChildAgent, type ChildAgent } from '../helpers/child-agent.js';
import { envelope, post, sign, type Reply, type Signed } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';
import { expectError } from '../helpers/verify.js';

// Two replicas of one agent (the real CLI, each its own process and data dir) share one real redis-server
// and one key file, behind a round-robin proxy whose address is the agent's public URL (and so its id).
let redis: RedisServer;
let gateway: GatewayDouble;
let proxy: RoundRobinProxy;
let agentId: string;
const backends: string[] = [];
const replicas: { child: ChildAgent; dataDir: string; port: number }[] = [];
const peers: TestAgent[] = [];
const dirs: string[] = [];
let keysFile: string;

async function launch(index: number, port?: number, dataDir?: string): Promise<void> {
  const dir = dataDir ?? tempDir();
  if (!dataDir) dirs.push(dir);
  const agentPort = port ?? (await freePort());
  const child = await startChildAgent([
    '--data-dir',
    dir,
    '--keys-file',
    keysFile,
    '--redis-url',
    redis.url,
    '--task-lease',
    '2',
    '--port',
    String(agentPort),
    '--public-url',
    proxy.url,
    '--dev-http-peers',
    '--tunnel',
    'none',
    '--gateway-url',
    gateway.url,
    '--gateway-token',
    'gw-token-123',
    '--access',
    'open',
    '--rpm',
    '100000',
    '--per-sender',
    '100000',
    '--shutdown-grace',
    '1',
    '--console-port',
    '0',
  ]);
  replicas[index] = { child, dataDir: dir, port: agentPort };
  backends[index] = child.url;
}

function consoleOf(index: number): { url: string; token: string } {
  return JSON.parse(readFileSync(join(replicas[index]!.dataDir, 'console.json'), 'utf8')) as {
    url: string;
    token: string;
  };
}

async function consoleCall(index: number, method: string, path: string, body?: object): Promise<Response> {
  const { url, token } = consoleOf(index);
  return fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body && JSON.stringify(body),
  });
}

const signed = (peer: TestAgent, mode: 'sync' | 'async', message: string): Signed =>
  sign(envelope(peer.id, agentId, mode, { message }), peer.app.keys.signer);
const at = (index: number, path: string, body: Signed): Promise<Reply> => post(backends[index]!, path, body);

async function newPeer(): Promise<TestAgent> {
  const peer = await startAgent();
  peers.push(peer);
  return peer;
}

async function pollTask(index: number, taskId: string): Promise<Record<string, unknown>> {
  return (await (await fetch(`${backends[index]}/agent/task/${taskId}`)).json()) as Record<string, unknown>;
}

beforeAll(async () => {
  redis = await startRedisServer();
  gateway = await startGatewayDouble({ token: 'gw-token-123' });
  proxy = await startRoundRobinProxy(backends);
  agentId = `agent://${new URL(proxy.url).host}`;
  const keysDir = tempDir();
  dirs.push(keysDir);
  keysFile = join(keysDir, 'keys.json');
  // The first replica creates the identity key; the second starts once it exists, and shares it.
  await launch(0);
  await launch(1);
}, 60_000);

afterAll(async () => {
  for (const replica of replicas) replica?.child.process.kill('SIGKILL');
  for (const peer of peers) await peer.close();
  await proxy?.close();
  await gateway?.close();
  await redis?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('two replicas on one Redis', () => {
  it('serve one card, one id and one key', async () => {
    const cards = await Promise.all(
      [0, 1].map(async (i) => (await fetch(`${backends[i]}/.well-known/agent.json`)).json()),
    );
    expect(replicas[0]!.child.output()).toMatch(
      /State: +Redis at redis:\/\/127\.0\.0\.1:\d+\/0, shared with the other replicas; keys in /,
    );
    expect(cards[0]).toMatchObject({ id: agentId });
    expect(cards[1]).toMatchObject({ id: agentId });
    expect((cards[0] as { publicKeys: unknown }).publicKeys).toEqual(
      (cards[1] as { publicKeys: unknown }).publicKeys,
    );
  });

  it('refuse at one replica an envelope the other accepted (a replay)', async () => {
    const peer = await newPeer();
    const once = signed(peer, 'sync', 'only once');
    const first = await at(0, '/agent/message', once);
    expect(first.status, first.text).toBe(200);
    expectError(await at(1, '/agent/message', once), 401, 'REPLAY_DETECTED');
    // Through the balancer too: whichever replica it reaches, the envelope is spent.
    expectError(await post(proxy.url, '/agent/message', once), 401, 'REPLAY_DETECTED');
    expectError(await post(proxy.url, '/agent/message', once), 401, 'REPLAY_DETECTED');
  });

  it('count a sender against its limit and its daily token budget across both', async () => {
    const peer = await newPeer();
    for (const index of [0, 1]) {
      const changed = await consoleCall(index, 'PUT', '/api/settings', {
        perSender: 4,
        tokensPerDay: 100_000,
      });
      expect(changed.status, await changed.text()).toBe(200);
    }
    try {
      for (let i = 0; i < 4; i++) {
        const reply = await at(i % 2, '/agent/message', signed(peer, 'sync', `call ${i}`));
        expect(reply.status, reply.text).toBe(200);
      }
      for (const index of [0, 1])
        expectError(await at(index, '/agent/message', signed(peer, 'sync', 'one more')), 429, 'RATE_LIMITED');

      // Each call reports 15 tokens (the gateway double's usage): a budget of 40 allows three calls in all.
      const spender = await newPeer();
      for (const index of [0, 1])
        expect(
          (await consoleCall(index, 'PUT', '/api/settings', { perSender: 100_000, tokensPerDay: 40 })).status,
        ).toBe(200);
      for (const index of [0, 1, 0]) {
        const reply = await at(index, '/agent/message', signed(spender, 'sync', 'spend'));
        expect(reply.status, reply.text).toBe(200);
      }
      // Usage is written every 200 ms; then B, which served one call of the three (15 tokens), refuses at
      // once: it counts the 45 of both replicas, not only its own.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expectError(
        await at(1, '/agent/message', signed(spender, 'sync', 'over')),
        429,
        'TOKEN_BUDGET_EXCEEDED',
      );
      expectError(
        await at(0, '/agent/message', signed(spender, 'sync', 'over')),
        429,
        'TOKEN_BUDGET_EXCEEDED',
      );
    } finally {
      for (const index of [0, 1])
        await consoleCall(index, 'PUT', '/api/settings', { perSender: 100_000, tokensPerDay: 100_000 });
    }
  });

  it('answer a poll at one replica for a task submitted at the other', async () => {
    const peer = await newPeer();
    const accepted = await at(0, '/agent/task', signed(peer, 'async', 'task at A'));
    expect(accepted.status, accepted.text).toBe(202);
    const taskId = accepted.json.taskId as string;
    await until(async () => (await pollTask(1, taskId)).status === 'done', 5000, 'done at B');
    expect(await pollTask(1, taskId)).toEqual({
      taskId,
      status: 'done',
      result: { reply: 'echo: task at A', channel: 'samvad' },
    });
  });

  it('share approvals: a sender approved at one replica is admitted by the other', async () => {
    const peer = await newPeer();
    for (const index of [0, 1])
      expect((await consoleCall(index, 'PUT', '/api/settings', { access: 'pairing' })).status).toBe(200);
    try {
      expectError(
        await at(1, '/agent/message', signed(peer, 'sync', 'may I?')),
        403,
        'AUTH_FAILED',
        /not yet approved/,
      );
      // The request waits on A's Access page although it reached B.
      await until(
        async () => {
          const access = (await (await consoleCall(0, 'GET', '/api/access')).json()) as {
            pending: { sender: string }[];
          };
          return access.pending.some((entry) => entry.sender === peer.id);
        },
        3000,
        "B's pending request on A's console",
      );
      expect((await consoleCall(0, 'POST', '/api/access/approve', { sender: peer.id })).status).toBe(200);
      await until(
        async () => (await at(1, '/agent/message', signed(peer, 'sync', 'thanks'))).status === 200,
        3000,
        'the approval at B',
      );
    } finally {
      for (const index of [0, 1]) await consoleCall(index, 'PUT', '/api/settings', { access: 'open' });
    }
  });

  it("show a key rotated at one replica on the other replica's card", async () => {
    const before = (await (await fetch(`${backends[1]}/.well-known/agent.json`)).json()) as {
      publicKeys: { kid: string }[];
    };
    const rotated = await consoleCall(0, 'POST', '/api/keys/rotate');
    const text = await rotated.text();
    expect(rotated.status, text).toBe(200);
    const { kid } = (JSON.parse(text) as { key: { kid: string } }).key;
    expect(kid).toMatch(/\S/);
    expect(before.publicKeys.map((key) => key.kid)).not.toContain(kid);
    await until(
      async () => {
        const card = (await (await fetch(`${backends[1]}/.well-known/agent.json`)).json()) as {
          publicKeys: { kid: string }[];
        };
        return card.publicKeys[0]?.kid === kid;
      },
      3000,
      "the new key on B's card",
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${replicas[1]!.child.output()}`);
    });
    // B signs with it too: a call through B verifies against the new key.
    const peer = await newPeer();
    const reply = await at(1, '/agent/message', signed(peer, 'sync', 'after rotation'));
    expect(reply.status, reply.text).toBe(200);
  });

  it('fail the task of a replica killed with -9 once its lease runs out, from the other replica', async () => {
    const peer = await newPeer();
    gateway.set({ behaviour: 'hang' });
    try {
      const accepted = await at(0, '/agent/task', signed(peer, 'async', 'never finishes'));
      expect(accepted.status, accepted.text).toBe(202);
      const taskId = accepted.json.taskId as string;
      await until(async () => (await pollTask(1, taskId)).status === 'running', 5000, 'running');
      const { child, port, dataDir } = replicas[0]!;
      child.process.kill('SIGKILL');
      expect(await child.exited).toBe('SIGKILL');
      // Lease 2 s, looked at every second by the surviving replica.
      await until(async () => (await pollTask(1, taskId)).status === 'failed', 8000, 'failed by B');
      expect(await pollTask(1, taskId)).toMatchObject({
        status: 'failed',
        error: {
          code: 'AGENT_UNAVAILABLE',
          message: expect.stringMatching(/replica running this task stopped/),
        },
      });
      gateway.set({ behaviour: 'ok' });
      await launch(0, port, dataDir);
    } finally {
      gateway.set({ behaviour: 'ok' });
    }
  });

  it('accept nothing unchecked while Redis is stopped and restarted under load', async () => {
    const peer = await newPeer();
    const accepted: Signed[] = [];
    const outcomes: { status: number; code?: string; retryAfter: string | null }[] = [];
    let running = true;
    const worker = async () => {
      while (running) {
        const body = signed(peer, 'sync', 'under load');
        const reply = await post(proxy.url, '/agent/message', body);
        outcomes.push({
          status: reply.status,
          code: reply.json.code,
          retryAfter: reply.headers.get('retry-after'),
        });
        if (reply.status === 200) accepted.push(body);
        if (reply.status !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const workers = [worker(), worker(), worker(), worker()];
    await until(() => accepted.length >= 20, 5000, 'calls going through');
    await redis.stop();
    const stoppedAt = outcomes.length;
    await until(
      () => outcomes.slice(stoppedAt).filter((o) => o.status === 503).length >= 20,
      5000,
      'refusals',
    );
    const acceptedBefore = accepted.length;
    // Prometheus sees it too.
    const metrics = async () => (await consoleCall(0, 'GET', '/metrics')).text();
    // The public health says so too, for a balancer's health check.
    expect(await (await fetch(`${backends[1]}/agent/health`)).json()).toMatchObject({ status: 'degraded' });
    expect(await metrics()).toMatch(/^agent_bridge_state_backend_up\{backend="redis"\} 0$/m);
    await redis.restart();
    await until(() => accepted.length >= acceptedBefore + 20, 10_000, 'calls going through again');
    running = false;
    await Promise.all(workers);

    // Every answer was an acceptance or a 503 AGENT_UNAVAILABLE with Retry-After: never an error, never a 5xx
    // of another kind, and both replicas came back by themselves.
    const refused = outcomes.filter((o) => o.status !== 200);
    expect(refused.length).toBeGreaterThanOrEqual(20);
    for (const outcome of refused) {
      expect(outcome).toMatchObject({ status: 503, code: 'AGENT_UNAVAILABLE' });
      expect(Number(outcome.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    // Nothing was accepted without its nonce being recorded: every accepted envelope is now a replay.
    for (const body of accepted)
      expectError(await post(proxy.url, '/agent/message', body), 401, 'REPLAY_DETECTED');
    expect(await metrics()).toMatch(/^agent_bridge_state_backend_up\{backend="redis"\} 1$/m);
    // Each replica said so in its output, and its console says Redis is up again.
    for (const index of [0, 1]) {
      const output = replicas[index]!.child.output();
      expect(output).toMatch(/Shared state: Redis at .* does not answer.*refused with 503/);
      expect(output).toContain('Shared state: Redis answering again');
    }
    for (const index of [0, 1]) {
      const status = (await (await consoleCall(index, 'GET', '/api/status')).json()) as {
        state?: { backend: string; up: boolean };
      };
      expect(status.state).toEqual({ backend: 'redis', up: true });
    }
  }, 40_000);
});
