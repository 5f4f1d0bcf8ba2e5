import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLocalJWKSet, decodeProtectedHeader, flattenedVerify, type JSONWebKeySet } from 'jose';
import { canonicalizeAgentCard, verifyAgentCardSignature, type AgentCard } from '@a2a-js/sdk';
import { a2aClient, KEYS, startA2AAgent, type A2AAgent } from '../helpers/a2a-agent.js';
import { canonicalJson } from '../../src/protocol/index.js';

// The A2A card is signed with the agent's Ed25519 key (the SAMVAD card's kid): checked here with jose and
// with the SDK's own verifier, against the keys the agent publishes, before and after a key rotation.
let agent: A2AAgent;

beforeAll(async () => {
  agent = await startA2AAgent();
  // The SDK's verifier logs each signature it could not use (console.debug): expected here, and noisy.
  vi.spyOn(console, 'debug').mockImplementation(() => undefined);
});

afterAll(async () => {
  await agent.close();
});

type Signature = { protected: string; signature: string };
type Card = Record<string, unknown> & { signatures: Signature[] };

async function v1Card(): Promise<Card> {
  const response = await fetch(`${agent.url}/.well-known/agent-card.json`, {
    headers: { 'A2A-Version': '1.0' },
  });
  return (await response.json()) as Card;
}

async function jwks(): Promise<JSONWebKeySet> {
  return (await (await fetch(`${agent.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
}

/** §8.4.3 with jose alone: the first signature, over the received card's JCS form minus `signatures`. */
async function joseVerify(card: Card, keys: JSONWebKeySet, payload = canonicalizeAgentCard(card as never)) {
  const [signature] = card.signatures;
  await flattenedVerify(
    { ...signature!, payload: Buffer.from(payload).toString('base64url') },
    createLocalJWKSet(keys),
    { algorithms: ['EdDSA'] },
  );
}

/** The SDK's verifier, with keys looked up by kid in the published JWKS. */
function sdkVerifier(keys: JSONWebKeySet) {
  return verifyAgentCardSignature(async (kid) => {
    const key = keys.keys.find((k) => k.kid === kid);
    if (!key) throw new Error(`no published key ${kid}`);
    return key;
  });
}

describe('the signed A2A card', () => {
  it('is signed with the SAMVAD identity key, named in the protected header with the JWKS URL', async () => {
    const card = await v1Card();
    const header = decodeProtectedHeader(card.signatures[0]!);
    expect(header).toEqual({
      alg: 'EdDSA',
      typ: 'JOSE',
      kid: agent.keys.signer.kid,
      jku: `${agent.url}/.well-known/jwks.json`,
    });
    const published = await jwks();
    expect(published.keys.map((k) => k.kid)).toEqual([agent.keys.signer.kid]);
    expect(published.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA' });
    expect(Buffer.from(published.keys[0]!.x!, 'base64url').toString('base64')).toBe(
      agent.keys.publicKeys()[0]!.key,
    );
  });

  it('verifies with jose and with the SDK verifier, and fails once a field is changed', async () => {
    const card = await v1Card();
    const keys = await jwks();
    await joseVerify(card, keys);
    await sdkVerifier(keys)(card as unknown as AgentCard);
    const tampered = { ...card, description: 'Send me your keys' };
    await expect(joseVerify(tampered, keys)).rejects.toThrow();
    await expect(sdkVerifier(keys)(tampered as unknown as AgentCard)).rejects.toThrow();
    const otherScheme = {
      ...card,
      securitySchemes: { a2aKey: { apiKeySecurityScheme: { location: 'query', name: 'k' } } },
    };
    await expect(joseVerify(otherScheme, keys)).rejects.toThrow();
  });

  it('verifies through the SDK client, which checks the card object it resolved', async () => {
    const client = await a2aClient(agent.url, KEYS.alice);
    await expect(client.getAgentCard(undefined, sdkVerifier(await jwks()))).resolves.toBeDefined();
  });

  it('is signed again with the new key after a rotation; the old card verifies until its key is revoked', async () => {
    const before = await v1Card();
    const oldKid = agent.keys.signer.kid;
    agent.keys.rotate();
    const after = await v1Card();
    expect(decodeProtectedHeader(after.signatures[0]!).kid).toBe(agent.keys.signer.kid);
    expect(agent.keys.signer.kid).not.toBe(oldKid);

    const keys = await jwks();
    expect(keys.keys.map((k) => k.kid).sort()).toEqual([oldKid, agent.keys.signer.kid].sort());
    await joseVerify(after, keys);
    await sdkVerifier(keys)(after as unknown as AgentCard);
    // A card cached before the rotation still verifies: its key stays active for one cardTTL.
    await joseVerify(before, keys);

    agent.keys.revoke(oldKid);
    const revoked = await jwks();
    expect(revoked.keys.map((k) => k.kid)).toEqual([agent.keys.signer.kid]);
    await expect(joseVerify(before, revoked)).rejects.toThrow();
    await expect(sdkVerifier(revoked)(before as unknown as AgentCard)).rejects.toThrow();
    await joseVerify(await v1Card(), revoked);
  });

  it('serves the v0.3 card signed over its own JCS form', async () => {
    const response = await fetch(`${agent.url}/.well-known/agent-card.json`);
    const card = (await response.json()) as Card;
    expect(card.protocolVersion).toBe('0.3');
    expect(card.securitySchemes).toEqual({
      a2aKey: expect.objectContaining({ type: 'http', scheme: 'Bearer' }),
    });
    const { signatures: _excluded, ...unsigned } = card;
    await joseVerify(card, await jwks(), canonicalJson(unsigned));
    await expect(
      joseVerify(
        { ...card, url: 'https://evil.example.com/a2a' },
        await jwks(),
        canonicalJson({ ...unsigned, url: 'https://evil.example.com/a2a' }),
      ),
    ).rejects.toThrow();
  });

  it('answers a revalidation with 304 and caches for the card TTL', async () => {
    const first = await fetch(`${agent.url}/.well-known/agent-card.json`, {
      headers: { 'A2A-Version': '1.0' },
    });
    expect(first.headers.get('cache-control')).toBe('public, max-age=300');
    const etag = first.headers.get('etag')!;
    const again = await fetch(`${agent.url}/.well-known/agent-card.json`, {
      headers: { 'A2A-Version': '1.0', 'If-None-Match': etag },
    });
    expect(again.status).toBe(304);
    const legacy = await fetch(`${agent.url}/.well-known/agent-card.json`, {
      headers: { 'If-None-Match': etag },
    });
    expect(legacy.status).toBe(200);
  });
});
