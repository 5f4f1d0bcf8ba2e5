import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Skill } from '../../src/agent/skill.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { agentPool, startAgent, type TestAgent } from '../helpers/agents.js';
import { envelope, post, sign } from '../helpers/envelopes.js';
import { expectError } from '../helpers/verify.js';
import type { LocalCallLimits } from '../../src/state/call-limits.js';

let gateway: GatewayDouble;
let peer: TestAgent;
let other: TestAgent;

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: 'gw-token' });
  peer = await startAgent();
  other = await startAgent();
});

afterAll(async () => {
  await agents.closeAll();
  await peer.close();
  await other.close();
  await gateway.close();
});

const agents = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: 'gw-token' }));
const agentWith = agents.start;

// A generic skill, so the trust tiers are tested on the core and not only on `chat`.
function echoSkill(id: string, trust: Skill['trust'], allowedPeers?: string[]): Skill {
  return {
    id,
    name: id,
    description: 'Echoes its input',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    outputSchema: { type: 'object' },
    modes: ['sync', 'async', 'stream'],
    trust,
    ...(allowedPeers ? { allowedPeers } : {}),
    handler: async ({ payload }) => ({ echoed: payload.text }),
  };
}

const call = (
  agent: TestAgent,
  from: TestAgent,
  skill: string,
  extra = {},
  payload: object = { text: 'hi' },
) =>
  post(
    agent.url,
    '/agent/message',
    sign(envelope(from.id, agent.id, 'sync', payload, { skill, ...extra }), from.app.keys.signer),
  );

