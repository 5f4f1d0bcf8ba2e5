// The `command` tunnel provider with a real child process: a small node script (test/fixtures/fake-tunnel.mjs)
// that behaves like cloudflared or ngrok (noise, then a URL; or exiting, or printing nothing), and the real
// `lt` command-line client of the localtunnel package against the loopback tunnel server.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { appFetch } from '../../src/lib/http.js';
import { CommandProvider, DEFAULT_URL_PATTERN } from '../../src/tunnel/command-provider.js';
import { TunnelConfigError, type TunnelConnection } from '../../src/tunnel/provider.js';
import type { TunnelState } from '../../src/tunnel/state.js';
import type { AddressChange } from '../../src/tunnel/supervisor.js';
import type { Settings } from '../../src/settings/schema.js';
import { startTunnelServer } from '../fixtures/tunnel-server.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { freePort } from '../helpers/child-agent.js';
import { isAlive, until } from '../helpers/polling.js';

const FAKE_TUNNEL = resolve(dirname(fileURLToPath(import.meta.url)), '../fixtures/fake-tunnel.mjs');
const LT = createRequire(import.meta.url).resolve('localtunnel/bin/lt.js');

/** A shell command line running the fake tunnel with `args`; `{port}` is left for the provider. */
const fake = (args = '') => `"${process.execPath}" "${FAKE_TUNNEL}" --port {port} ${args}`.trim();

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function scratchDir(): string {
  const dir = tempDir('agent-bridge-command-tunnel-');
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

interface Started {
  pid: number;
  grandchild?: number;
  argv: string[];
}

/** What the fake tunnel wrote to its --pid-file: one line per start. */
function starts(pidFile: string): Started[] {
  if (!existsSync(pidFile)) return [];
  return readFileSync(pidFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Started);
}

const pidsOf = (started: Started[]) =>
  started.flatMap((s) => [s.pid, ...(s.grandchild ? [s.grandchild] : [])]);

async function open(provider: CommandProvider, port = 4321, signal = new AbortController().signal) {
  const connection = await provider.open(port, { signal });
  cleanups.push(() => connection.close());
  return connection;
}

/** The rejection of `promise` (which must reject). */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) {
    (outcome.value as TunnelConnection | undefined)?.close?.();
    throw new Error('expected a rejection');
  }
  return outcome.error as Error;
}

