// The operator's consent for new senders (issue: strangers never act as the owner), against real agents on
// loopback and the gateway double: each policy in each mode; pending -> approve -> the held task runs; deny;
// expiry; the bounds; forged and unsigned senders never enter the list; our own id; rate limits still counted (keys and rotation: access-keys.test.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AccessChange } from '../../src/access/access-control.js';
import type { AccessPolicy } from '../../src/protocol/console-api.js';
import type { Mode } from '../../src/protocol/index.js';
import type { Settings } from '../../src/settings/schema.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { agentPool, type TestAgent, type TestAgentOptions } from '../helpers/agents.js';
import { PATHS, envelope, post, sign, type Reply } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';
import { expectError, expectSignedBy } from '../helpers/verify.js';

const MODES: Mode[] = ['sync', 'async', 'stream'];
const TOKEN = 'gw-access-token-4c1d';
const CHAT = '/v1/chat/completions';

let gateway: GatewayDouble;
const pool = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));
/** Senders: fresh agents, each a stranger to the agent under test. */
const senders = agentPool(() => ({}));

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
});
afterEach(async () => {
  await pool.closeAll();
  await senders.closeAll();
});
afterAll(async () => {
  await gateway.close();
});

function withPolicy(access: AccessPolicy, settings: Partial<Settings> = {}, options: TestAgentOptions = {}) {
  return pool.start({ ...options, settings: { access, ...settings } });
}

async function call(
  target: TestAgent,
  from: TestAgent,
  mode: Mode,
  message = `hello in ${mode}`,
  extra: Parameters<typeof envelope>[4] = {},
): Promise<Reply> {
  const env = envelope(from.id, target.id, mode, { message }, extra);
  return post(target.url, PATHS[mode], sign(env, from.app.keys.signer));
}

