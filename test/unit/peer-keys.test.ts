import { describe, expect, it } from 'vitest';
import { PeerKeyResolver } from '../../src/agent/peer-keys.js';
import { CardFetchError, fetchPeerCard } from '../../src/agent/card-fetch.js';
import { buildCard, generateRawKeyPair, type AgentCard } from '../../src/protocol/index.js';

const keyA = generateRawKeyPair();
const keyB = generateRawKeyPair();
const ID = 'agent://peer.example';

function card(keys: { kid: string; key: string; active: boolean }[], cardTTL = 300): AgentCard {
  return buildCard({
    url: 'https://peer.example',
    name: 'Peer',
    version: '1',
    description: 'd',
    specializations: [],
    models: [],
    skills: [
      {
        id: 's',
        name: 's',
        description: 'd',
        inputSchema: {},
        outputSchema: {},
        modes: ['sync'],
        trust: 'public',
      },
    ],
    publicKeys: keys,
    rateLimit: { requestsPerMinute: 1, requestsPerSender: 1, tokensPerSenderPerDay: 1 },
    cardTTL,
  });
}

function resolverWith(cards: (() => AgentCard | Error)[], now = { t: 0 }) {
  const fetched: string[] = [];
  const resolver = new PeerKeyResolver({
    now: () => now.t,
    fetchCard: async (id) => {
      fetched.push(id);
      const next = (cards.length > 1 ? cards.shift() : cards[0])!();
      if (next instanceof Error) throw next;
      return next;
    },
  });
  return { resolver, fetched, now };
}

