// Review of issue 15, finding 3: an approved sender keeps its service while strangers hammer. Strangers no
// longer spend the agent-wide rate limit, but every sender's card fetch still draws on one budget of card
// fetches a minute: new senders may use most of it, and the part kept for senders seen before is spent by
// strangers too (each of their ids, once seen, may make a re-fetch for an unknown kid every 10 s). With it
// spent, an approved sender whose cached card has expired is refused. Strangers here: 480 throwaway ids,
// each with a real card, calling from ten addresses behind the tunnel (the address the tunnel appends to
// X-Forwarded-For), then one re-fetch each for 120 of them. Real agents and card server on loopback, the
// gateway double.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildCard, type Envelope, type Signer } from '../../src/protocol/index.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { agentPool } from '../helpers/agents.js';
import { testKey } from '../helpers/card-host.js';
import { PATHS, envelope, sign, type Signed } from '../helpers/envelopes.js';

const TOKEN = 'gw-review-strangers-a41c';

let gateway: GatewayDouble;
let cards: Server;
const pool = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN, access: 'pairing' }));
const stranger = testKey('k1');

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
  // Any number of identities on one machine: a card for whatever *.localhost name is asked.
  cards = createServer((req, res) => {
    const host = req.headers.host ?? '';
    const card = buildCard({
      url: `http://${host}`,
      name: 'Stranger',
      version: '1.0.0',
      description: 'One of many',
      specializations: [],
      models: [],
      skills: [
        {
          id: 'chat',
          name: 'Chat',
          description: 'Talks',
          inputSchema: { type: 'object' },
          outputSchema: { type: 'object' },
          modes: ['sync'],
          trust: 'public',
        },
      ],
      publicKeys: [{ kid: stranger.kid, key: stranger.key, active: true }],
      rateLimit: { requestsPerMinute: 60, requestsPerSender: 10, tokensPerSenderPerDay: 1000 },
      cardTTL: 300,
    });
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card));
  });
  await new Promise<void>((resolve) => cards.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await pool.closeAll();
  cards.close();
  await gateway.close();
});

async function send(url: string, signed: Signed, forwardedFor?: string) {
  const headers = forwardedFor ? { ...signed.headers, 'x-forwarded-for': forwardedFor } : signed.headers;
  const response = await fetch(`${url}${PATHS.sync}`, { method: 'POST', headers, body: signed.body });
  return { status: response.status, text: await response.text() };
}

it("strangers' card fetches do not lock out an approved sender whose card must be fetched again", async () => {
  // The agent's clock stands still but when moved (its budgets refill with time: a real attack keeps them
  // spent by sending as fast as they refill).
  let clock = Date.now();
  const agent = await pool.start({ now: () => clock });
  const friend = await pool.start({ settings: { cardTTL: 30 } });
  const call = (from: string, signer: Signer, forwardedFor?: string, extra: Partial<Envelope> = {}) =>
    send(
      agent.url,
      sign(envelope(from, agent.id, 'sync', { message: 'hello' }, extra), signer),
      forwardedFor,
    );
  expect((await call(friend.id, friend.app.keys.signer)).status).toBe(403);
  agent.app.access.approve(friend.id);
  expect((await call(friend.id, friend.app.keys.signer)).status).toBe(200);

  // Later: the agent's copy of the friend's card has expired.
  clock += 31_000;
  const port = (cards.address() as AddressInfo).port;
  const ids = Array.from({ length: 480 }, (_, i) => `agent://s${i}.localhost:${port}`);
  const address = (i: number) => `198.51.100.${i % 10}`;
  for (let i = 0; i < ids.length; i += 40) {
    await Promise.all(ids.slice(i, i + 40).map((id, j) => call(id, stranger.signer, address(i + j))));
  }
  // Seen before, each may have its card fetched again for a kid its cached card lacks.
  const unknownKid = { ...stranger.signer, kid: 'rotated' };
  await Promise.all(ids.slice(0, 120).map((id, i) => call(id, unknownKid, address(i))));

  const reply = await call(friend.id, friend.app.keys.signer);
  expect(reply.status, reply.text).toBe(200);
});
