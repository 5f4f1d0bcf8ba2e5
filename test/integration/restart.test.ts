import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { freePort, startChildAgent, type ChildAgent } from '../helpers/child-agent.js';
import { envelope, post, sign } from '../helpers/envelopes.js';
import { expectError } from '../helpers/verify.js';

// Replays must be refused across restarts, clean and after kill -9; tasks cut short become `failed`.
// The agent runs as a real child process of the CLI so that SIGKILL is a real crash.
let gateway: GatewayDouble;
let peer: TestAgent;
const dirs: string[] = [];
const children: ChildAgent[] = [];

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: 'gw-token-123' });
  peer = await startAgent();
});

afterAll(async () => {
  for (const child of children) child.process.kill('SIGKILL');
  await peer.close();
  await gateway.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function launch(dataDir: string, port: number, access = 'open'): Promise<ChildAgent> {
  const child = await startChildAgent([
    '--data-dir',
    dataDir,
    '--port',
    String(port),
    '--dev-http-peers',
    '--tunnel',
    'none',
    '--gateway-url',
    gateway.url,
    '--gateway-token',
    'gw-token-123',
    '--shutdown-grace',
    '1',
    // The sender's consent is tested in access-policy.test.ts; here, replays and tasks across restarts.
    '--access',
    access,
    '--console-port',
    '0',
  ]);
  children.push(child);
  return child;
}

describe.each([
  ['a clean stop (SIGTERM)', 'SIGTERM'],
  ['a crash (SIGKILL)', 'SIGKILL'],
] as const)('after %s', (_name, signal) => {
  it('refuses the replay of an envelope accepted before, and fails the task that was running', async () => {
    const dataDir = tempDir();
    dirs.push(dataDir);
    const port = await freePort();
    const first = await launch(dataDir, port);
    const id = `agent://127.0.0.1:${port}`;

    const signed = sign(envelope(peer.id, id, 'sync', { message: 'once' }), peer.app.keys.signer);
    const accepted = await post(first.url, '/agent/message', signed);
    expect(accepted.status, accepted.text).toBe(200);

    gateway.set({ behaviour: 'hang' });
    const task = await post(
      first.url,
      '/agent/task',
      sign(envelope(peer.id, id, 'async', { message: 'long' }), peer.app.keys.signer),
    );
    expect(task.status).toBe(202);
    await waitForStatus(first.url, task.json.taskId as string, 'running');

    first.process.kill(signal);
    expect(await first.exited).toBe(signal === 'SIGTERM' ? '0' : 'SIGKILL');
    gateway.set({ behaviour: 'ok' });

    const second = await launch(dataDir, port);
    expectError(await post(second.url, '/agent/message', signed), 401, 'REPLAY_DETECTED');
    const record = (await (await fetch(`${second.url}/agent/task/${task.json.taskId}`)).json()) as Record<
      string,
      unknown
    >;
    expect(record).toMatchObject({ status: 'failed', error: { code: 'AGENT_UNAVAILABLE' } });
    // The same identity came back: a fresh envelope from the same sender is accepted.
    const fresh = await post(
      second.url,
      '/agent/message',
      sign(envelope(peer.id, id, 'sync', { message: 'again' }), peer.app.keys.signer),
    );
    expect(fresh.status, fresh.text).toBe(200);
    second.process.kill('SIGTERM');
    expect(await second.exited).toBe('0');
  });
});

describe("the operator's approvals", () => {
  it('survive a crash (SIGKILL) right after the approval', async () => {
    const dataDir = tempDir();
    dirs.push(dataDir);
    const port = await freePort();
    const first = await launch(dataDir, port, 'pairing');
    const id = `agent://127.0.0.1:${port}`;
    const call = (mode: 'sync' | 'async', message: string) =>
      post(first.url, mode === 'sync' ? '/agent/message' : '/agent/task', {
        ...sign(envelope(peer.id, id, mode, { message }), peer.app.keys.signer),
      });
    expectError(await call('sync', 'may I?'), 403, 'AUTH_FAILED', /not yet approved/);

    // The operator approves through the console, as the Access page does; then the process is killed.
    const consoleFile = JSON.parse(readFileSync(join(dataDir, 'console.json'), 'utf8')) as {
      url: string;
      token: string;
    };
    const approved = await fetch(`${consoleFile.url}/api/access/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${consoleFile.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sender: peer.id }),
    });
    expect(approved.status).toBe(200);
    first.process.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    const second = await launch(dataDir, port, 'pairing');
    const fresh = await post(
      second.url,
      '/agent/message',
      sign(envelope(peer.id, id, 'sync', { message: 'approved before the crash' }), peer.app.keys.signer),
    );
    expect(fresh.status, fresh.text).toBe(200);
    second.process.kill('SIGTERM');
    expect(await second.exited).toBe('0');
  });
});

async function waitForStatus(url: string, taskId: string, status: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const record = (await (await fetch(`${url}/agent/task/${taskId}`)).json()) as { status: string };
    if (record.status === status) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`task never became ${status}`);
}