async function task(target: TestAgent, taskId: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${target.url}/agent/task/${taskId}`);
  return (await response.json()) as Record<string, unknown>;
}

const chatCalls = () => gateway.requests.filter((r) => r.path === CHAT);
const forwarded = (text: string) =>
  chatCalls().some((r) => JSON.stringify((r.json as { messages: unknown }).messages).includes(text));

describe('pairing (the default): a new sender waits for the operator', () => {
  it.each(['sync', 'stream'] as const)(
    '%s: 403 AUTH_FAILED with a request code; nothing reaches the gateway; the operator sees the sender',
    async (mode) => {
      const agent = await withPolicy('pairing');
      const stranger = await senders.start();
      gateway.requests.length = 0;
      const reply = await call(agent, stranger, mode, `first words ${mode}`);
      expectError(
        reply,
        403,
        'AUTH_FAILED',
        /not yet approved.*request [A-Z2-9]{4}-[A-Z2-9]{4} waits for their approval\. Retry later/,
      );
      expectSignedBy(agent.app, reply);
      expect(forwarded(`first words ${mode}`)).toBe(false);

      const view = agent.app.access.view();
      expect(view.pending).toHaveLength(1);
      const [pending] = view.pending;
      expect(pending).toMatchObject({
        sender: stranger.id,
        name: 'Agent Bridge',
        description: expect.stringContaining('OpenClaw') as unknown,
        count: 1,
        heldTasks: 0,
        preview: `first words ${mode}`,
      });
      expect(reply.json.message).toContain(pending!.code);
      expect(Date.parse(pending!.expiresAt) - Date.parse(pending!.firstAt)).toBe(24 * 3600_000);

      // Asking again counts; the request code stays the same.
      const again = await call(agent, stranger, mode, 'second words');
      expect(again.status).toBe(403);
      const after = agent.app.access.view().pending[0];
      expect(after).toMatchObject({ count: 2, code: pending!.code, preview: `first words ${mode}` });
    },
  );

  it('the operator approves: the retry succeeds, in every mode', async () => {
    const agent = await withPolicy('pairing');
    const stranger = await senders.start();
    expect((await call(agent, stranger, 'sync')).status).toBe(403);
    expect(agent.app.access.approve(stranger.id)).toBe(0);
    expect(agent.app.access.view()).toMatchObject({
      pending: [],
      approved: [{ sender: stranger.id, source: 'operator', name: 'Agent Bridge' }],
    });
    const sync = await call(agent, stranger, 'sync', 'now approved');
    expect(sync.status, sync.text).toBe(200);
    expect(sync.json.result).toEqual({ reply: 'echo: now approved', channel: 'samvad' });
    const stream = await call(agent, stranger, 'stream', 'streamed');
    expect(stream.status).toBe(200);
    expect(stream.text).toContain('echo: streamed');
    const accepted = await call(agent, stranger, 'async', 'tasked');
    expect(accepted.status).toBe(202);
    await until(async () => (await task(agent, accepted.json.taskId as string)).status === 'done');
  });

  it('async: 202, the task stays pending while held, then runs when the operator approves', async () => {
    const agent = await withPolicy('pairing');
    const stranger = await senders.start();
    const events: AccessChange[] = [];
    agent.app.on('access', (change) => events.push(change));
    gateway.requests.length = 0;
    const accepted = await call(agent, stranger, 'async', 'please wait for me');
    expect(accepted.status, accepted.text).toBe(202);
    expectSignedBy(agent.app, accepted);
    const taskId = accepted.json.taskId as string;
    expect(await task(agent, taskId)).toEqual({ taskId, status: 'pending' });
    expect(agent.app.access.view().pending[0]?.heldTasks).toBe(1);
    expect(events.filter((e) => e.kind === 'new-sender')).toEqual([
      { kind: 'new-sender', pending: expect.objectContaining({ sender: stranger.id, count: 1 }) },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await task(agent, taskId)).toEqual({ taskId, status: 'pending' });
    expect(forwarded('please wait for me')).toBe(false);

    expect(agent.app.access.approve(stranger.id)).toBe(1);
    await until(async () => (await task(agent, taskId)).status === 'done', 3000, 'the held task to run');
    expect(await task(agent, taskId)).toEqual({
      taskId,
      status: 'done',
      result: { reply: 'echo: please wait for me', channel: 'samvad' },
    });
    expect(forwarded('please wait for me')).toBe(true);
  });

  it('a held task keeps only the envelope fields it runs with, on disk, and nothing in memory', async () => {
    const agent = await withPolicy('pairing');
    const stranger = await senders.start();
    const padding = 'p'.repeat(100_000);
    const accepted = await call(agent, stranger, 'async', 'keep me small', {
      auth: { scheme: 'bearer', token: 'caller-secret-token' },
      ...({ extra: padding } as object),
    });
    expect(accepted.status, accepted.text).toBe(202);
    const taskId = accepted.json.taskId as string;
    const file = readFileSync(join(agent.dataDir, 'tasks', `${taskId}.json`), 'utf8');
    expect(file).toContain('keep me small');
    expect(file).not.toContain('caller-secret-token');
    expect(file).not.toContain(padding);
    expect(file.length).toBeLessThan(5000);
    expect((await agent.app.server.tasks.get(taskId))?.held).not.toHaveProperty('envelope');
    agent.app.access.approve(stranger.id);
    await until(async () => (await task(agent, taskId)).status === 'done', 3000, 'the held task to run');
    expect((await task(agent, taskId)).result).toEqual({ reply: 'echo: keep me small', channel: 'samvad' });
  });

  it('deny: held tasks fail with AUTH_FAILED, and the sender is refused without re-entering the list', async () => {
    const agent = await withPolicy('pairing');
    const stranger = await senders.start();
    const accepted = await call(agent, stranger, 'async', 'not welcome');
    const taskId = accepted.json.taskId as string;
    expect(agent.app.access.deny(stranger.id)).toBe(1);
    expect(await task(agent, taskId)).toEqual({
      taskId,
      status: 'failed',
      error: { code: 'AUTH_FAILED', message: "This agent's operator declined the sender of this task." },
    });
    const again = await call(agent, stranger, 'sync');
    expectError(again, 403, 'AUTH_FAILED', /operator declined .* do not retry before/);
    expect(agent.app.access.view().pending).toEqual([]);
    expect(forwarded('not welcome')).toBe(false);
  });

  it('expiry: an unanswered request leaves the list and its held task fails', async () => {
    let now = Date.now();
    const agent = await withPolicy('pairing', { pendingExpiryHours: 1 }, { now: () => now });
    const stranger = await senders.start();
    const accepted = await call(agent, stranger, 'async', 'too late');
    const taskId = accepted.json.taskId as string;
    now += 3600_000 + 1;
    expect(agent.app.access.view().pending).toEqual([]);
    expect(await task(agent, taskId)).toMatchObject({
      status: 'failed',
      error: {
        code: 'AUTH_FAILED',
        message: expect.stringMatching(/not approved .* in time; the request expired/),
      },
    });
  });

  it('bounds: at most 3 held tasks per sender, and at most N senders waiting (then refused, not evicted)', async () => {
    const agent = await withPolicy('pairing', {}, { accessLimits: { maxPending: 2, maxHeldPerSender: 3 } });
    const [a, b, c] = [await senders.start(), await senders.start(), await senders.start()];
    for (let i = 0; i < 3; i++) expect((await call(agent, a, 'async')).status).toBe(202);
    expectError(await call(agent, a, 'async'), 403, 'AUTH_FAILED', /already has 3 tasks waiting/);
    expect((await call(agent, b, 'sync')).status).toBe(403);
    const full = await call(agent, c, 'sync');
    expectError(full, 403, 'AUTH_FAILED', /too many requests waiting/);
    expect(full.headers.get('retry-after')).toBe('3600');
    const view = agent.app.access.view();
    expect(view.pending.map((p) => p.sender).sort()).toEqual([a.id, b.id].sort());
    expect(view.refusedWhileFull).toBe(1);
    expect(view.pending.find((p) => p.sender === a.id)?.heldTasks).toBe(3);
  });

  it('a forged or unsigned sender never enters the list', async () => {
    const agent = await withPolicy('pairing', { allowUnsigned: true });
    const stranger = await senders.start();
    const impostor = await senders.start();
    // Signed by another agent's key, claiming the stranger's id.
    const env = envelope(stranger.id, agent.id, 'sync', { message: 'forged' });
    const forged = await post(agent.url, PATHS.sync, sign(env, impostor.app.keys.signer));
    expectError(forged, 401, 'AUTH_FAILED');
    const unsigned = await post(agent.url, PATHS.sync, {
      body: JSON.stringify({ skill: 'chat', payload: { message: 'no signature' } }),
      headers: { 'content-type': 'application/json' },
    });
    expectError(unsigned, 401, 'AUTH_FAILED', /unsigned calls are refused: sign your envelope/);
    expect(agent.app.access.view().pending).toEqual([]);
  });

  it('a new sender reaches the list within its rate limit; once waiting, its calls are refused before any limit', async () => {
    const agent = await withPolicy('pairing', { perSender: 1 });
    const [first, second] = [await senders.start(), await senders.start()];
    // The first call of each spends its own allowance: one a minute here.
    expect((await call(agent, first, 'async')).status).toBe(202);
    expectError(await call(agent, first, 'async'), 429, 'RATE_LIMITED', /per-sender limit/);
    // Asking again without a task to hold is refused from memory: no allowance, counted on the request.
    expectError(await call(agent, first, 'sync'), 403, 'AUTH_FAILED', /not yet approved/);
    expect((await call(agent, second, 'sync')).status).toBe(403);
    expect(agent.app.access.view().pending.find((p) => p.sender === first.id)).toMatchObject({
      count: 2,
      heldTasks: 1,
    });
  });

  it('our own id is always allowed (the self-test)', async () => {
    const agent = await withPolicy('pairing');
    const reply = await call(agent, agent, 'sync', 'self');
    expect(reply.status, reply.text).toBe(200);
    expect(agent.app.access.view().pending).toEqual([]);
  });

  it('allowedPeers count as approved; revoking an approval makes the sender wait again', async () => {
    const friend = await senders.start();
    const agent = await withPolicy('pairing', { allowedPeers: [friend.id] });
    expect((await call(agent, friend, 'sync')).status).toBe(200);
    expect(agent.app.access.view().approved).toEqual([{ sender: friend.id, source: 'allowed-peers' }]);
    expect(() => agent.app.access.revoke(friend.id)).toThrow(/allowedPeers setting/);

    const stranger = await senders.start();
    agent.app.access.approve(stranger.id);
    expect((await call(agent, stranger, 'sync')).status).toBe(200);
    agent.app.access.revoke(stranger.id);
    expectError(await call(agent, stranger, 'sync'), 403, 'AUTH_FAILED', /not yet approved/);
  });

  it('approvals and held tasks survive a restart', async () => {
    const agent = await withPolicy('pairing');
    const [approved, waiting] = [await senders.start(), await senders.start()];
    agent.app.access.approve(approved.id);
    const held = await call(agent, waiting, 'async', 'held across a restart');
    const taskId = held.json.taskId as string;
    await agent.stop();

    const again = await withPolicy('pairing', {}, { dataDir: agent.dataDir });
    expect((await call(again, approved, 'sync')).status).toBe(200);
    expect(again.app.access.view().pending.map((p) => p.sender)).toEqual([waiting.id]);
    expect(await task(again, taskId)).toEqual({ taskId, status: 'pending' });
    again.app.access.approve(waiting.id);
    await until(async () => (await task(again, taskId)).status === 'done', 3000, 'the held task to run');
  });
});

describe('allowlist and open', () => {
  it.each(MODES)('allowlist, %s: a stranger is refused without entering the list', async (mode) => {
    const agent = await withPolicy('allowlist');
    const stranger = await senders.start();
    const reply = await call(agent, stranger, mode);
    expectError(reply, 403, 'AUTH_FAILED', /accepts calls only from senders its operator approved/);
    expect(agent.app.access.view().pending).toEqual([]);
    agent.app.access.approve(stranger.id);
    expect((await call(agent, stranger, mode)).status).toBe(mode === 'async' ? 202 : 200);
  });

  it.each(MODES)(
    'open, %s: any verified sender is admitted (and the log says by which rule)',
    async (mode) => {
      const agent = await withPolicy('open');
      const stranger = await senders.start();
      const entries: { admittedBy?: string; verdict: string }[] = [];
      agent.app.on('envelope', (e) => entries.push(e));
      const reply = await call(agent, stranger, mode);
      expect(reply.status).toBe(mode === 'async' ? 202 : 200);
      await until(() => entries.length > 0);
      expect(entries[0]).toMatchObject({ verdict: 'accepted', admittedBy: 'open' });
      expect(agent.app.access.view().pending).toEqual([]);
    },
  );

  it('switching the policy applies at once', async () => {
    const agent = await withPolicy('open');
    const stranger = await senders.start();
    expect((await call(agent, stranger, 'sync')).status).toBe(200);
    agent.app.updateSettings({ access: 'pairing' });
    expect((await call(agent, stranger, 'sync')).status).toBe(403);
  });
});