describe('CommandProvider', () => {
  it('reads the first https URL after the noise, with {port} substituted in the command', async () => {
    const pidFile = join(scratchDir(), 'pids');
    const connection = await open(new CommandProvider({ command: fake(`--pid-file ${pidFile}`) }), 4321);
    // The noise holds an http:// metrics URL (on stderr) that the default pattern does not take.
    expect(connection.url).toBe('https://port-4321.example.test');
    expect(starts(pidFile)[0]!.argv).toEqual(['--port', '4321', '--pid-file', pidFile]);
  });

  it('finds the URL on stderr as well', async () => {
    const connection = await open(
      new CommandProvider({ command: fake('--stderr --url https://abc123.example.test') }),
    );
    expect(connection.url).toBe('https://abc123.example.test');
  });

  it('skips links with a path by default, and takes the first line matching a configured pattern', async () => {
    const docs =
      '--banner "INF see https://developers.example.test/docs for help" --url https://quiet-fox.trycloudflare.com';
    expect((await open(new CommandProvider({ command: fake(docs) }))).url).toBe(
      'https://quiet-fox.trycloudflare.com',
    );
    const bare =
      '--banner "INF status page https://status.example.test" --url https://quiet-fox.trycloudflare.com';
    expect((await open(new CommandProvider({ command: fake(bare) }))).url).toBe(
      'https://status.example.test',
    );
    const matched = await open(
      new CommandProvider({ command: fake(bare), urlPattern: 'https://[a-z0-9-]+\\.trycloudflare\\.com' }),
    );
    expect(matched.url).toBe('https://quiet-fox.trycloudflare.com');
  });

  it('close() kills the whole process group: the command and the process it started', async () => {
    const pidFile = join(scratchDir(), 'pids');
    const connection = await open(
      new CommandProvider({ command: fake(`--grandchild --pid-file ${pidFile}`) }),
    );
    const [started] = starts(pidFile);
    expect(started?.grandchild).toEqual(expect.any(Number));
    const pids = pidsOf([started!]);
    expect(pids.map(isAlive)).toEqual([true, true]);
    connection.close();
    await until(() => pids.every((pid) => !isAlive(pid)), 2000, 'the command and its child to die');
  });

  it('does not report a tunnel it closed itself as broken', async () => {
    const connection = await open(new CommandProvider({ command: fake() }));
    connection.close();
    const outcome = await Promise.race([
      connection.broken.then((error) => `broken: ${error.message}`),
      new Promise((r) => setTimeout(() => r('not broken'), 300)),
    ]);
    // provider.ts: `broken` "never resolves after close()".
    expect(outcome).toBe('not broken');
  });

  it('a command that exits at once: open() rejects with the exit code and the last output lines', async () => {
    const error = await rejection(open(new CommandProvider({ command: fake('--mode exit --code 3') })));
    expect(error.message).toMatch(/^tunnel command exited \(code 3\); last output: /);
    expect(error.message).toContain('ERR cannot open a tunnel (exit 3)');
  });

  it('a command that exits later: `broken` resolves with the exit code and the last output lines', async () => {
    const connection = await open(
      new CommandProvider({ command: fake('--mode url-then-exit --after 150 --code 4') }),
    );
    expect(connection.url).toMatch(/^https:\/\/port-\d+\.example\.test$/);
    const error = await connection.broken;
    expect(error.message).toMatch(/^tunnel command exited \(code 4\); last output: /);
    expect(error.message).toContain('ERR connection to the edge lost');
    expect(error.message).toContain('Your url is: https://port-4321.example.test');
  });

  it('a command that prints no URL: rejects after urlTimeoutMs naming the pattern and its output, and is killed', async () => {
    const pidFile = join(scratchDir(), 'pids');
    const provider = new CommandProvider({
      command: fake(`--mode silent --pid-file ${pidFile}`),
      urlTimeoutMs: 300,
    });
    const started = Date.now();
    const error = await rejection(open(provider));
    expect(Date.now() - started).toBeLessThan(2000);
    // What it said instead is named (a tool that waits for a login prints where to log in); stdout and
    // stderr are two pipes, so their lines may come in either order.
    const [said, output] = error.message.split('; last output: ');
    expect(said).toBe(
      `tunnel command printed no URL matching ${new RegExp(DEFAULT_URL_PATTERN).source} within 0.3 s`,
    );
    expect(output?.split(' | ').sort()).toEqual([
      'INF metrics server on http://127.0.0.1:20241/metrics',
      'INF requesting a new tunnel...',
      `fake-tunnel ${pidsOf(starts(pidFile))[0]} starting for local port 4321`,
    ]);
    const pids = pidsOf(starts(pidFile));
    expect(pids).toHaveLength(1);
    await until(() => !isAlive(pids[0]!), 2000, 'the silent command to die');
  });

  it('a command that cannot start: rejects with the shell exit code and its complaint', async () => {
    const error = await rejection(
      open(new CommandProvider({ command: 'no-such-tunnel-command-for-agent-bridge --port {port}' })),
    );
    expect(error.message).toMatch(/^tunnel command exited \(code 127\); last output: .*not found/);
  });

  it('reads the output that arrives after the exit is reported, so the complaint is never lost', async () => {
    // The exit and the last output race (the flaky "not found" above): here the output is late for sure.
    const error = await rejection(
      open(new CommandProvider({ command: `(sleep 0.2; echo "ERR late complaint" >&2) & exit 3` })),
    );
    expect(error.message).toBe('tunnel command exited (code 3); last output: ERR late complaint');
  });

  it('stops waiting and kills the command when cancelled', async () => {
    const pidFile = join(scratchDir(), 'pids');
    const provider = new CommandProvider({
      command: fake(`--mode silent --grandchild --pid-file ${pidFile}`),
    });
    const controller = new AbortController();
    const opening = rejection(open(provider, 4321, controller.signal));
    await until(() => starts(pidFile).length === 1, 3000, 'the command to start');
    controller.abort();
    expect((await opening).message).toBe('cancelled');
    const pids = pidsOf(starts(pidFile));
    await until(() => pids.every((pid) => !isAlive(pid)), 2000, 'the command and its child to die');
  });

  it('runs the real `lt` client: with a pattern for its http URL, the tunnel reaches the local port', async () => {
    const server = await startTunnelServer();
    cleanups.push(() => server.close());
    const agent = await startAgent();
    cleanups.push(() => agent.close());
    const provider = new CommandProvider({
      command: `"${process.execPath}" "${LT}" --port {port} --host ${server.url}`,
      urlPattern: 'http://[a-z0-9]+\\.localhost:\\d+',
    });
    const connection = await open(provider, Number(new URL(agent.url).port));
    expect(connection.url).toMatch(/^http:\/\/[a-z0-9]+\.localhost:\d+$/);
    await server.waitForClient(new URL(connection.url).hostname.split('.')[0]);
    const response = await appFetch(`${connection.url}/agent/health`);
    expect(response.status).toBe(200);
    await response.arrayBuffer();
  });

  it('refuses an empty command and a pattern that is not a regular expression', () => {
    expect(() => new CommandProvider({ command: '   ' })).toThrow(TunnelConfigError);
    expect(() => new CommandProvider({ command: '' })).toThrow(/needs a command: set --tunnel-command/);
    expect(() => new CommandProvider({ command: 'x', urlPattern: '(' })).toThrow(TunnelConfigError);
  });
});

