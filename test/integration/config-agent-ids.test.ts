// Issue 15, finding 8: an agent id the operator writes in configuration in another spelling than the one
// senders arrive with (agent://LocalHost:PORT for agent://localhost:PORT) was silently ignored: a pinned key
// for it never applied, so a call signed with the card's other key got 200. Every place an id enters from
// configuration is a row here, against a real agent on loopback: the flags, the settings file, the console's
// PUT /api/settings, the app's own options, and the access lists (access.json and the console's approve).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import { createSigner, generateRawKeyPair, privateKeyFromRaw } from '../../src/protocol/index.js';
import { parseServeArgs } from '../../src/settings/flags.js';
import type { Settings } from '../../src/settings/schema.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { freePort } from '../helpers/child-agent.js';
import { agentPool, startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { envelope, post, sign } from '../helpers/envelopes.js';
import { expectError } from '../helpers/verify.js';

const TOKEN = 'gw-ids-token-51c0';
let gateway: GatewayDouble;
/** The caller: its card's id is agent://localhost:PORT, its key the one on that card. */
let sender: TestAgent;
/** The same id as an operator may type it. */
let spelled: string;
const consoles: ConsoleHandle[] = [];
const pool = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
  const port = await freePort();
  sender = await startAgent({ settings: { port, publicUrl: `http://localhost:${port}` } });
  expect(sender.id).toBe(`agent://localhost:${port}`);
  spelled = `agent://LocalHost:${port}`;
});
afterEach(async () => {
  for (const handle of consoles.splice(0)) await handle.close();
  await pool.closeAll();
});
afterAll(async () => {
  await sender.close();
  await gateway.close();
});

type IdSettings = Pick<Settings, 'trustedPeerKeys' | 'allowedPeers' | 'outboundAllowed' | 'access'>;

/** Each way settings reach the running agent: the agent it gives, or the error it refuses them with. */
const ENTRY_POINTS: [string, (settings: Partial<IdSettings>) => Promise<TestAgent>][] = [
  [
    'flags (--trust-peer, --allowed-peers, --outbound-allowed)',
    async (settings) => {
      const argv = [
        ...Object.entries(settings.trustedPeerKeys ?? {}).flatMap(([id, key]) => [
          '--trust-peer',
          `${id}=${key}`,
        ]),
        ...(settings.allowedPeers ? ['--allowed-peers', settings.allowedPeers.join(',')] : []),
        ...(settings.outboundAllowed ? ['--outbound-allowed', settings.outboundAllowed.join(',')] : []),
        ...(settings.access ? ['--access', settings.access] : []),
      ];
      return pool.start({ settings: parseServeArgs(argv, {}).overrides });
    },
  ],
  [
    'the settings file',
    async (settings) => {
      const dataDir = tempDir();
      writeFileSync(join(dataDir, 'settings.json'), JSON.stringify({ access: 'open', ...settings }));
      const { trustedPeerKeys, allowedPeers, outboundAllowed, access } = openSettingsStore(dataDir).get();
      return pool.start({ dataDir, settings: { trustedPeerKeys, allowedPeers, outboundAllowed, access } });
    },
  ],
  [
    'PUT /api/settings',
    async (settings) => {
      const agent = await pool.start();
      const handle = await startConsole({
        app: agent.app,
        store: openSettingsStore(agent.dataDir),
        dataDir: agent.dataDir,
        port: 0,
      });
      consoles.push(handle);
      const response = await fetch(`${handle.url}/api/settings`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${handle.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(settings),
      });
      const text = await response.text();
      if (response.status !== 200) throw new Error(text);
      return agent;
    },
  ],
  ['the app options (the desktop shell builds the app so)', async (settings) => pool.start({ settings })],
];

const call = (agent: TestAgent) =>
  post(
    agent.url,
    '/agent/message',
    sign(envelope(sender.id, agent.id, 'sync', { message: 'hi' }), sender.app.keys.signer),
  );

describe.each(ENTRY_POINTS)('agent ids from %s', (_name, start) => {
  it('a key pinned under another spelling of the id applies: a call signed with the card key is refused', async () => {
    const pinned = generateRawKeyPair().publicKey;
    const agent = await start({ trustedPeerKeys: { [spelled]: pinned } });
    expectError(await call(agent), 401, 'AUTH_FAILED', /does not verify/);
  });

  it('the key pinned under another spelling is the one that verifies, whatever the card lists', async () => {
    const pair = generateRawKeyPair();
    const agent = await start({ trustedPeerKeys: { [spelled]: pair.publicKey } });
    const env = envelope(sender.id, agent.id, 'sync', { message: 'signed with the pinned key' });
    const reply = await post(
      agent.url,
      '/agent/message',
      sign(env, createSigner('not-on-the-card', privateKeyFromRaw(pair.privateKey))),
    );
    expect(reply.status, reply.text).toBe(200);
  });

  it('allowed peers and the outbound allowlist hold the id in its one spelling', async () => {
    const agent = await start({
      access: 'allowlist',
      allowedPeers: [spelled, sender.id],
      outboundAllowed: [`${spelled.replace('LocalHost', 'LOCALHOST')}`],
    });
    expect((await call(agent)).status).toBe(200);
    // The desktop shell's options are used as given; the checks normalise at use.
    if (!_name.startsWith('the app options')) {
      expect(agent.app.currentSettings.allowedPeers).toEqual([sender.id]);
      expect(agent.app.currentSettings.outboundAllowed).toEqual([sender.id]);
    }
    expect(agent.app.access.view().approved).toEqual([{ sender: sender.id, source: 'allowed-peers' }]);
  });

  it('two spellings of one id pinned with different keys are refused with a message', async () => {
    const [one, two] = [generateRawKeyPair().publicKey, generateRawKeyPair().publicKey];
    await expect(start({ trustedPeerKeys: { [spelled]: one, [sender.id]: two } })).rejects.toThrow(
      new RegExp(`${sender.id.replace(/[.]/g, '\\.')} is pinned twice with different keys`),
    );
  });
});

describe('agent ids in the access lists', () => {
  it('an approval in access.json written in another spelling admits the sender', async () => {
    const dataDir = tempDir();
    writeFileSync(
      join(dataDir, 'access.json'),
      JSON.stringify({ approved: [{ sender: spelled, approvedAt: Date.now() }], pending: [], denied: [] }),
    );
    const agent = await pool.start({ dataDir, settings: { access: 'allowlist' } });
    const reply = await call(agent);
    expect(reply.status, reply.text).toBe(200);
    expect(agent.app.access.view().approved).toMatchObject([{ sender: sender.id, source: 'operator' }]);
  });

  it("the console's approve, deny and revoke take any spelling", async () => {
    const agent = await pool.start({ settings: { access: 'pairing' } });
    expect((await call(agent)).status).toBe(403);
    agent.app.access.approve(spelled);
    expect((await call(agent)).status).toBe(200);
    agent.app.access.revoke(spelled);
    expect((await call(agent)).status).toBe(403);
    agent.app.access.deny(spelled);
    expectError(await call(agent), 403, 'AUTH_FAILED', /declined/);
  });
});
