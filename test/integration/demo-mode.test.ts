// `npm run serve -- --demo` as a new user runs it (issue 26): one command, no gateway, and an agent, a console
// and traffic that work, each saying "demo". The real CLI in a child process; a call signed with the demo
// agent's own key (its data dir), as `agent-bridge call --demo` signs it.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../src/client/index.js';
import { KeyStore } from '../../src/keys/keystore.js';
import type { StatusResponse, TrafficResponse } from '../../src/protocol/console-api.js';
import { tempDir } from '../helpers/agents.js';
import { freePort, startChildAgent, type ChildAgent } from '../helpers/child-agent.js';
import { until } from '../helpers/polling.js';

const ROOT = resolve(import.meta.dirname, '../..');
const base = tempDir('agent-bridge-demo-');
// No OpenClaw here: HOME is the test's own folder, so nothing of a real ~/.openclaw is read.
const env = { AGENT_BRIDGE_DATA_DIR: base, HOME: base };
let child: ChildAgent;
let port: number;

beforeAll(async () => {
  port = await freePort();
  child = await startChildAgent(['--demo', '--port', String(port), '--console-port', '0'], env);
  await until(() => child.output().includes('  Access:'), 15_000, 'the start banner');
}, 30_000);

afterAll(() => {
  if (child?.process.exitCode === null) child.process.kill('SIGKILL');
  rmSync(base, { recursive: true, force: true });
});

const demoDir = join(base, 'demo');
const id = () => `agent://127.0.0.1:${port}`;

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const { url, token } = JSON.parse(readFileSync(join(demoDir, 'console.json'), 'utf8')) as Record<
    string,
    string
  >;
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as T };
}

describe('serve --demo', () => {
  it('says in its banner that it is a demo, how to call it, and keeps a data dir of its own', () => {
    const output = child.output();
    expect(output).toContain(
      '\n  Demo:       a built-in stand-in gateway answers every call, and says so: no model is behind the replies\n',
    );
    expect(output).toContain(`\n  Call it:    npx agent-bridge call --demo ${id()} "Hello"`);
    expect(output).toContain(`\n  Agent id:   ${id()}\n`);
    expect(output).toContain(`\n  Data dir:   ${demoDir}\n`);
    expect(output).toContain('\n  Gateway:    answering; callers reach agent "public"\n');
    // A demo is local: no tunnel unless --tunnel asks for one.
    expect(output).not.toContain('Tunnel:');
  });

  it('says "demo" on both cards and in the console status; its agent for callers checks as restricted', async () => {
    const samvad = (await (await fetch(`${child.url}/.well-known/agent.json`)).json()) as {
      description: string;
    };
    expect(samvad.description).toMatch(/^DEMO: this agent answers from Agent Bridge's built-in demo gateway/);
    const a2a = (await (await fetch(`${child.url}/.well-known/agent-card.json`)).json()) as {
      description: string;
    };
    expect(a2a.description).toBe(samvad.description);
    const { json: status } = await api<StatusResponse>('GET', '/api/status');
    expect(status.demo).toBe(true);
    expect(status.tunnel).toMatchObject({ status: 'off', provider: 'none' });
    expect(status.gateway.agent).toMatchObject({ id: 'public', check: 'present' });
    expect(status.gateway.agent.tools.verdict).toBe('restricted');
  });

  it("answers a call signed with the demo agent's own key with a labelled reply, and shows it in Traffic", async () => {
    const keys = KeyStore.open(demoDir, { cardTTLSeconds: 300 });
    const client = new AgentClient({ id: id(), signer: keys.signer, devHttp: true });
    const reply = await client.call(id(), 'chat', { message: 'Hello' });
    expect(reply).toMatchObject({ status: 200, verified: true });
    const result = (reply.body as { result: { reply: string } }).result;
    expect(result.reply).toMatch(/^\[demo\] No model is behind this reply: .*\("Hello", 5 characters\)/);
    await until(
      async () => (await api<TrafficResponse>('GET', '/api/traffic')).json.total > 0,
      5000,
      'traffic',
    );
    const { json: traffic } = await api<TrafficResponse>('GET', '/api/traffic');
    expect(traffic.entries[0]).toMatchObject({
      sender: id(),
      skill: 'chat',
      verdict: 'accepted',
      status: 200,
    });
  });

  it('keeps its gateway and its description while it runs: the console cannot change them', async () => {
    const gateway = await api<{ error: { message: string; fix: string } }>('PUT', '/api/settings', {
      gatewayUrl: 'http://127.0.0.1:18789',
    });
    expect(gateway.status).toBe(403);
    expect(gateway.json.error.message).toBe(
      'This is a demo run: it keeps gatewayUrl as --demo set it while it runs; nothing was saved.',
    );
    expect(gateway.json.error.fix).toMatch(/start Agent Bridge without --demo/);
    const card = await api('PUT', '/api/settings', { agentDescription: 'My real agent' });
    expect(card.status).toBe(403);
    // Anything else is the operator's to try, as in a real run.
    expect((await api('PUT', '/api/settings', { rpm: 30 })).status).toBe(200);
  });

  it('stops on Ctrl-C like a real run', async () => {
    child.process.kill('SIGINT');
    expect(await child.exited).toBe('0');
    expect(child.output().endsWith('\nAgent Bridge stopped.\n')).toBe(true);
  });
});

describe('serve --demo with a real gateway', () => {
  const run = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    new Promise<{ code: number | null; output: string }>((done) => {
      const process_ = spawn(
        process.execPath,
        ['--import', 'tsx', 'src/cli.ts', 'serve', '--demo', ...args],
        {
          cwd: ROOT,
          env: { PATH: process.env.PATH, ...env, ...extra },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      process_.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      process_.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      process_.on('close', (code) => done({ code, output }));
    });

  it('refuses to start, and says which flag or variable to drop', async () => {
    const flagged = await run(['--gateway-url', 'http://127.0.0.1:18789', '--port', '0']);
    expect(flagged.code).toBe(1);
    expect(flagged.output).toBe(
      'agent-bridge: --demo brings its own stand-in gateway, so it cannot be combined with --gateway-url: ' +
        'drop --gateway-url to try the demo, or drop --demo to bridge your gateway.\n',
    );
    const fromEnv = await run(['--port', '0'], { GATEWAY_TOKEN: 'a-real-token' });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.output).toMatch(
      /cannot be combined with GATEWAY_TOKEN: unset GATEWAY_TOKEN to try the demo/,
    );
  }, 30_000);
});
