// `agent-bridge call` as an operator runs it (issue 26): the real CLI in a child process, against real agents
// on loopback (the gateway double behind them). Over SAMVAD it signs as the agent running on its data dir
// (that agent's console says who it is now); over A2A it presents a key. Each path prints the reply and what
// was checked, or what went wrong and what to do.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { agentPool, tempDir, type TestAgent } from '../helpers/agents.js';
import { freePort } from '../helpers/child-agent.js';

const ROOT = resolve(import.meta.dirname, '../..');
let gateway: GatewayDouble;
const pool = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: gateway.token }));
/** The caller: its own agent, pairing and without --dev-http-peers, as an operator runs it. */
let me: TestAgent;
let myConsole: ConsoleHandle;

beforeAll(async () => {
  gateway = await startGatewayDouble({ reply: (message) => `echo: ${message}` });
  me = await pool.start({ settings: { access: 'pairing', devHttpPeers: false } });
  myConsole = await startConsole({
    app: me.app,
    store: openSettingsStore(me.dataDir),
    dataDir: me.dataDir,
    port: 0,
    staticDir: tempDir('call-cli-ui-'),
  });
});

afterAll(async () => {
  await myConsole?.close();
  await pool.closeAll();
  await gateway?.close();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI; `watch` sees stdout as it comes. */
function call(args: string[], env: NodeJS.ProcessEnv = {}, watch?: (stdout: string) => void): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'call', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    watch?.(stdout);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((done) => child.on('close', (code) => done({ code, stdout, stderr })));
}

const asMe = () => ['--data-dir', me.dataDir];

describe('agent-bridge call, over SAMVAD', () => {
  it('calls the agent itself: signed with its own key, no approval and no flag on either side', async () => {
    const run = await call([...asMe(), me.id, 'Hello there']);
    expect(run).toMatchObject({ code: 0, stdout: 'echo: Hello there\n' });
    const kid = me.app.keys.signer.kid;
    expect(run.stderr).toBe(
      `Sent as ${me.id} (the agent itself: no approval needed), signed with its key ${kid}.\n` +
        `Reply verified: signed by ${me.id} with its key ${kid}, active on its card (${me.url}/.well-known/agent.json).\n`,
    );
  });

  it('prints a streamed reply as it arrives, then checks it against the signed final event', async () => {
    const message = 'a message long enough to come in many pieces';
    gateway.set({ deltaDelayMs: 60 });
    const partial: string[] = [];
    const run = await call([...asMe(), '--stream', me.url, message], {}, (stdout) => partial.push(stdout));
    gateway.set({ deltaDelayMs: 0 });
    expect(run).toMatchObject({ code: 0, stdout: `echo: ${message}\n` });
    // Pieces came before the whole: printed as they arrived.
    expect(partial.some((seen) => seen.length > 0 && seen.length < `echo: ${message}`.length)).toBe(true);
    expect(run.stderr).toContain(
      `Reply verified: its final event, which holds the whole streamed reply, is signed by ${me.id} with its key`,
    );
  });

  it('calls another agent on this machine that resolves loopback ids (--dev-http-peers): no --trust-peer', async () => {
    const other = await pool.start({ settings: { access: 'open', devHttpPeers: true } });
    const run = await call([...asMe(), other.id, 'Hi other']);
    expect(run).toMatchObject({ code: 0, stdout: 'echo: Hi other\n' });
    expect(run.stderr).toContain(`Sent as ${me.id}, signed with its key`);
    expect(run.stderr).toContain(
      `Reply verified: signed by ${other.id} with its key ${other.app.keys.signer.kid}`,
    );
  });

  it('says exactly why another agent on this machine cannot check the signature without it', async () => {
    const strict = await pool.start({ settings: { access: 'open', devHttpPeers: false } });
    const run = await call([...asMe(), strict.id, 'Hi']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      new RegExp(`^agent-bridge: ${strict.id} refused the call \\(HTTP 401 AUTH_FAILED\\)\\.`),
    );
    expect(run.stderr).toContain(
      `It could not check your signature: your agent's id, ${me.id}, is a loopback address.`,
    );
    expect(run.stderr).toContain(
      `start the agent you call with --dev-http-peers, or pin your key there with --trust-peer ${me.id}=<your public key>`,
    );
  });

  it('says what to do when the agent called waits for its operator to approve the caller', async () => {
    const pairing = await pool.start({ settings: { access: 'pairing', devHttpPeers: true } });
    const run = await call([...asMe(), pairing.id, 'Hi']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${pairing.id} refused the call (HTTP 403 AUTH_FAILED). It said: "`);
    expect(run.stderr).toContain(
      `Its operator has not approved your agent (${me.id}) yet: ask them to approve it on their console's Access page`,
    );
  });

  it('says so when nothing answers at the address, and when no agent runs on the data dir', async () => {
    const port = await freePort();
    const unreachable = await call([...asMe(), `agent://127.0.0.1:${port}`, 'Hi']);
    expect(unreachable).toMatchObject({ code: 1, stdout: '' });
    expect(unreachable.stderr).toBe(
      `agent-bridge: Cannot reach http://127.0.0.1:${port} (ECONNREFUSED): is the agent running, and is ` +
        `agent://127.0.0.1:${port} its address? The start banner of \`serve\` prints it (Agent URL).\n`,
    );
    const nobody = tempDir('call-cli-nobody-');
    const stopped = await call(['--data-dir', nobody, me.id, 'Hi']);
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toContain(
      `agent-bridge: No agent runs on ${nobody} (its console.json names no running console).`,
    );
    expect(stopped.stderr).toContain(`start it first: npm run serve -- --data-dir '${nobody}'`);
  });
});

describe('agent-bridge call --a2a', () => {
  let secret: string;
  beforeAll(async () => {
    ({ secret } = await me.app.a2aKeys.issue({ name: 'CLI test' }));
  });

  it('sends with the key from AGENT_BRIDGE_A2A_KEY and says what was checked: the card, not the reply', async () => {
    const run = await call(['--a2a', me.url, 'Hi over A2A'], { AGENT_BRIDGE_A2A_KEY: secret });
    expect(run).toMatchObject({ code: 0, stdout: 'echo: Hi over A2A\n' });
    expect(run.stderr).toBe(
      'Sent with your A2A key.\nA2A replies carry no signature: this one is as authentic as this machine ' +
        `(loopback); its card is signed, and the signature verified with key ${me.app.keys.signer.kid} of ` +
        `${me.url}/.well-known/jwks.json.\n`,
    );
  });

  it('streams with --key, named by its agent:// id', async () => {
    const run = await call(['--a2a', '--stream', '--key', secret, me.id, 'Streamed over A2A']);
    expect(run).toMatchObject({ code: 0, stdout: 'echo: Streamed over A2A\n' });
  });

  it('says the key was refused, and what to do, for a wrong key and for a revoked one', async () => {
    const wrong = await call(['--a2a', me.url, 'Hi'], { AGENT_BRIDGE_A2A_KEY: `${secret.slice(0, -4)}AAAA` });
    expect(wrong.code).toBe(1);
    const refused =
      `agent-bridge: ${me.url} refused your A2A key (HTTP 401): it is wrong, revoked or expired. Ask the ` +
      "agent's operator for a new one (they issue it with `agent-bridge keys issue --name <you>`), and pass " +
      'it with AGENT_BRIDGE_A2A_KEY or --key.\n';
    expect(wrong.stderr).toBe(refused);
    const { key } = await me.app.a2aKeys.issue({ name: 'to revoke' }).then(async (issued) => {
      await me.app.a2aKeys.revoke(issued.key.id);
      return { key: issued.secret };
    });
    const revoked = await call(['--a2a', me.url, 'Hi'], { AGENT_BRIDGE_A2A_KEY: key });
    expect(revoked).toMatchObject({ code: 1, stdout: '', stderr: refused });
  });

  it('says the agent wants a key when none is given: the message knocked, and waits for the operator', async () => {
    const run = await call(['--a2a', me.url, 'Hi']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /takes A2A calls from callers its operator approved: your message now waits for the operator's decision as task [0-9a-f-]{36}\. Ask the agent's operator for a key/,
    );
    expect(me.app.a2a.knocks?.view()).toHaveLength(1);
  });
});

describe('agent-bridge call, its arguments', () => {
  it('refuses what does not fit, naming the fix', async () => {
    const missing = await call([me.id]);
    expect(missing.stderr).toMatch(/^agent-bridge: Name the agent and the message, the message quoted:/);
    const keyWithoutA2A = await call([...asMe(), '--key', 'abk_x', me.id, 'Hi']);
    expect(keyWithoutA2A.stderr).toBe(
      'agent-bridge: --key is an A2A key: add --a2a to call over A2A, or drop --key to call over SAMVAD.\n',
    );
  });
});
