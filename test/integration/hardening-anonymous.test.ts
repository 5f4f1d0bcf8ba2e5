// What an anonymous caller could do to the agent (the outside review's findings 1, 4 and 5), each reproduced
// against a real agent on loopback: the card-fetch budget lockout, task results without a cap, and log
// injection through the sender id. Each test failed on the code before its fix.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signRequest, type Mode } from '../../src/protocol/index.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { agentPool, tempDir, type TestAgent } from '../helpers/agents.js';
import { freePort, startChildAgent } from '../helpers/child-agent.js';
import { PATHS, envelope, post, sign, type Reply } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';
import { expectError } from '../helpers/verify.js';
import type { TaskStore } from '../../src/state/task-store.js';

let gateway: GatewayDouble;
const pool = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: gateway.token }));
const senders = agentPool(() => ({}));
let signer: TestAgent;

beforeAll(async () => {
  gateway = await startGatewayDouble();
  // Its key signs the made-up senders' envelopes: a valid signature whose key no card of theirs lists.
  signer = await senders.start();
});
afterEach(() => pool.closeAll());
afterAll(async () => {
  await senders.closeAll();
  await gateway.close();
});

/** An envelope claiming to come from `from`, signed with a key that is not in any card of its. */
function claimed(target: TestAgent, from: string, headers: Record<string, string> = {}, mode: Mode = 'sync') {
  const env = envelope(from, target.id, mode, { message: 'hi' });
  const body = JSON.stringify(env);
  return post(target.url, PATHS[mode], {
    body,
    headers: {
      'content-type': 'application/json',
      ...signRequest(signer.app.keys.signer, { method: 'POST', path: PATHS[mode], body }),
      ...headers,
    },
  });
}

/**
 * An agent whose clock can be stopped. The budgets refill as time passes (one fetch a second per address,
 * 8 a second in all), faster than a busy machine may send a flood: with the clock stopped, what a flood
 * spent stays spent, and the counts below are exact.
 */
async function stoppableAgent(): Promise<{
  agent: TestAgent;
  stop: () => void;
  advance: (ms: number) => void;
}> {
  let stopped: number | undefined;
  const agent = await pool.start({ now: () => stopped ?? Date.now() });
  return {
    agent,
    stop: () => (stopped = Date.now()),
    advance: (ms) => (stopped = (stopped ?? Date.now()) + ms),
  };
}

function genuine(target: TestAgent, from: TestAgent, mode: Mode = 'sync'): Promise<Reply> {
  return post(
    target.url,
    PATHS[mode],
    sign(envelope(from.id, target.id, mode, { message: 'hi' }), from.app.keys.signer),
  );
}

