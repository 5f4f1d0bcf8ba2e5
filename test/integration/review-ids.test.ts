// Review of issue 15, finding 8: ids must be read in their one spelling wherever they enter. Two places still
// take an id as written: a delegation token's `iss` (its issuer's pinned key is skipped, and the card that
// host serves is used instead: the pin is the operator's word that the card is not to be relied on), and a
// port written with leading zeros (agent://host:0PORT reaches the same host as agent://host:PORT, yet is
// another sender: a denial is dodged). Real agents and card servers on loopback, the gateway double.
import type { Server } from 'node:http';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateKeyFromRaw, generateRawKeyPair, type PublicKeyEntry } from '../../src/protocol/index.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { agentPool } from '../helpers/agents.js';
import { startCardHost, testKey, type CardHost, type TestKey } from '../helpers/card-host.js';
import { PATHS, envelope, post, sign } from '../helpers/envelopes.js';
import { expectError } from '../helpers/verify.js';

const TOKEN = 'gw-review-ids-3c1f';

let gateway: GatewayDouble;
const pool = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));
const hosts: CardHost[] = [];

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
});
afterAll(async () => {
  await pool.closeAll();
  for (const host of hosts) await host.close();
  await gateway.close();
});

/** A card served at http://localhost:PORT (its id `agent://localhost:PORT`); `rewrite` changes how the id is written. */
async function serveCard(keys: PublicKeyEntry[]): Promise<CardHost> {
  const host = await startCardHost(keys, 0, { host: 'localhost', listen: listenBelow10000 });
  hosts.push(host);
  return host;
}

// A port of four digits, so that one written with a leading zero still fits the envelope's 5-digit pattern
// (as agent://evil.com:0443 fits it).
async function listenBelow10000(server: Server): Promise<void> {
  for (;;) {
    const port = 2000 + Math.floor(Math.random() * 8000);
    const listening = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (listening) return;
  }
}

const entry = (key: TestKey): PublicKeyEntry => ({ kid: key.kid, key: key.key, active: true });

describe("a delegation token's issuer", () => {
  it('is looked up in its one spelling: a pinned issuer key is not skipped for agent://LocalHost', async () => {
    // The card at the issuer's address lists a key the operator did not pin (a hijacked host, say).
    const cardPair = generateRawKeyPair();
    const cardKey = { kid: 'card-key', key: cardPair.publicKey, active: true };
    const { id: issuer } = await serveCard([cardKey]);
    const pinned = testKey('pinned');
    const target = await pool.start({ settings: { trustedPeerKeys: { [issuer]: pinned.key } } });
    const peer = await pool.start();
    const send = async (iss: string) => {
      const token = await new SignJWT({ scope: ['chat'], maxDepth: 1 })
        .setProtectedHeader({ alg: 'EdDSA' })
        .setIssuer(iss)
        .setSubject(peer.id)
        .setIssuedAt()
        .setExpirationTime('300s')
        .sign(privateKeyFromRaw(cardPair.privateKey));
      const env = envelope(peer.id, target.id, 'sync', { message: `for ${iss}` }, { delegationToken: token });
      return post(target.url, PATHS.sync, sign(env, peer.app.keys.signer));
    };
    // As pinned: the pinned key is used, and the token, signed by the card's key, is refused.
    expectError(await send(issuer), 401, 'AUTH_FAILED', /pinned key/);
    // The same issuer in capitals: the same agent, the same pin.
    expectError(await send(issuer.replace('localhost', 'LocalHost')), 401, 'AUTH_FAILED', /pinned key/);
  });
});

describe('a port written with leading zeros', () => {
  it('names the same sender: a denied sender cannot come back as agent://host:0PORT', async () => {
    const agent = await pool.start({ settings: { access: 'pairing' } });
    const key = testKey('k1');
    const sender = await serveCard([entry(key)]);
    const call = (from: string) =>
      post(agent.url, PATHS.sync, sign(envelope(from, agent.id, 'sync', { message: 'hello' }), key.signer));
    expectError(await call(sender.id), 403, 'AUTH_FAILED', /not yet approved/);
    agent.app.access.deny(sender.id);
    expectError(await call(sender.id), 403, 'AUTH_FAILED', /declined/);
    // The same host and port, its id written with a leading zero on its card and in the envelope.
    const zeroed = `agent://localhost:0${sender.port}`;
    sender.rewrite(zeroed);
    expectError(await call(zeroed), 403, 'AUTH_FAILED', /declined/);
    expect(agent.app.access.view().pending).toEqual([]);
  });
});