describe('trust tiers', () => {
  it('authenticated: needs a bearer token the operator configured', async () => {
    const agent = await agentWith({
      settings: { bearerTokens: ['tok-good'] },
      extraSkills: [echoSkill('private', 'authenticated')],
    });
    expectError(await call(agent, peer, 'private'), 403, 'AUTH_FAILED', /needs authentication/);
    expectError(
      await call(agent, peer, 'private', { auth: { scheme: 'bearer', token: 'tok-bad' } }),
      403,
      'AUTH_FAILED',
      /not accepted/,
    );
    const ok = await call(agent, peer, 'private', { auth: { scheme: 'bearer', token: 'tok-good' } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.result).toEqual({ echoed: 'hi' });
    // The card says a bearer token is accepted.
    expect(agent.app.card().auth.schemes).toContain('bearer');
  });

  it('trusted-peers: only ids in allowedPeers', async () => {
    const agent = await agentWith({ extraSkills: [echoSkill('club', 'trusted-peers', [peer.id])] });
    expect((await call(agent, peer, 'club')).status).toBe(200);
    expectError(await call(agent, other, 'club'), 403, 'AUTH_FAILED', /not one; ask the operator/);
    expect(agent.app.card().skills.find((s) => s.id === 'club')?.allowedPeers).toEqual([peer.id]);
  });

  it('chat itself can be limited to allowed peers by a setting', async () => {
    const agent = await agentWith({ settings: { chatTrust: 'trusted-peers', allowedPeers: [other.id] } });
    expect((await call(agent, other, 'chat', {}, { message: 'hi' })).status).toBe(200);
    expectError(await call(agent, peer, 'chat', {}, { message: 'hi' }), 403, 'AUTH_FAILED');
  });

  it('a trust refusal does not burn the nonce', async () => {
    const agent = await agentWith({
      settings: { bearerTokens: ['tok'] },
      extraSkills: [echoSkill('private', 'authenticated')],
    });
    const env = envelope(peer.id, agent.id, 'sync', { text: 'x' }, { skill: 'private' });
    expect((await post(agent.url, '/agent/message', sign(env, peer.app.keys.signer))).status).toBe(403);
    const withToken = { ...env, auth: { scheme: 'bearer' as const, token: 'tok' } };
    expect((await post(agent.url, '/agent/message', sign(withToken, peer.app.keys.signer))).status).toBe(200);
  });
});

describe('rate limits from the card', () => {
  it('per sender per minute, then global per minute, with Retry-After; refused requests keep their nonce', async () => {
    let offset = 0;
    const agent = await agentWith({ settings: { rpm: 3, perSender: 2 }, now: () => Date.now() + offset });
    expect((await call(agent, peer, 'chat', {}, { message: '1' })).status).toBe(200);
    expect((await call(agent, peer, 'chat', {}, { message: '2' })).status).toBe(200);
    const refusedEnvelope = envelope(peer.id, agent.id, 'sync', { message: '3' });
    const refused = await post(agent.url, '/agent/message', sign(refusedEnvelope, peer.app.keys.signer));
    expectError(refused, 429, 'RATE_LIMITED', /per-sender limit/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    expect((await call(agent, other, 'chat', {}, { message: '4' })).status).toBe(200);
    const global = await call(agent, other, 'chat', {}, { message: '5' });
    expectError(global, 429, 'RATE_LIMITED', /requests per minute/);
    expect(Number(global.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // A minute later the very same envelope goes through: the 429 did not record its nonce.
    offset = 61_000;
    const retried = await post(agent.url, '/agent/message', sign(refusedEnvelope, peer.app.keys.signer));
    expect(retried.status, retried.text).toBe(200);
  });
});

describe('daily token budget', () => {
  it('counts the gateway usage per sender and refuses past the budget until UTC midnight, across a restart', async () => {
    gateway.set({ usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    const agent = await agentWith({ settings: { tokensPerDay: 20 } });
    expect((await call(agent, peer, 'chat', {}, { message: 'a' })).status).toBe(200);
    expect((await call(agent, peer, 'chat', {}, { message: 'b' })).status).toBe(200);
    const refused = await call(agent, peer, 'chat', {}, { message: 'c' });
    expectError(refused, 429, 'TOKEN_BUDGET_EXCEEDED', /resets at UTC midnight/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    const now = new Date();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    expect(Math.abs(retryAfter - (midnight - Date.now()) / 1000)).toBeLessThan(5);
    // Another sender has its own budget.
    expect((await call(agent, other, 'chat', {}, { message: 'd' })).status).toBe(200);

    await agent.stop();
    const again = await agentWith({ dataDir: agent.dataDir, settings: { tokensPerDay: 20 } });
    expectError(await call(again, peer, 'chat', {}, { message: 'e' }), 429, 'TOKEN_BUDGET_EXCEEDED');
  });

  it('a call refused after the limits, or held for the operator, gives its reservation back at once', async () => {
    const agent = await agentWith({ settings: { tokensPerDay: 100_000, access: 'pairing' } });
    const committed = () => (agent.app.server.limits as LocalCallLimits).ledger.committed(peer.id);
    // Refused at the input step (the chat skill takes no `text`): nothing stays held.
    expectError(await call(agent, peer, 'chat', {}, { text: 'hi' }), 400, 'SCHEMA_INVALID');
    expect(committed()).toBe(0);
    // Refused at the access step (pairing: the operator has not approved it yet), then held (async).
    expectError(await call(agent, peer, 'chat', {}, { message: 'hi' }), 403, 'AUTH_FAILED');
    const held = await post(
      agent.url,
      '/agent/task',
      sign(envelope(peer.id, agent.id, 'async', { message: 'later' }), peer.app.keys.signer),
    );
    expect(held.status, held.text).toBe(202);
    expect(committed()).toBe(0);
  });

  it('counts the sizes (about 4 characters a token) when the gateway reports no usage', async () => {
    gateway.set({ usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } });
    try {
      // 400 characters in, 406 out ("echo: " + the message): 202 tokens a call against a budget of 300.
      const agent = await agentWith({ settings: { tokensPerDay: 300 } });
      const message = 'x'.repeat(400);
      expect((await call(agent, peer, 'chat', {}, { message })).status).toBe(200);
      expect((agent.app.server.limits as LocalCallLimits).ledger.spent(peer.id)).toBe(202);
      expect((await call(agent, peer, 'chat', {}, { message })).status).toBe(200);
      expectError(await call(agent, peer, 'chat', {}, { message }), 429, 'TOKEN_BUDGET_EXCEEDED');
    } finally {
      gateway.set({ usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    }
  });
});

describe('unsigned calls (allowed by the operator)', () => {
  it('are answered for public skills, and never share a gateway conversation', async () => {
    const agent = await agentWith({ settings: { allowUnsigned: true } });
    gateway.requests.length = 0;
    for (const message of ['one', 'two']) {
      const reply = await post(agent.url, '/agent/message', {
        body: JSON.stringify({ skill: 'chat', payload: { message } }),
        headers: { 'content-type': 'application/json' },
      });
      expect(reply.status, reply.text).toBe(200);
    }
    const users = gateway.requests
      .filter((r) => r.path === '/v1/chat/completions')
      .map((r) => (r.json as { user?: string }).user);
    expect(users).toHaveLength(2);
    for (const user of users) expect(user ?? '').toBe('');
  });
});
