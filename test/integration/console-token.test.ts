// The console token outlives a restart (issue 16: an open tab stopped working after every restart): it is kept
// in console.json (0600, written atomically) until the operator asks for a new one, in the console (POST
// /api/console/token) or at start (--new-console-token). A new one shuts every earlier holder out at once,
// event streams included. A real agent and console on loopback; the CLI as a child process.
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { freePort, startChildAgent } from '../helpers/child-agent.js';
import { until } from '../helpers/polling.js';
import { readSse } from '../helpers/sse.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function openConsole(agent: TestAgent, newToken = false): Promise<ConsoleHandle> {
  const store = openSettingsStore(agent.dataDir);
  return startConsole({ app: agent.app, store, dataDir: agent.dataDir, port: 0, newToken });
}

const status = (con: { url: string }, token: string) =>
  fetch(`${con.url}/api/status`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);

const saved = (agent: TestAgent) =>
  JSON.parse(readFileSync(join(agent.dataDir, 'console.json'), 'utf8')) as { url: string; token: string };

describe('the console token', () => {
  it('is the same after a restart, so an open tab keeps working', async () => {
    const agent = await startAgent();
    cleanups.push(() => agent.close());
    const first = await openConsole(agent);
    const token = first.token;
    await first.close();
    const second = await openConsole(agent);
    cleanups.push(() => second.close());
    expect(second.token).toBe(token);
    expect(await status(second, token)).toBe(200);
    expect(saved(agent)).toEqual({ url: second.url, token });
    expect(statSync(join(agent.dataDir, 'console.json')).mode & 0o777).toBe(0o600);
  });

  it('is replaced on request: the old one is refused at once, streams opened with it end', async () => {
    const agent = await startAgent();
    cleanups.push(() => agent.close());
    const con = await openConsole(agent);
    cleanups.push(() => con.close());
    const old = con.token;
    const stream = await fetch(`${con.url}/api/events?token=${old}`);
    const blocks = readSse(stream);
    expect((await blocks.next()).value?.event).toBe('hello');

    const answer = await fetch(`${con.url}/api/console/token`, {
      method: 'POST',
      headers: { authorization: `Bearer ${old}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(answer.status).toBe(200);
    const { token, file } = (await answer.json()) as { token: string; file: string };
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(token).not.toBe(old);
    expect(file).toBe(join(agent.dataDir, 'console.json'));
    expect(con.token).toBe(token);
    expect(saved(agent)).toEqual({ url: con.url, token });

    expect(await status(con, old)).toBe(401);
    expect(await status(con, token)).toBe(200);
    // The stream the old token opened is over.
    await expect(
      (async () => {
        for (;;) if ((await blocks.next()).done) return 'ended';
      })(),
    ).resolves.toBe('ended');
    const refused = await fetch(`${con.url}/api/events?token=${old}`);
    expect(refused.status).toBe(401);
    await refused.text();
  });

  it('is replaced at start when asked (--new-console-token), and never printed where it may be logged', async () => {
    const dataDir = tempDir('console-token-cli-');
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const args = ['--port', String(port), '--data-dir', dataDir, '--tunnel', 'none', '--console-port', '0'];
    const tokens: string[] = [];
    for (const extra of [[], [], ['--new-console-token']]) {
      const child = await startChildAgent([...args, ...extra]);
      cleanups.push(() => child.process.exitCode === null && child.process.kill('SIGKILL'));
      await until(() => child.output().includes('Access:'), 10_000, `the start output:\n${child.output()}`);
      const { token } = JSON.parse(readFileSync(join(dataDir, 'console.json'), 'utf8')) as { token: string };
      tokens.push(token);
      child.process.kill('SIGTERM');
      expect(await child.exited).toBe('0');
      expect(child.output()).not.toContain(token);
      if (extra.length > 0) expect(child.output()).toContain('A new console token: earlier links');
    }
    expect(tokens[1]).toBe(tokens[0]);
    expect(tokens[2]).not.toBe(tokens[1]);
  }, 60_000);
});
