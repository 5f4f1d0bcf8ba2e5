import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { A2AKeys } from '../../src/access/a2a-keys.js';
import type { A2AKeysResponse } from '../../src/protocol/console-api.js';
import { RedisA2AKeyRecords } from '../../src/state/redis-a2a-key-store.js';
import { RedisConnection } from '../../src/state/redis-connection.js';
import { startRedisServer } from '../fixtures/redis-server.js';
import { tempDir } from '../helpers/agents.js';
import { freePort, startChildAgent, type ChildAgent } from '../helpers/child-agent.js';
import { until } from '../helpers/polling.js';

// `agent-bridge keys` as the operator runs it: the real CLI in a child process, against an agent running
// on the same data dir (a child too), against a data dir no agent runs on, and against a real redis-server.
const ROOT = resolve(import.meta.dirname, '../..');
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function keys(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'keys', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((done) => child.on('close', (code) => done({ code, stdout, stderr })));
}

function dataDir(): string {
  const dir = tempDir('keys-cli-');
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function startAgentOn(dir: string): Promise<ChildAgent> {
  const port = await freePort();
  const agent = await startChildAgent([
    ...['--port', String(port), '--data-dir', dir, '--tunnel', 'none', '--console-port', '0'],
  ]);
  cleanups.push(() => agent.process.exitCode === null && agent.process.kill('SIGKILL'));
  await until(() => agent.output().includes('Access:'), 15_000, `the start output:\n${agent.output()}`);
  return agent;
}

/** The running agent's own list, through its console. */
async function consoleList(dir: string): Promise<A2AKeysResponse['keys']> {
  const { url, token } = JSON.parse(readFileSync(join(dir, 'console.json'), 'utf8')) as Record<
    string,
    string
  >;
  const response = await fetch(`${url}/api/a2a/keys`, { headers: { Authorization: `Bearer ${token}` } });
  return ((await response.json()) as A2AKeysResponse).keys;
}

const secretOf = (run: Run) => /^ {2}(abk_[0-9a-f]{12}_[A-Za-z0-9_-]{43})$/m.exec(run.stdout)?.[1] ?? '';

describe('agent-bridge keys', () => {
  it('changes the keys through the console of the agent running on the data dir: there at once', async () => {
    const dir = dataDir();
    const agent = await startAgentOn(dir);
    const issued = await keys([
      ...['issue', '--name', 'Research agent', '--expires', '30d', '--rpm', '5'],
      ...['--tokens-per-day', '20000', '--skills', 'chat', '--data-dir', dir],
    ]);
    expect(issued.stderr).toMatch(
      /^Issued through the running agent's console \(http:\/\/127\.0\.0\.1:\d+\)/,
    );
    expect(issued.code).toBe(0);
    const secret = secretOf(issued);
    expect(secret).not.toBe('');
    expect(issued.stdout).toContain('Copy it now: it is not shown again');
    expect(issued.stdout).toContain('opens only chat');
    expect(issued.stdout).toContain(`  Authorization: Bearer ${secret}`);
    const [key] = await consoleList(dir);
    expect(key).toMatchObject({
      name: 'Research agent',
      status: 'active',
      limits: { requestsPerMinute: 5, tokensPerDay: 20_000 },
      skills: ['chat'],
    });
    expect(Date.parse(key!.expiresAt!) - Date.now()).toBeGreaterThan(29 * 86_400_000);

    const list = await keys(['list', '--data-dir', dir]);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(
      /^ID +NAME +STATUS +CREATED +LAST USED +CALLS +EXPIRES +LIMITS +SKILLS$/,
    );
    expect(list.stdout).toMatch(
      new RegExp(`^${key!.id} +Research agent +active .* 5 requests/min, 20000 tokens/day +chat$`, 'm'),
    );
    expect(list.stdout).not.toContain(secret);

    // A leaked key, pasted whole: revoked by its id, and refused by the running agent from then on.
    const revoked = await keys(['revoke', secret, '--data-dir', dir]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(new RegExp(`^Revoked the A2A key ${key!.id} \\("Research agent"\\)`));
    expect((await consoleList(dir))[0]).toMatchObject({ id: key!.id, status: 'revoked' });

    const json = JSON.parse((await keys(['list', '--json', '--data-dir', dir])).stdout) as A2AKeysResponse;
    expect(json.keys.map((each) => [each.id, each.status])).toEqual([[key!.id, 'revoked']]);
    // The key is in the issue's output only: not in the agent's, nor in any file.
    expect(agent.output()).not.toContain(secret.slice(17));
    for (const name of readdirSync(dir).filter((file) => statSync(join(dir, file)).isFile()))
      expect(readFileSync(join(dir, name), 'utf8')).not.toContain(secret.slice(17));
  }, 60_000);

  it('changes the data dir itself when no agent runs there (an old console.json too); the agent reads it at start', async () => {
    const dir = dataDir();
    // What a crashed agent leaves: the URL of a console that is gone.
    writeFileSync(
      join(dir, 'console.json'),
      JSON.stringify({ url: `http://127.0.0.1:${await freePort()}`, token: 't'.repeat(43) }),
    );
    const issued = await keys(['issue', '--name', 'Before the start', '--data-dir', dir]);
    expect(issued.code).toBe(0);
    expect(issued.stderr).toContain(
      `Issued in ${join(dir, 'a2a-keys.json')} (no agent answered on this data dir`,
    );
    expect(statSync(join(dir, 'a2a-keys.json')).mode & 0o777).toBe(0o600);
    await startAgentOn(dir);
    expect((await consoleList(dir)).map((key) => key.name)).toEqual(['Before the start']);
    // Now one runs: the next change goes through it.
    const second = await keys(['issue', '--name', 'After the start', '--json', '--data-dir', dir]);
    expect(second.stderr).toMatch(/^Issued through the running agent's console/);
    expect(JSON.parse(second.stdout)).toMatchObject({
      key: { name: 'After the start' },
      secret: expect.any(String),
    });
    expect((await consoleList(dir)).map((key) => key.name)).toEqual(['After the start', 'Before the start']);
  }, 60_000);

  it('says what is wrong with a request, in its own flags, and changes nothing', async () => {
    const dir = dataDir();
    const bad = await keys([
      'issue',
      '--name',
      '',
      '--rpm',
      '0',
      '--tokens-per-day',
      'lots',
      '--data-dir',
      dir,
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      'agent-bridge: The key was not issued: --name must be one line of 1 to 100 characters: the agent the key is for; ' +
        '--rpm must be a whole number from 1 to 1,000,000; leave it out for the default; --tokens-per-day must be a ' +
        'whole number from 1 to 1,000,000,000; leave it out for the default.\n',
    );
    expect((await keys(['issue', '--data-dir', dir])).stderr).toMatch(/Name the agent the key is for/);
    // A scope names the skills of the agent on this data dir (its saved settings): chat alone here.
    expect(
      (await keys(['issue', '--name', 'x', '--skills', 'chat,research', '--data-dir', dir])).stderr,
    ).toBe(
      'agent-bridge: The key was not issued: --skills names "research", which is not a skill of this agent: use chat.\n',
    );
    expect((await keys(['issue', '--name', 'x', '--expires', 'soon', '--data-dir', dir])).stderr).toMatch(
      /--expires takes a span \(12h, 30d, 2w, 1y\) or a date/,
    );
    expect((await keys(['revoke', 'ffffffffffff', '--data-dir', dir])).stderr).toBe(
      'agent-bridge: No A2A key has the id ffffffffffff. Pick a key from the list (GET /api/a2a/keys, or `agent-bridge keys list`).\n',
    );
    expect((await keys(['list', '--rpm', '3', '--data-dir', dir])).stderr).toMatch(
      /--rpm applies to "keys issue" only/,
    );
    expect((await keys(['list', '--data-dir', dir])).stdout).toMatch(/^No A2A keys yet/);
    const help = await keys(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: agent-bridge keys <list \| issue \| revoke>/);
    expect(help.stdout).toContain('<data dir>/console.json');
  }, 60_000);

  it('changes the keys in Redis when no agent runs on the data dir: every replica refuses a revoked key', async () => {
    const redis = await startRedisServer();
    cleanups.push(() => redis.close());
    const connection = new RedisConnection({ url: redis.url });
    await connection.connect();
    cleanups.push(() => connection.disconnect());
    // A replica running elsewhere, whose clock stands still: only the announcement can tell it.
    const replica = new A2AKeys({
      records: new RedisA2AKeyRecords(connection),
      now: () => 1_900_000_000_000,
    });
    cleanups.push(() => replica.close());
    const dir = dataDir();
    const issued = await keys(['issue', '--name', 'Shared', '--data-dir', dir], { REDIS_URL: redis.url });
    expect(issued.code).toBe(0);
    expect(issued.stderr).toMatch(/^Issued in Redis at redis:\/\/127\.0\.0\.1:\d+\/0 \(no agent answered/);
    const secret = secretOf(issued);
    expect((await replica.verify(secret)).ok).toBe(true);
    const [key] = await replica.list();
    const revoked = await keys(['revoke', key!.id, '--data-dir', dir, '--redis-url', redis.url]);
    expect(revoked.code).toBe(0);
    await until(async () => !(await replica.verify(secret)).ok, 1000, 'the revocation at the replica');
    expect(readdirSync(dir)).not.toContain('a2a-keys.json');
  }, 60_000);
});
