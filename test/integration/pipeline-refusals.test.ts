import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSigner,
  privateKeyFromRaw,
  generateRawKeyPair,
  signObject,
  signRequest,
  type Mode,
} from '../../src/protocol/index.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startAgent, type TestAgent } from '../helpers/agents.js';
import { PATHS, envelope, post, sign, type Form } from '../helpers/envelopes.js';
import { expectError, expectSignedBy } from '../helpers/verify.js';

// Every bad input of PROTOCOL.md §4-§5, in all three modes: the documented code and HTTP status, a
// signed error reply, and (where it matters) a message that says what to fix.
const MODES: Mode[] = ['sync', 'async', 'stream'];

let gateway: GatewayDouble;
let agent: TestAgent;
let peer: TestAgent;

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: 'gw-token' });
  const gatewaySettings = { gatewayUrl: gateway.url, gatewayToken: 'gw-token' };
  agent = await startAgent({ settings: { ...gatewaySettings, bodyLimitBytes: 8192 } });
  peer = await startAgent({ settings: gatewaySettings });
});

afterAll(async () => {
  await agent.close();
  await peer.close();
  await gateway.close();
});

const chat = (mode: Mode, extra = {}) => envelope(peer.id, agent.id, mode, { message: 'hello' }, extra);

describe.each(MODES)('%s mode', (mode) => {
  const path = PATHS[mode];
  const send = (body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    post(agent.url, path, { body, headers });

  it.each<Form>(['headers', 'envelope', 'both'])('accepts a well-signed envelope (form %s)', async (form) => {
    const reply = await post(agent.url, path, sign(chat(mode), peer.app.keys.signer, form));
    expect(reply.status, reply.text).toBe(mode === 'async' ? 202 : 200);
  });

  it('refuses malformed JSON with 400 SCHEMA_INVALID', async () => {
    const reply = await send('{"from": ');
    expectError(reply, 400, 'SCHEMA_INVALID', /not valid JSON/);
    expectSignedBy(agent.app, reply);
  });

  it('refuses a JSON value that is not an object', async () => {
    expectError(await send('[1,2]'), 400, 'SCHEMA_INVALID', /JSON object/);
  });

  it('refuses a wrong content type with 415', async () => {
    const signed = sign(chat(mode), peer.app.keys.signer);
    const reply = await post(agent.url, path, {
      ...signed,
      headers: { ...signed.headers, 'content-type': 'text/plain' },
    });
    expectError(reply, 415, 'SCHEMA_INVALID', /application\/json/);
  });

  it('refuses an oversize body with 413', async () => {
    const big = chat(mode);
    big.payload = { message: 'x'.repeat(9000) };
    const reply = await post(agent.url, path, sign(big, peer.app.keys.signer));
    expectError(reply, 413, 'SCHEMA_INVALID', /larger than 8192 bytes/);
  });

  it('refuses an envelope missing a required field', async () => {
    const env = chat(mode) as unknown as Record<string, unknown>;
    delete env.traceId;
    const body = JSON.stringify(env);
    const headers = {
      'content-type': 'application/json',
      ...signRequest(peer.app.keys.signer, { method: 'POST', path, body }),
    };
    expectError(await send(body, headers), 400, 'SCHEMA_INVALID', /"traceId"/);
  });

  it('refuses an envelope addressed to another agent', async () => {
    const reply = await post(
      agent.url,
      path,
      sign(chat(mode, { to: 'agent://someone.else' }), peer.app.keys.signer),
    );
    expectError(reply, 400, 'SCHEMA_INVALID', new RegExp(`address it to ${agent.id}`));
  });

  it('refuses a mode that does not match the endpoint', async () => {
    const other = MODES.find((m) => m !== mode)!;
    const reply = await post(
      agent.url,
      path,
      sign(chat(mode, { mode: other }), peer.app.keys.signer, 'headers', path),
    );
    expectError(reply, 400, 'SCHEMA_INVALID', /does not match/);
  });

  it('refuses an unknown sender whose card cannot be fetched', async () => {
    const stranger = createSigner('k1', privateKeyFromRaw(generateRawKeyPair().privateKey));
    const env = envelope('agent://127.0.0.1:9', agent.id, mode, { message: 'hi' });
    expectError(
      await post(agent.url, path, sign(env, stranger)),
      401,
      'AUTH_FAILED',
      /card could not be fetched/,
    );
  });

  it('refuses an unknown kid', async () => {
    const raw = generateRawKeyPair();
    const signer = createSigner('no-such-kid', privateKeyFromRaw(raw.privateKey));
    expectError(
      await post(agent.url, path, sign(chat(mode), signer)),
      401,
      'AUTH_FAILED',
      /Unknown key id "no-such-kid"/,
    );
  });

  it('refuses a body altered after signing (Form A)', async () => {
    const signed = sign(chat(mode), peer.app.keys.signer);
    const reply = await post(agent.url, path, { ...signed, body: signed.body.replace('hello', 'HELLO') });
    expectError(reply, 401, 'AUTH_FAILED', /Content-Digest does not match/);
  });

  it('refuses a signature whose digest was recomputed for an altered body', async () => {
    const signed = sign(chat(mode), peer.app.keys.signer);
    const body = signed.body.replace('hello', 'HELLO');
    const forged = signRequest(peer.app.keys.signer, { method: 'POST', path, body });
    const headers = { ...signed.headers, 'content-digest': forged['content-digest'] };
    expectError(await post(agent.url, path, { body, headers }), 401, 'AUTH_FAILED', /does not verify/);
  });

  it('refuses an altered in-envelope field (Form B)', async () => {
    const signed = signObject(chat(mode), peer.app.keys.signer);
    const body = JSON.stringify({ ...signed, payload: { message: 'altered' } });
    expectError(await send(body), 401, 'AUTH_FAILED', /Envelope signature does not verify/);
  });

  it('refuses an in-envelope signed body whose Content-Digest header does not match', async () => {
    const signed = sign(chat(mode), peer.app.keys.signer, 'envelope');
    const headers = {
      ...signed.headers,
      'content-digest': 'sha-256=:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=:',
    };
    expectError(await send(signed.body, headers), 401, 'AUTH_FAILED', /Content-Digest does not match/);
  });

  it('refuses when the two forms disagree (headers valid, envelope signature not)', async () => {
    const env = chat(mode);
    const inBody = signObject({ ...env, payload: { message: 'something else' } }, peer.app.keys.signer);
    const body = JSON.stringify({ ...inBody, payload: env.payload });
    const headers = {
      'content-type': 'application/json',
      ...signRequest(peer.app.keys.signer, { method: 'POST', path, body }),
    };
    expectError(await send(body, headers), 401, 'AUTH_FAILED', /Envelope signature does not verify/);
  });

  it('refuses a stale timestamp and a future one', async () => {
    const stale = chat(mode, { timestamp: new Date(Date.now() - 6 * 60_000).toISOString() });
    expectError(
      await post(agent.url, path, sign(stale, peer.app.keys.signer)),
      401,
      'AUTH_FAILED',
      /more than 5 minutes old/,
    );
    const future = chat(mode, { timestamp: new Date(Date.now() + 2 * 60_000).toISOString() });
    expectError(
      await post(agent.url, path, sign(future, peer.app.keys.signer)),
      401,
      'AUTH_FAILED',
      /in the future/,
    );
  });

  it('refuses a replayed envelope, and a refused signature does not burn the nonce', async () => {
    const signed = sign(chat(mode), peer.app.keys.signer);
    const tampered = await post(agent.url, path, { ...signed, body: signed.body.replace('hello', 'HELLO') });
    expect(tampered.status).toBe(401);
    const first = await post(agent.url, path, signed);
    expect(first.status, first.text).toBe(mode === 'async' ? 202 : 200);
    const replay = await post(agent.url, path, signed);
    expectError(replay, 401, 'REPLAY_DETECTED', /already used/);
    expectSignedBy(agent.app, replay);
  });

  it('refuses an unknown skill with 404', async () => {
    const reply = await post(agent.url, path, sign(chat(mode, { skill: 'translate' }), peer.app.keys.signer));
    expectError(reply, 404, 'SKILL_NOT_FOUND', /No skill "translate"/);
  });

  it('names the field and the rule when the payload breaks the input schema', async () => {
    const missing = chat(mode, { payload: { channel: 'x' } });
    expectError(
      await post(agent.url, path, sign(missing, peer.app.keys.signer)),
      400,
      'SCHEMA_INVALID',
      /payload\.message: is required/,
    );
    const long = chat(mode, { payload: { message: 'hi', channel: 'c'.repeat(65) } });
    expectError(
      await post(agent.url, path, sign(long, peer.app.keys.signer)),
      400,
      'SCHEMA_INVALID',
      /payload\.channel: .*\(pattern\)/,
    );
    const extra = chat(mode, { payload: { message: 'hi', colour: 'red' } });
    expectError(
      await post(agent.url, path, sign(extra, peer.app.keys.signer)),
      400,
      'SCHEMA_INVALID',
      /payload\.colour: is not allowed/,
    );
  });

  it('refuses an unsigned body and says how to sign', async () => {
    const reply = await send(JSON.stringify({ skill: 'chat', payload: { message: 'hi' } }));
    expectError(reply, 401, 'AUTH_FAILED', /signed envelopes only/);
  });

  it('refuses a Signature-Input that does not cover the path', async () => {
    const env = chat(mode);
    const body = JSON.stringify(env);
    const signed = signRequest(peer.app.keys.signer, { method: 'POST', path, body });
    const headers = {
      'content-type': 'application/json',
      ...signed,
      'signature-input': signed['signature-input'].replace('"@path" ', ''),
    };
    expectError(await send(body, headers), 401, 'AUTH_FAILED', /must cover "@path"/);
  });

  it('refuses a signature made for another endpoint', async () => {
    const other = MODES.find((m) => m !== mode)!;
    const reply = await post(
      agent.url,
      path,
      sign(chat(mode), peer.app.keys.signer, 'headers', PATHS[other]),
    );
    expectError(reply, 401, 'AUTH_FAILED', /does not verify/);
  });
});

describe('inactive keys', () => {
  it('refuses a signature by a revoked key, in every mode', async () => {
    const sender = await startAgent();
    try {
      const old = sender.app.keys.signer;
      sender.app.keys.revoke(old.kid);
      for (const mode of MODES) {
        const env = envelope(sender.id, agent.id, mode, { message: 'hi' });
        expectError(await post(agent.url, PATHS[mode], sign(env, old)), 401, 'AUTH_FAILED', /inactive/);
      }
      // The sender's new key works straight away.
      const fresh = envelope(sender.id, agent.id, 'sync', { message: 'hi' });
      expect((await post(agent.url, '/agent/message', sign(fresh, sender.app.keys.signer))).status).toBe(200);
    } finally {
      await sender.close();
    }
  });

  it('re-fetches the card once when a cached sender signs with a new kid (rotation)', async () => {
    const sender = await startAgent();
    try {
      const first = envelope(sender.id, agent.id, 'sync', { message: 'hi' });
      expect((await post(agent.url, '/agent/message', sign(first, sender.app.keys.signer))).status).toBe(200);
      sender.app.keys.rotate();
      const second = envelope(sender.id, agent.id, 'sync', { message: 'hi again' });
      const reply = await post(agent.url, '/agent/message', sign(second, sender.app.keys.signer));
      expect(reply.status, reply.text).toBe(200);
    } finally {
      await sender.close();
    }
  });
});

describe('the agent port', () => {
  it('serves the card with its Cache-Control and nothing but the agent endpoints', async () => {
    const card = await fetch(`${agent.url}/.well-known/agent.json`);
    expect(card.headers.get('cache-control')).toBe('public, max-age=300');
    expect(((await card.json()) as { id: string }).id).toBe(agent.id);
    expect((await fetch(`${agent.url}/api/status`)).status).toBe(404);
    expect((await fetch(`${agent.url}/agent/message`)).status).toBe(405);
  });

  it('answers 404 for an unknown task id', async () => {
    const reply = await fetch(`${agent.url}/agent/task/00000000-0000-4000-8000-000000000000`);
    expect(reply.status).toBe(404);
  });
});
