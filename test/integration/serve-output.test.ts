// What `npm run serve` prints, as a new user reads it (issue 16): the start banner whole, and only then the
// tunnel's progress (it connects while the banner is printed); Ctrl-C ends with a line saying it stopped,
// printed once the traffic log is on disk. The real CLI in a child process, with the real localtunnel client
// against the loopback tunnel server and the gateway double.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startTunnelServer, type TunnelServer } from '../fixtures/tunnel-server.js';
import { tempDir } from '../helpers/agents.js';
import { freePort, startChildAgent, type ChildAgent } from '../helpers/child-agent.js';
import { until } from '../helpers/polling.js';
import { envelope, post, sign } from '../helpers/envelopes.js';
import {
  createSigner,
  generateRawKeyPair,
  privateKeyFromRaw,
  type Signer,
} from '../../src/protocol/index.js';

let gateway: GatewayDouble;
let tunnel: TunnelServer;
let child: ChildAgent;
const dataDir = tempDir('agent-bridge-serve-output-');

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: 'gw-token-serve' });
  tunnel = await startTunnelServer();
  const port = await freePort();
  child = await startChildAgent([
    '--port',
    String(port),
    '--console-port',
    '0',
    '--data-dir',
    dataDir,
    '--tunnel',
    'localtunnel',
    '--tunnel-host',
    tunnel.url,
    '--gateway-url',
    gateway.url,
    '--gateway-token',
    'gw-token-serve',
  ]);
  await until(() => child.output().includes('Tunnel: online'), 15_000, 'the tunnel online');
}, 30_000);

afterAll(async () => {
  if (child?.process.exitCode === null) child.process.kill('SIGKILL');
  await tunnel?.close();
  await gateway?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm run serve', () => {
  it('prints the start banner whole, then the tunnel progress', () => {
    const lines = child.output().split('\n');
    expect(lines[0]).toMatch(/^Agent Bridge \d+\.\d+\.\d+ \(SAMVAD 1\.2\)$/);
    const bannerEnd = lines.findIndex((line) => line.startsWith('  Access:'));
    expect(bannerEnd).toBeGreaterThan(0);
    const banner = lines.slice(0, bannerEnd + 1);
    // Every banner line is indented under the first; nothing else is printed inside it.
    expect(banner.slice(1).filter((line) => !line.startsWith('  '))).toEqual([]);
    const after = lines.slice(bannerEnd + 1);
    expect(after.findIndex((line) => line.startsWith('Tunnel: connecting'))).toBeGreaterThanOrEqual(0);
    expect(after.findIndex((line) => line.startsWith('Tunnel: online at http://'))).toBeGreaterThan(0);
  });

  it("names the agent by the id it will have: never the loopback address a tunnel's id replaces", () => {
    const output = child.output();
    const url = /Tunnel: online at (\S+)/.exec(output)![1]!;
    const id = `agent://${new URL(url).host}`;
    // Issue 26: the banner said agent://127.0.0.1:PORT, the id for a few moments and never again.
    expect(output).not.toMatch(/Agent id: +agent:\/\/127\.0\.0\.1/);
    const banner = output.split('\n').find((line) => line.startsWith('  Agent id:'));
    expect([
      `  Agent id:   ${id}`,
      expect.stringMatching(/^ {2}Agent id: {3}waiting for the tunnel/),
    ]).toContainEqual(banner);
    expect(output).toContain(`Public URL: ${url}\nAgent id:   ${id}\n`);
  });

  it('ends Ctrl-C with a line that says it stopped, once the traffic log is on disk', async () => {
    // An unsigned call, refused, is logged like any other: it must be on disk when the last line says so.
    const refused = await fetch(`${child.url}/agent/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ not: 'an envelope' }),
    });
    expect(refused.status).toBe(401);
    await until(() => child.output().includes(' 401 refused at '), 5000, 'the refusal printed');
    child.process.kill('SIGINT');
    expect(await child.exited).toBe('0');
    const output = child.output();
    expect(output).toContain('SIGINT: finishing in-flight requests and stopping...\n');
    expect(output.endsWith('\nAgent Bridge stopped.\n')).toBe(true);
    const logged = readFileSync(join(dataDir, 'logs', 'traffic.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(JSON.parse(logged.at(-1)!)).toMatchObject({ status: 401, endpoint: '/agent/message' });
  });
});

// Issue 26: a new sender's first message reached this output (which a service keeps in its journal) while
// the operator kept no message contents. Two strangers with pinned keys ask while contents are off, then on.
describe('npm run serve, when a new sender asks (pairing)', () => {
  const strangers = ['agent://stranger-one.example', 'agent://stranger-two.example'].map((id) => {
    const pair = generateRawKeyPair();
    return { id, publicKey: pair.publicKey, signer: createSigner('k1', privateKeyFromRaw(pair.privateKey)) };
  });
  const dir = tempDir('agent-bridge-serve-access-');
  let agent: ChildAgent;

  beforeAll(async () => {
    const port = await freePort();
    agent = await startChildAgent([
      ...['--port', String(port), '--console-port', '0', '--data-dir', dir, '--tunnel', 'none'],
      ...['--gateway-url', gateway.url, '--gateway-token', 'gw-token-serve', '--access', 'pairing'],
      ...strangers.flatMap((s) => ['--trust-peer', `${s.id}=${s.publicKey}`]),
    ]);
    await until(() => agent.output().includes('  Access:'), 15_000, 'the start banner');
  }, 30_000);

  afterAll(() => {
    if (agent?.process.exitCode === null) agent.process.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const ask = async (from: { id: string; signer: Signer }, message: string) => {
    const to = `agent://127.0.0.1:${new URL(agent.url).port}`;
    const reply = await post(
      agent.url,
      '/agent/message',
      sign(envelope(from.id, to, 'sync', { message }), from.signer),
    );
    expect(reply.status).toBe(403);
    await until(() => agent.output().includes(`Access: ${from.id}`), 5000, `the line about ${from.id}`);
    return agent
      .output()
      .split('\n')
      .find((line) => line.startsWith(`Access: ${from.id}`))!;
  };

  it('names the agent by its loopback id when there is no tunnel: that is its id', () => {
    expect(agent.output()).toContain(`\n  Agent id:   agent://127.0.0.1:${new URL(agent.url).port}\n`);
  });

  it('names the sender and its request code, never what it wrote, while contents are not kept', async () => {
    const line = await ask(strangers[0]!, 'my bank PIN is 4921');
    expect(line).toMatch(
      /^Access: agent:\/\/stranger-one\.example asks to talk to your agent \(request [\w-]+\)\. Approve/,
    );
    expect(agent.output()).not.toContain('4921');
  });

  it('shows the first message once the operator keeps contents (console Settings, applied at once)', async () => {
    const { url, token } = JSON.parse(readFileSync(join(dir, 'console.json'), 'utf8')) as Record<
      string,
      string
    >;
    const saved = await fetch(`${url}/api/settings`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ keepMessageContents: true }),
    });
    expect(saved.status).toBe(200);
    const line = await ask(strangers[1]!, 'hello from two');
    expect(line).toContain(', first message: "hello from two").');
  });
});