describe('the app with a command tunnel', () => {
  interface Watched {
    agent: TestAgent;
    states: TunnelState[];
    addresses: AddressChange[];
  }

  async function commandAgent(settings: Partial<Settings>): Promise<Watched> {
    const agent = await startAgent({
      settings: { tunnel: 'command', ...settings },
      tunnel: {
        backoff: { initialMs: 100, maxMs: 400 },
        random: () => 1,
        checkIntervalMs: 60_000,
        recheckDelayMs: 20,
      },
    });
    cleanups.push(() => agent.close());
    const watched: Watched = { agent, states: [], addresses: [] };
    agent.app.on('tunnel', (state) => watched.states.push(state));
    agent.app.on('address', (change) => watched.addresses.push(change));
    return watched;
  }

  const localHealth = async (agent: TestAgent) => {
    const response = await appFetch(`${agent.app.localUrl}/agent/health`);
    await response.arrayBuffer();
    return response.status;
  };

  it('an empty command: the tunnel event says failed with the reason; the agent keeps serving', async () => {
    const { agent, states } = await commandAgent({ tunnelCommand: '' });
    agent.app.publicAddress.startTunnel(); // again, now that this test listens
    expect(states).toEqual([{ status: 'failed', reason: expect.stringMatching(/needs a command/) }]);
    expect(await localHealth(agent)).toBe(200);
  });

  it('an empty command: the tunnel state reads failed with the reason, not off', async () => {
    const { agent } = await commandAgent({ tunnelCommand: '' });
    expect(agent.app.tunnelState).toEqual({
      status: 'failed',
      reason: expect.stringMatching(/^The command tunnel needs a command/),
    });
  });

  it('restarts an unreachable command with a fresh process each time, paced by the backoff; stopTunnel kills it', async () => {
    const pidFile = join(scratchDir(), 'pids');
    const dead = await freePort();
    const { agent, states, addresses } = await commandAgent({
      tunnelCommand: fake(`--url https://p{port}.localhost:${dead} --grandchild --pid-file ${pidFile}`),
    });
    const port = new URL(agent.app.localUrl).port;
    const url = `https://p${port}.localhost:${dead}`;
    const reconnecting = () =>
      states.filter(
        (s): s is Extract<TunnelState, { status: 'reconnecting' }> => s.status === 'reconnecting',
      );
    await until(() => reconnecting().length >= 3, 5000, 'three reconnects');
    expect(addresses[0]).toEqual({ url, previous: undefined });
    // "Running" is not "reachable": the printed URL does not serve this agent's card.
    expect(reconnecting()[0]!.lastError).toBe(
      `public URL is not reachable: ${url}/.well-known/agent.json did not answer: the connection failed (ECONNREFUSED). ` +
        'Whatever serves the public URL is not passing calls on: the agent reconnects the tunnel by itself after a second failed check; ' +
        'if it keeps failing, stop and start the tunnel (Overview → Tunnel), or if you set the public URL yourself (--public-url, or Settings → Tunnel), check it',
    );
    expect(
      reconnecting()
        .map((s) => s.attempt)
        .slice(0, 3),
    ).toEqual([2, 3, 4]);
    expect(await localHealth(agent)).toBe(200);

    // One process per attempt (each with the agent port), and each failed one killed with its child.
    await until(() => starts(pidFile).length >= 3, 3000, 'three starts');
    const started = starts(pidFile);
    expect(new Set(started.map((s) => s.pid)).size).toBe(started.length);
    expect(started.every((s) => s.argv[1] === port)).toBe(true);
    const before = starts(pidFile).slice(0, reconnecting().length);
    await until(() => pidsOf(before).every((pid) => !isAlive(pid)), 2000, 'failed attempts to be killed');

    agent.app.publicAddress.stopTunnel();
    expect(agent.app.tunnelState).toEqual({ status: 'off' });
    const all = pidsOf(starts(pidFile));
    await until(() => all.every((pid) => !isAlive(pid)), 2000, 'every tunnel process to die');
    const count = starts(pidFile).length;
    await new Promise((r) => setTimeout(r, 300));
    expect(starts(pidFile)).toHaveLength(count);
  });

  it('uses the configured tunnelUrlPattern (cloudflared prints a docs URL before the tunnel URL)', async () => {
    const { addresses } = await commandAgent({
      tunnelCommand: fake(
        '--banner "INF see https://developers.cloudflare.com/cloudflare-one/ for named tunnels" --url https://quiet-fox.trycloudflare.com',
      ),
      tunnelUrlPattern: 'https://[a-z0-9-]+\\.trycloudflare\\.com',
    });
    await until(() => addresses.length > 0, 3000, 'an address');
    expect(addresses[0]!.url).toBe('https://quiet-fox.trycloudflare.com');
  });

  it('runs the real `lt` client as the command and goes online, reachable, through the loopback server', async () => {
    const server = await startTunnelServer();
    cleanups.push(() => server.close());
    const { agent, states } = await commandAgent({
      tunnelCommand: `"${process.execPath}" "${LT}" --port {port} --host ${server.url}`,
      tunnelUrlPattern: 'http://[a-z0-9]+\\.localhost:\\d+',
    });
    await until(() => agent.app.tunnelState.status === 'online', 3000, 'online');
    const url = agent.app.agentUrl;
    expect(url).toMatch(/^http:\/\/[a-z0-9]+\.localhost:\d+$/);
    const card = (await (await appFetch(`${url}/.well-known/agent.json`)).json()) as { id: string };
    expect(card.id).toBe(`agent://${new URL(url).host}`);
    expect(states.some((s) => s.status === 'reconnecting')).toBe(false);
  });
});