describe('1. the card-fetch budget cannot be spent by anonymous callers', () => {
  it('ids that cannot be fetched are refused before any budget is charged', async () => {
    const agent = await pool.start();
    for (let i = 0; i < 650; i++) {
      const reply = await claimed(agent, `agent://junk id ${i}`);
      expectError(reply, 400, 'SCHEMA_INVALID', /field "from" must match pattern/);
    }
    // Names that are well-formed but never public cost nothing either.
    for (const id of ['agent://intranet', 'agent://printer.local', 'agent://10.0.0.5:8443']) {
      const quiet = await pool.start({ settings: { devHttpPeers: false } });
      expectError(await claimed(quiet, id), 401, 'AUTH_FAILED', /card could not be fetched/);
    }
    const newcomer = await senders.start();
    const reply = await genuine(agent, newcomer);
    expect(reply.status, reply.text).toBe(200);
  });

  it('a flood of new ids from one address is bounded per address: other new senders still get in', async () => {
    const { agent, stop } = await stoppableAgent();
    stop();
    const codes = new Map<number, number>();
    for (let i = 0; i < 650; i++) {
      // Distinct loopback addresses, port 1: nothing listens, so each fetch fails at once.
      const id = `agent://127.0.${Math.floor(i / 250) + 1}.${(i % 250) + 1}:1`;
      const reply = await claimed(agent, id, { 'x-forwarded-for': '203.0.113.7' });
      codes.set(reply.status, (codes.get(reply.status) ?? 0) + 1);
    }
    // 60 fetches for that address (401: the card could not be fetched), then 503 without a fetch.
    expect(codes.get(401)).toBe(60);
    expect(codes.get(503)).toBe(590);
    const newcomer = await senders.start();
    const reply = await genuine(agent, newcomer);
    expect(reply.status, reply.text).toBe(200);
  });

  it('a caller cannot escape its per-address bound by prepending forwarded addresses', async () => {
    const { agent, stop } = await stoppableAgent();
    stop();
    let fetched = 0;
    for (let i = 0; i < 120; i++) {
      const id = `agent://127.2.${Math.floor(i / 250) + 1}.${(i % 250) + 1}:1`;
      // The proxy (here: the test, as the tunnel would) appends the real address last; the caller's own
      // values come first and change every time.
      const reply = await claimed(agent, id, { 'x-forwarded-for': `203.0.113.${i % 250}, 192.0.2.55` });
      if (reply.status === 401) fetched++;
    }
    expect(fetched).toBe(60);
  });

  it('a share of the budget is kept for senders seen before (a key rotation still works in a flood)', async () => {
    const { agent, stop, advance } = await stoppableAgent();
    // Stopped before the known sender's first call too: that fetch comes from the new senders' share, and
    // must not refill before the flood.
    stop();
    const known = await senders.start();
    const newcomer = await senders.start();
    expect((await genuine(agent, known)).status).toBe(200);
    // A flood from many addresses: new senders' share (480 of 600 a minute) is spent.
    let refused = 0;
    for (let i = 0; i < 520; i++) {
      const id = `agent://127.1.${Math.floor(i / 250) + 1}.${(i % 250) + 1}:1`;
      // What a proxy appends is the last hop: spread over many real addresses (a distributed flood).
      const reply = await claimed(agent, id, { 'x-forwarded-for': `10.0.0.1, 198.51.100.${i % 250}` });
      if (reply.status === 503) refused++;
    }
    // 480 less the known sender's own first fetch: 479 fetched, the other 41 refused.
    expect(refused).toBe(41);
    expectError(await genuine(agent, newcomer), 503, 'AGENT_UNAVAILABLE', /Too many unknown senders/);
    // The known sender rotates its key: its card must be fetched again, from the reserved share.
    known.app.keys.rotate();
    const reply = await genuine(agent, known);
    expect(reply.status, reply.text).toBe(200);
    // A minute later the flood's spending has refilled, and the newcomer gets in.
    advance(60_000);
    const later = await genuine(agent, newcomer);
    expect(later.status, later.text).toBe(200);
  });

  it("a stale envelope is refused before its sender's card is fetched", async () => {
    const agent = await pool.start();
    // A sender whose card server counts every fetch.
    let fetches = 0;
    const cards = createServer((_req, res) => {
      fetches++;
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => cards.listen(0, '127.0.0.1', resolve));
    const from = `agent://127.0.0.1:${(cards.address() as AddressInfo).port}`;
    try {
      const old = envelope(
        from,
        agent.id,
        'sync',
        { message: 'hi' },
        {
          timestamp: new Date(Date.now() - 10 * 60_000).toISOString(),
        },
      );
      const reply = await post(agent.url, PATHS.sync, sign(old, signer.app.keys.signer));
      expectError(reply, 401, 'AUTH_FAILED', /more than 5 minutes old/);
      expect(fetches).toBe(0);
      // The same sender, fresh: now the card is fetched (and, being absent, refused).
      expectError(await claimed(agent, from), 401, 'AUTH_FAILED', /card could not be fetched/);
      expect(fetches).toBe(1);
    } finally {
      await new Promise<void>((resolve) => cards.close(() => resolve()));
    }
  });
});

describe('4. task results are capped and kept on disk', () => {
  it('a sender at its cap gets 429; results are not held in memory; a restart still returns them', async () => {
    gateway.set({ reply: (message) => `${message} `.repeat(1000) });
    try {
      const agent = await pool.start({ taskLimits: { maxPerSender: 5, maxTotal: 100 } });
      const caller = await senders.start();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const reply = await genuine(agent, caller, 'async');
        expect(reply.status, reply.text).toBe(202);
        ids.push(reply.json.taskId as string);
      }
      const over = await genuine(agent, caller, 'async');
      expectError(over, 429, 'RATE_LIMITED', /already has 5 tasks held here/);
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another sender is not affected by this one's cap.
      const other = await senders.start();
      expect((await genuine(agent, other, 'async')).status).toBe(202);

      const poll = async (id: string) =>
        (await (await fetch(`${agent.url}/agent/task/${id}`)).json()) as Record<string, unknown>;
      await until(async () => (await Promise.all(ids.map(poll))).every((t) => t.status === 'done'));
      const inMemory = ids.map((id) => (agent.app.server.tasks as TaskStore).get(id));
      expect(inMemory.every((task) => task && !('result' in task))).toBe(true);
      const result = (await poll(ids[0]!)).result as { reply: string };
      expect(result.reply.length).toBeGreaterThan(2000);
      const file = JSON.parse(readFileSync(`${agent.dataDir}/tasks/${ids[0]}.json`, 'utf8')) as {
        result: unknown;
      };
      expect(file.result).toEqual(result);

      await agent.stop();
      const again = await pool.start({ dataDir: agent.dataDir, taskLimits: { maxPerSender: 5 } });
      expect(await (await fetch(`${again.url}/agent/task/${ids[0]}`)).json()).toMatchObject({
        status: 'done',
        result,
      });
      expect((again.app.server.tasks as TaskStore).get(ids[0]!)).not.toHaveProperty('result');
      // Still at the cap after the restart: the count is rebuilt from the files.
      expectError(await genuine(again, caller, 'async'), 429, 'RATE_LIMITED');
    } finally {
      gateway.set({ reply: (message) => `echo: ${message}` });
    }
  });

  it('the store as a whole is capped too: 503 past it', async () => {
    const agent = await pool.start({ taskLimits: { maxPerSender: 10, maxTotal: 2 } });
    const [a, b, c] = [await senders.start(), await senders.start(), await senders.start()];
    expect((await genuine(agent, a, 'async')).status).toBe(202);
    expect((await genuine(agent, b, 'async')).status).toBe(202);
    const full = await genuine(agent, c, 'async');
    expectError(full, 503, 'AGENT_UNAVAILABLE', /holds as many tasks as it can/);
    expect(full.headers.get('retry-after')).toBe('300');
  });
});

