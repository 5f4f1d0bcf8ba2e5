// Delegation tokens (PROTOCOL.md §9, issue 9 part 2) against real agents on loopback and the gateway double:
// a valid token in each mode, with its issuer in the operator's log and in the gateway's system message;
// every refusal in each mode with its code and status; tokens our client makes; tokens made exactly as the
// reference SDK makes them, its issuer a pinned key or an agent serving its card.
import type { webcrypto } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EnvelopeEvent } from '../../src/agent/events.js';
import { AgentClient, type StreamEvent } from '../../src/client/index.js';
import { buildCard, createSigner, generateRawKeyPair, privateKeyFromRaw } from '../../src/protocol/index.js';
import type { Mode } from '../../src/protocol/index.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { agentPool, type TestAgent } from '../helpers/agents.js';
import { PATHS, envelope, post, sign, type Reply } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';
import { expectError, expectSignedBy } from '../helpers/verify.js';

const MODES: Mode[] = ['sync', 'async', 'stream'];
const TOKEN = 'gw-delegation-token-7e2a';
const CHAT = '/v1/chat/completions';
/** The pinned issuer: no card is fetched for it (`trustedPeerKeys`). */
const PINNED_ISSUER = 'agent://issuer.example';

/** An Ed25519 key pair as the reference SDK holds one: WebCrypto keys, the public half as a JWK (OKP). */
interface SdkKey {
  privateKey: webcrypto.CryptoKey;
  /** Raw public key, standard base64: what a card or `trustedPeerKeys` lists. */
  raw: string;
}