describe('PeerKeyResolver', () => {
  it('fetches a card once and caches it for its cardTTL', async () => {
    const { resolver, fetched, now } = resolverWith([
      () => card([{ kid: 'a', key: keyA.publicKey, active: true }], 60),
    ]);
    await resolver.resolve(ID, 'a');
    await resolver.resolve(ID, 'a');
    expect(fetched).toHaveLength(1);
    now.t += 61_000;
    await resolver.resolve(ID, 'a');
    expect(fetched).toHaveLength(2);
  });

  it('clamps a zero cardTTL so a peer cannot force a fetch per request', async () => {
    const { resolver, fetched, now } = resolverWith([
      () => card([{ kid: 'a', key: keyA.publicKey, active: true }], 0),
    ]);
    await resolver.resolve(ID, 'a');
    now.t += 5000;
    await resolver.resolve(ID, 'a');
    expect(fetched).toHaveLength(1);
  });

  it('re-fetches once for an unknown kid (rotation), at most once per interval, and not on first contact', async () => {
    const { resolver, fetched, now } = resolverWith([
      () => card([{ kid: 'a', key: keyA.publicKey, active: true }]),
      () => card([{ kid: 'b', key: keyB.publicKey, active: true }]),
    ]);
    await resolver.resolve(ID, 'a');
    await expect(resolver.resolve(ID, 'b')).resolves.toMatchObject({ source: 'card' });
    expect(fetched).toHaveLength(2);
    await expect(resolver.resolve(ID, 'zzz')).rejects.toThrow(/Unknown key id "zzz"/);
    expect(fetched).toHaveLength(2);
    now.t += 10_500;
    await expect(resolver.resolve(ID, 'zzz')).rejects.toThrow(/Unknown key id/);
    expect(fetched).toHaveLength(3);

    const fresh = resolverWith([() => card([{ kid: 'a', key: keyA.publicKey, active: true }])]);
    await expect(fresh.resolver.resolve(ID, 'unknown')).rejects.toThrow(/Unknown key id/);
    expect(fresh.fetched).toHaveLength(1);
  });

  it('keeps the card it had when a forced re-fetch fails, so a random kid cannot lock a sender out', async () => {
    const { resolver, fetched, now } = resolverWith([
      () => card([{ kid: 'a', key: keyA.publicKey, active: true }]),
      () => new CardFetchError('timeout'),
    ]);
    await resolver.resolve(ID, 'a');
    now.t += 1000;
    await expect(resolver.resolve(ID, 'random-kid')).rejects.toThrow(/Unknown key id/);
    expect(fetched).toHaveLength(2);
    await expect(resolver.resolve(ID, 'a')).resolves.toMatchObject({ source: 'card' });
  });

  it('bounds card fetches for unknown senders per minute', async () => {
    let n = 0;
    const resolver = new PeerKeyResolver({
      fetchesPerMinute: 3,
      newSenderShare: 1,
      fetchCard: async () => {
        n++;
        throw new CardFetchError('refused');
      },
    });
    for (let i = 0; i < 3; i++) {
      await expect(resolver.resolve(`agent://s${i}.example`, 'k')).rejects.toThrow(/could not be fetched/);
    }
    await expect(resolver.resolve('agent://s9.example', 'k')).rejects.toMatchObject({
      code: 'AGENT_UNAVAILABLE',
      httpStatus: 503,
    });
    expect(n).toBe(3);
  });

  it("keeps a reserve for trusted senders' expired cards that strangers cannot spend, not even in their name", async () => {
    const now = { t: 0 };
    const fetched: string[] = [];
    const friend = 'agent://friend.example';
    const resolver = new PeerKeyResolver({
      now: () => now.t,
      fetchesPerMinute: 2,
      newSenderShare: 1,
      trustedFetchesPerMinute: 1,
      trusted: (sender) => sender === friend,
      fetchCard: async (id) => {
        fetched.push(id);
        const ttl = id === friend ? 300 : 60;
        return { ...card([{ kid: 'a', key: keyA.publicKey, active: true }], ttl), id };
      },
    });
    const strangersSpendTheSharedBudget = async (first: number) => {
      await resolver.resolve(`agent://s${first}.example`, 'a');
      await resolver.resolve(`agent://s${first + 1}.example`, 'a');
      await expect(resolver.resolve(`agent://s${first + 2}.example`, 'a')).rejects.toMatchObject({
        httpStatus: 503,
      });
    };
    await strangersSpendTheSharedBudget(1);
    await expect(resolver.resolve(friend, 'a')).resolves.toMatchObject({ source: 'card' });
    // A minute on, the reserve is full again: a re-fetch for an unknown kid in the friend's name (anyone may
    // send one) is not served from it.
    now.t += 61_000;
    await strangersSpendTheSharedBudget(4);
    await expect(resolver.resolve(friend, 'unknown')).rejects.toThrow(/Unknown key id/);
    expect(fetched.filter((id) => id === friend)).toHaveLength(1);
    // The friend's card has expired: fetched from the reserve, the shared budget spent.
    now.t += 300_000;
    await strangersSpendTheSharedBudget(7);
    await expect(resolver.resolve(friend, 'a')).resolves.toMatchObject({ source: 'card' });
    expect(fetched.filter((id) => id === friend)).toHaveLength(2);
  });

  it('refuses an inactive key', async () => {
    const { resolver } = resolverWith([
      () =>
        card([
          { kid: 'a', key: keyA.publicKey, active: false },
          { kid: 'b', key: keyB.publicKey, active: true },
        ]),
    ]);
    await expect(resolver.resolve(ID, 'a')).rejects.toThrow(/inactive/);
  });

  it('remembers a failed fetch for a short while (negative cache)', async () => {
    const { resolver, fetched, now } = resolverWith([() => new CardFetchError('connection refused')]);
    // The caller is not told why (that would scan the operator's network); the log is, through the cause.
    const error = (await resolver.resolve(ID, 'a').catch((e: unknown) => e)) as Error & { cause?: Error };
    expect(error.message).toMatch(/card could not be fetched\. Serve a valid card/);
    expect(error.message).not.toMatch(/refused/);
    expect(error.cause?.message).toMatch(/connection refused/);
    await expect(resolver.resolve(ID, 'a')).rejects.toThrow(/could not be fetched/);
    expect(fetched).toHaveLength(1);
    now.t += 31_000;
    await expect(resolver.resolve(ID, 'a')).rejects.toThrow();
    expect(fetched).toHaveLength(2);
  });

  it('shares one fetch among concurrent requests', async () => {
    const { resolver, fetched } = resolverWith([
      () => card([{ kid: 'a', key: keyA.publicKey, active: true }]),
    ]);
    await Promise.all([resolver.resolve(ID, 'a'), resolver.resolve(ID, 'a'), resolver.resolve(ID, 'a')]);
    expect(fetched).toHaveLength(1);
  });

  it('uses a pinned key for any kid and never fetches for that sender', async () => {
    const { fetched } = resolverWith([() => new Error('should not fetch')]);
    const resolver = new PeerKeyResolver({
      pinned: { [ID]: keyA.publicKey },
      fetchCard: async () => {
        fetched.push('x');
        throw new Error('no');
      },
    });
    await expect(resolver.resolve(ID, 'whatever')).resolves.toMatchObject({ source: 'pinned' });
    expect(fetched).toHaveLength(0);
    expect(() => resolver.setPinned({ [ID]: 'not-a-key' })).toThrow(/not a base64 32-byte/);
  });
});

describe('fetchPeerCard address rule', () => {
  const options = { devHttpPeers: false, timeoutMs: 2000, maxBytes: 64 * 1024 };

  it.each([
    'agent://10.0.0.5:8443',
    'agent://127.0.0.1:8787',
    'agent://169.254.169.254',
    'agent://[::1]:8443',
  ])('never fetches a card from a non-public address literal: %s', async (id) => {
    await expect(fetchPeerCard(id, options)).rejects.toThrow(/is not a public address/);
  });

  it('checks the resolved address too: a name that resolves to loopback is refused', async () => {
    await expect(fetchPeerCard('agent://intranet.localhost:8443', options)).rejects.toThrow(
      /non-public address|ENOTPUBLIC|loopback name/,
    );
  });
});