describe('5. nothing a caller sends can forge a log line or drive the terminal', () => {
  it('a sender id with a newline, a forged line and escape sequences never reaches the output raw', async () => {
    const dataDir = tempDir();
    const port = await freePort();
    const child = await startChildAgent([
      '--data-dir',
      dataDir,
      '--port',
      String(port),
      '--console-port',
      '0',
      '--tunnel',
      'none',
      '--access',
      'open',
      '--dev-http-peers',
      '--gateway-url',
      gateway.url,
      '--gateway-token',
      gateway.token,
    ]);
    try {
      const agent = { url: child.url, id: `agent://127.0.0.1:${port}` } as TestAgent;
      const forged =
        '\n12:00:00 200 accepted sync chat agent://trusted.example 1 ms\u001b[2J\u001b]0;owned\u0007';
      const attempts = [
        claimed(agent, `agent://x.example${forged}`),
        claimed(agent, 'agent://x.example', {}, 'sync').then(() =>
          post(child.url, PATHS.sync, {
            body: JSON.stringify(
              envelope('agent://x.example', agent.id, 'sync', { message: 'hi' }, { skill: `chat${forged}` }),
            ),
            headers: {
              'content-type': 'application/json',
              signature: 'sig1=:AAAA:',
              'signature-input': 'sig1=()',
            },
          }),
        ),
        post(child.url, PATHS.sync, { body: '{}', headers: { 'content-type': 'text/plain\u009b2J' } }),
      ];
      for (const reply of await Promise.all(attempts)) expect(reply.status).toBeGreaterThanOrEqual(400);
      await until(
        () =>
          child
            .output()
            .split('\n')
            .filter((l) => / refused at /.test(l)).length >= 4,
        5000,
        'the log lines',
      );
      const output = child.output();
      // eslint-disable-next-line no-control-regex -- the point: no raw control character in the output
      expect(output).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
      expect(output).not.toMatch(/^12:00:00 200 accepted .*trusted\.example/m);
      // The C1 control in the refusal message is shown escaped.
      expect(output).toContain('text/plain\\x9b2J');
    } finally {
      child.process.kill('SIGKILL');
      await child.exited;
    }
  });
});