async function sdkKeyPair(): Promise<SdkKey> {
  const pair = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const jwk = await crypto.subtle.exportKey('jwk', pair.publicKey);
  expect(jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
  return { privateKey: pair.privateKey, raw: Buffer.from(jwk.x!, 'base64url').toString('base64') };
}

interface SdkClaims {
  iss: string;
  sub: string;
  scope?: unknown;
  maxDepth?: unknown;
  act?: { sub: string };
  /** Seconds from now; negative for an expired token. */
  expiresIn?: number;
  /** `iat` in seconds since 1970 (the SDK's: now); false leaves it out. */
  issuedAt?: number | false;
}

/** Exactly the reference SDK's createDelegationToken (packages/sdk-typescript/src/delegation.ts). */
function sdkToken(key: SdkKey, claims: SdkClaims): Promise<string> {
  const payload: Record<string, unknown> = {
    scope: claims.scope ?? ['chat'],
    maxDepth: claims.maxDepth ?? 1,
  };
  if (claims.act) payload.act = claims.act;
  const expiresIn = claims.expiresIn ?? 300;
  const jwt = new SignJWT(payload)
    .setProtectedHeader({ alg: 'EdDSA' })
    .setIssuer(claims.iss)
    .setSubject(claims.sub);
  if (claims.issuedAt !== false) jwt.setIssuedAt(claims.issuedAt);
  return jwt
    .setExpirationTime(expiresIn >= 0 ? `${expiresIn}s` : Math.floor(Date.now() / 1000) + expiresIn)
    .sign(key.privateKey);
}

/** An SDK agent's card on loopback (`agent://127.0.0.1:PORT`, reached through --dev-http-peers). */
async function serveCard(
  key: SdkKey,
): Promise<{ id: string; fetches: () => number; close(): Promise<void> }> {
  let fetches = 0;
  let body = '';
  const server: Server = createServer((req, res) => {
    if (req.url !== '/.well-known/agent.json') return void res.writeHead(404).end();
    fetches++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const card = buildCard({
    url,
    name: 'SDK issuer',
    version: '0.7.0',
    description: 'An agent built with the reference SDK',
    specializations: [],
    models: [],
    skills: [
      {
        id: 'plan',
        name: 'plan',
        description: 'd',
        inputSchema: {},
        outputSchema: {},
        modes: ['sync'],
        trust: 'public',
      },
    ],
    publicKeys: [{ kid: 'sdk-key-1', key: key.raw, active: true }],
    rateLimit: { requestsPerMinute: 60, requestsPerSender: 10, tokensPerSenderPerDay: 100_000 },
    cardTTL: 300,
  });
  body = JSON.stringify(card);
  return {
    id: card.id,
    fetches: () => fetches,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let gateway: GatewayDouble;
const pool = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));
let pinnedKey: SdkKey;
/** The agent under test: it pins PINNED_ISSUER's key. */
let target: TestAgent;
/** The caller, acting for the issuer. */
let peer: TestAgent;
/** Another Agent Bridge serving its card: an issuer whose tokens our own client makes. */
let issuer: TestAgent;
const events: EnvelopeEvent[] = [];

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
  pinnedKey = await sdkKeyPair();
  target = await pool.start({ settings: { trustedPeerKeys: { [PINNED_ISSUER]: pinnedKey.raw } } });
  peer = await pool.start();
  issuer = await pool.start();
  target.app.on('envelope', (event) => events.push(event));
});
afterAll(async () => {
  await pool.closeAll();
  await gateway.close();
});
beforeEach(() => {
  events.length = 0;
});

let counter = 0;
const unique = (what: string) => `${what} #${++counter}`;

/** Sends a chat envelope from `from` carrying `token`; signed by `from` (Form A). */
function send(mode: Mode, token: unknown, message: string, from: TestAgent = peer): Promise<Reply> {
  const env = envelope(from.id, target.id, mode, { message }, { delegationToken: token as string });
  return post(target.url, PATHS[mode], sign(env, from.app.keys.signer));
}

const chatCalls = () => gateway.requests.filter((r) => r.path === CHAT);
/** The system message of the gateway call that carried `message`, once it arrived. */
function systemMessageFor(message: string): string | undefined {
  for (const request of chatCalls()) {
    const messages = (request.json as { messages: { role: string; content: string }[] }).messages;
    if (messages.some((m) => m.role === 'user' && m.content === message)) {
      return messages.find((m) => m.role === 'system')?.content;
    }
  }
  return undefined;
}

async function taskStatus(taskId: string): Promise<string> {
  const response = await fetch(`${target.url}/agent/task/${taskId}`);
  return ((await response.json()) as { status: string }).status;
}

/** The reply was the skill's; the log and the framing say on whose behalf the caller acted. */
async function expectDelegatedCall(
  mode: Mode,
  reply: Reply,
  message: string,
  onBehalfOf: string,
  scope = '"chat"',
): Promise<void> {
  expect(reply.status, reply.text).toBe(mode === 'async' ? 202 : 200);
  // A stream signs its final events, not its headers (PROTOCOL.md §3).
  if (mode !== 'stream') expectSignedBy(target.app, reply);
  if (mode === 'sync') expect(reply.json.result).toEqual({ reply: `echo: ${message}`, channel: 'samvad' });
  if (mode === 'stream')
    expect(reply.text).toContain(JSON.stringify({ reply: `echo: ${message}`, channel: 'samvad' }));
  if (mode === 'async') {
    const taskId = reply.json.taskId as string;
    await until(async () => (await taskStatus(taskId)) === 'done', 5000, 'the task to finish');
  }
  const entry = events.find((e) => e.verdict === 'accepted');
  expect(entry, 'an accepted log entry').toMatchObject({ onBehalfOf, sender: peer.id, mode });
  expect(systemMessageFor(message)).toContain(
    `It acts on behalf of ${JSON.stringify(onBehalfOf)} (a delegation token signed by that agent; scope: ${scope}).`,
  );
}

describe.each(MODES)('%s mode', (mode) => {
  it('accepts a token made as the reference SDK makes it, its issuer pinned', async () => {
    const token = await sdkToken(pinnedKey, {
      iss: PINNED_ISSUER,
      sub: peer.id,
      scope: ['summarise', 'chat'],
    });
    const message = unique(`delegated ${mode}`);
    await expectDelegatedCall(
      mode,
      await send(mode, token, message),
      message,
      PINNED_ISSUER,
      '"summarise", "chat"',
    );
  });

  it('accepts a token our client made for another Agent Bridge, checked against its card', async () => {
    const issuerClient = new AgentClient({ id: issuer.id, signer: issuer.app.keys.signer });
    const token = issuerClient.createDelegationToken(peer.id, ['chat']);
    const message = unique(`client-made ${mode}`);
    // The sender attaches it through the client's call options.
    const client = new AgentClient({ id: peer.id, signer: peer.app.keys.signer, devHttp: true });
    const options = { delegationToken: token };
    let reply: Reply;
    if (mode === 'sync') {
      const result = await client.call(target.id, 'chat', { message }, options);
      expect(result.verified).toBe(true);
      reply = {
        status: result.status,
        headers: result.headers,
        text: '',
        json: result.body as Reply['json'],
      };
    } else if (mode === 'async') {
      const { taskId, response } = await client.submitTask(target.id, 'chat', { message }, options);
      expect(response.verified).toBe(true);
      await client.waitForTask(target.id, taskId, { intervalMs: 20, timeoutMs: 5000 });
      reply = { status: 202, headers: response.headers, text: '', json: { taskId } };
    } else {
      const received: StreamEvent[] = [];
      for await (const event of client.stream(target.id, 'chat', { message }, options)) received.push(event);
      expect(received.some((e) => e.event === 'result' && e.verified)).toBe(true);
      reply = { status: 200, headers: new Headers(), text: received.map((e) => e.raw).join('\n'), json: {} };
    }
    expect(reply.status).toBe(mode === 'async' ? 202 : 200);
    const entry = events.find((e) => e.verdict === 'accepted');
    expect(entry).toMatchObject({ onBehalfOf: issuer.id, sender: peer.id });
    expect(systemMessageFor(message)).toContain(
      `It acts on behalf of ${JSON.stringify(issuer.id)} (a delegation token signed by that agent; scope: "chat").`,
    );
  });

  // Refusals: each with its code and status, nothing reaches the gateway, the log names the step.
  const refusals: [string, () => Promise<string | unknown>, number, string, RegExp][] = [
    ['malformed', async () => 'not.a-jwt', 401, 'AUTH_FAILED', /not a valid JWT/],
    [
      'without iss',
      async () => {
        const token = await sdkToken(pinnedKey, { iss: PINNED_ISSUER, sub: peer.id });
        const [header, , signature] = token.split('.');
        const claims = Buffer.from(JSON.stringify({ sub: peer.id, scope: ['chat'], maxDepth: 1 })).toString(
          'base64url',
        );
        return `${header}.${claims}.${signature}`;
      },
      401,
      'AUTH_FAILED',
      /no "iss" claim/,
    ],
    [
      'from an unknown issuer',
      async () => sdkToken(pinnedKey, { iss: 'agent://127.0.0.1:9', sub: peer.id }),
      401,
      'AUTH_FAILED',
      /issuer agent:\/\/127\.0\.0\.1:9 is unknown here/,
    ],
    [
      'signed by another key',
      async () => sdkToken(await sdkKeyPair(), { iss: PINNED_ISSUER, sub: peer.id }),
      401,
      'AUTH_FAILED',
      /signature does not verify with the pinned key of its issuer agent:\/\/issuer\.example/,
    ],
    [
      'for another subject',
      async () => sdkToken(pinnedKey, { iss: PINNED_ISSUER, sub: 'agent://someone-else.example' }),
      401,
      'AUTH_FAILED',
      /issued to "agent:\/\/someone-else\.example" \(its "sub"\), but this envelope is from/,
    ],
    [
      'expired',
      async () => sdkToken(pinnedKey, { iss: PINNED_ISSUER, sub: peer.id, expiresIn: -30 }),
      401,
      'AUTH_FAILED',
      /expired at .*; ask agent:\/\/issuer\.example for a new one/,
    ],
    // Issue 15: a token that lasts a century can never be withdrawn (the reference SDK issues any lifetime).
    [
      'made to last 100 years (exp - iat)',
      async () => sdkToken(pinnedKey, { iss: PINNED_ISSUER, sub: peer.id, expiresIn: 100 * 365 * 86_400 }),
      401,
      'AUTH_FAILED',
      /valid for 3153600000 s \(36500 days\) \(from its "iat" to its "exp"\), longer than the 86400 s \(24 h\) this agent accepts/,
    ],
    [
      'without iat, expiring in 2 days',
      async () =>
        sdkToken(pinnedKey, { iss: PINNED_ISSUER, sub: peer.id, expiresIn: 2 * 86_400, issuedAt: false }),
      401,
      'AUTH_FAILED',
      /expires in 17\d{4} s.*, later than the 86400 s \(24 h\) this agent accepts \(its delegationMaxLifetimeSeconds\) allows/,
    ],
    [
      'whose iat was moved up to a minute before its exp, 100 years ahead',
      async () => {
        const exp = Math.floor(Date.now() / 1000) + 100 * 365 * 86_400;
        return sdkToken(pinnedKey, {
          iss: PINNED_ISSUER,
          sub: peer.id,
          expiresIn: exp - Math.floor(Date.now() / 1000),
          issuedAt: exp - 60,
        });
      },
      401,
      'AUTH_FAILED',
      /expires in \d+ s.*later than the 86400 s \(24 h\)/,
    ],
    [
      'with a scope that is not a list of skill ids',
      async () => sdkToken(pinnedKey, { iss: PINNED_ISSUER, sub: peer.id, scope: 'chat' }),
      401,
      'AUTH_FAILED',
      /"scope" claim must be an array/,
    ],
    [
      'whose scope leaves the skill out',
      async () => sdkToken(pinnedKey, { iss: PINNED_ISSUER, sub: peer.id, scope: ['summarise'] }),
      400,
      'DELEGATION_EXCEEDED',
      /scope \("summarise"\) does not include skill "chat"/,
    ],
    [
      'whose depth is used up (maxDepth 0)',
      async () => sdkToken(pinnedKey, { iss: PINNED_ISSUER, sub: peer.id, maxDepth: 0 }),
      400,
      'DELEGATION_EXCEEDED',
      /allows no further delegation \(maxDepth 0\)/,
    ],
    [
      'with alg none',
      async () => {
        const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
        const exp = Math.floor(Date.now() / 1000) + 300;
        return `${b64({ alg: 'none' })}.${b64({ iss: PINNED_ISSUER, sub: peer.id, scope: ['chat'], maxDepth: 1, exp })}.`;
      },
      401,
      'AUTH_FAILED',
      /alg "none"; only "EdDSA"/,
    ],
    [
      "with alg HS256, keyed with the issuer's public key",
      async () =>
        new SignJWT({ scope: ['chat'], maxDepth: 1 })
          .setProtectedHeader({ alg: 'HS256' })
          .setIssuer(PINNED_ISSUER)
          .setSubject(peer.id)
          .setExpirationTime('300s')
          .sign(Buffer.from(pinnedKey.raw, 'base64')),
      401,
      'AUTH_FAILED',
      /alg "HS256"; only "EdDSA"/,
    ],
  ];

  it.each(refusals)('refuses a token %s', async (_name, make, status, code, message) => {
    const text = unique(`refused ${mode}`);
    const reply = await send(mode, await make(), text);
    expectError(reply, status, code, message);
    expectSignedBy(target.app, reply);
    expect(events).toEqual([
      expect.objectContaining({ verdict: 'delegation', code, status, sender: peer.id, mode }),
    ]);
    expect(events[0]!.onBehalfOf).toBeUndefined();
    expect(systemMessageFor(text)).toBeUndefined();
  });

  it('a refused token does not spend the nonce: the same envelope without it goes through', async () => {
    const text = unique(`retry ${mode}`);
    const env = envelope(peer.id, target.id, mode, { message: text }, { delegationToken: 'bad' });
    expect((await post(target.url, PATHS[mode], sign(env, peer.app.keys.signer))).status).toBe(401);
    delete env.delegationToken;
    const reply = await post(target.url, PATHS[mode], sign(env, peer.app.keys.signer));
    expect(reply.status, reply.text).toBe(mode === 'async' ? 202 : 200);
  });
});

describe('the longest lifetime accepted (issue 15)', () => {
  it('accepts a token of exactly the limit, and follows the setting when the operator changes it', async () => {
    const day = await sdkToken(pinnedKey, { iss: PINNED_ISSUER, sub: peer.id, expiresIn: 86_400 });
    const message = unique('a day-long token');
    await expectDelegatedCall('sync', await send('sync', day, message), message, PINNED_ISSUER);

    target.app.updateSettings({ delegationMaxLifetimeSeconds: 300 });
    try {
      const tenMinutes = await sdkToken(pinnedKey, { iss: PINNED_ISSUER, sub: peer.id, expiresIn: 600 });
      expectError(
        await send('sync', tenMinutes, unique('ten minutes')),
        401,
        'AUTH_FAILED',
        /valid for 600 s .*longer than the 300 s this agent accepts/,
      );
      const fiveMinutes = await sdkToken(pinnedKey, { iss: PINNED_ISSUER, sub: peer.id, expiresIn: 300 });
      expect((await send('sync', fiveMinutes, unique('five minutes'))).status).toBe(200);
    } finally {
      target.app.updateSettings({ delegationMaxLifetimeSeconds: 86_400 });
    }
  });
});

describe('issuers', () => {
  it('accepts an SDK-made token whose issuer serves its card; the card is fetched once and cached', async () => {
    const sdkKey = await sdkKeyPair();
    const sdkAgent = await serveCard(sdkKey);
    try {
      for (const mode of MODES) {
        events.length = 0;
        const token = await sdkToken(sdkKey, { iss: sdkAgent.id, sub: peer.id, scope: ['chat'] });
        const message = unique(`card issuer ${mode}`);
        await expectDelegatedCall(mode, await send(mode, token, message), message, sdkAgent.id);
      }
      expect(sdkAgent.fetches()).toBe(1);
    } finally {
      await sdkAgent.close();
    }
  });

  it("accepts a token the agent itself issued (its own keystore's active key)", async () => {
    const own = new AgentClient({ id: target.id, signer: target.app.keys.signer });
    const token = own.createDelegationToken(peer.id, ['chat']);
    const message = unique('self-issued');
    await expectDelegatedCall('sync', await send('sync', token, message), message, target.id);
  });

  it("refuses a token signed with a key the issuer's card does not list", async () => {
    const rogue = createSigner('k-rogue', privateKeyFromRaw(generateRawKeyPair().privateKey));
    const token = new AgentClient({ id: issuer.id, signer: rogue }).createDelegationToken(peer.id, ['chat']);
    const reply = await send('sync', token, unique('rogue'));
    expectError(reply, 401, 'AUTH_FAILED', /does not verify with any active key of its issuer/);
  });

  it('a task held for the operator keeps its delegation: once approved, the framing still says it', async () => {
    const pairing = await pool.start({
      settings: { access: 'pairing', trustedPeerKeys: { [PINNED_ISSUER]: pinnedKey.raw } },
    });
    const token = await sdkToken(pinnedKey, { iss: PINNED_ISSUER, sub: peer.id });
    const message = unique('held');
    const env = envelope(peer.id, pairing.id, 'async', { message }, { delegationToken: token });
    const reply = await post(pairing.url, PATHS.async, sign(env, peer.app.keys.signer));
    expect(reply.status, reply.text).toBe(202);
    expect(pairing.app.access.approve(peer.id)).toBe(1);
    await until(() => systemMessageFor(message) !== undefined, 5000, 'the held task to reach the gateway');
    expect(systemMessageFor(message)).toContain(`It acts on behalf of "${PINNED_ISSUER}"`);
  });

  it('an unsigned call with a token is refused, when unsigned calls are allowed', async () => {
    const open = await pool.start({ settings: { allowUnsigned: true } });
    const body = JSON.stringify({ skill: 'chat', payload: { message: 'hi' }, delegationToken: 'x.y.z' });
    const reply = await post(open.url, PATHS.sync, { body, headers: { 'content-type': 'application/json' } });
    expectError(reply, 401, 'AUTH_FAILED', /delegation token needs a signed envelope/);
  });
});
