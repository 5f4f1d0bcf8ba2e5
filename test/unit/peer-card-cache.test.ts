// Issue 16 (loose end of issue 15, finding 6, on the agent side): the peer card cache kept 10,000 cards,
// evicted the oldest fetched (an active sender too), and kept expired cards until pushed out; with hostile
// cards (32 keys with 256-character kids) that is about 160 MB. Measured on the heap after a full GC.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { PeerKeyResolver, type PeerKeyOptions } from '../../src/agent/peer-keys.js';
import { ExpiringLru } from '../../src/lib/expiring-lru.js';
import { buildCard, generateRawKeyPair, type AgentCard } from '../../src/protocol/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const held = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const { publicKey } = generateRawKeyPair();
const ACTIVE = 'agent://regular.example';

/** The largest card the schema allows in what the cache keeps: 32 keys, 256-character kids, long texts. */
function hostileCard(id: string): AgentCard {
  return {
    ...buildCard({
      url: `https://${id.slice(8)}`,
      name: `N${id}`.padEnd(100, 'n'),
      version: '1',
      description: `D${id}`.padEnd(500, 'd'),
      specializations: [],
      models: [],
      skills: [],
      publicKeys: Array.from({ length: 32 }, (_, i) => ({
        kid: `${i}-${id}`.padEnd(256, 'k'),
        key: publicKey,
        active: true,
      })),
      rateLimit: { requestsPerMinute: 1, requestsPerSender: 1, tokensPerSenderPerDay: 1 },
      cardTTL: 300,
    }),
    id,
  };
}

function cache(options: PeerKeyOptions = {}) {
  const now = { t: 1_000_000 };
  const fetched: string[] = [];
  const resolver = new PeerKeyResolver({
    now: () => now.t,
    // Budgets are another test's subject: here every sender is fetched.
    fetchesPerMinute: 1_000_000,
    ...options,
    fetchCard: async (id) => {
      fetched.push(id);
      return hostileCard(id);
    },
  });
  // Each call names the first kid of the sender's card, as a signed call would.
  const call = (id: string) => resolver.resolve(id, `0-${id}`.padEnd(256, 'k'));
  return { resolver, fetched, now, call };
}

describe('the peer card cache', () => {
  it('stays under its weight over 3,000 distinct senders with the largest cards, and forgets them once expired', async () => {
    const { resolver, now, call } = cache();
    const before = held();
    for (let i = 0; i < 3000; i++) await call(`agent://s${i}.example`);
    const grown = held() - before;
    expect(grown / 2 ** 20, `${(grown / 2 ** 20).toFixed(1)} MB held`).toBeLessThan(10);
    now.t += 301_000; // past every cardTTL
    resolver.sweep();
    expect(resolver.cachedCards).toBe(0);
    expect((held() - before) / 2 ** 20, 'MB held after the sweep').toBeLessThan(1);
  }, 60_000);

  it('keeps a sender that keeps calling while a flood of new senders passes through', async () => {
    const { fetched, call } = cache({ maxEntries: 200 });
    for (let i = 0; i < 1000; i++) {
      await call(`agent://s${i}.example`);
      if (i % 50 === 0) await call(ACTIVE);
    }
    expect(fetched.filter((id) => id === ACTIVE)).toHaveLength(1);
  });
});

describe('ExpiringLru', () => {
  it('evicts the least recently used past its weight, keeps the newest, and forgets what expired', () => {
    let now = 0;
    const lru = new ExpiringLru<string>({ maxEntries: 10, maxWeight: 10, now: () => now });
    lru.set('a', 'A', 100, 4);
    lru.set('b', 'B', 100, 4);
    expect(lru.get('a')).toBe('A'); // a is now the more recent
    lru.set('c', 'C', 50, 4);
    expect([lru.peek('a'), lru.peek('b'), lru.peek('c')]).toEqual(['A', undefined, 'C']);
    expect(lru.weight).toBe(8);
    lru.set('huge', 'H', 100, 50); // alone over the weight: kept, everything older goes
    expect([lru.size, lru.peek('huge')]).toEqual([1, 'H']);
    lru.set('d', 'D', 50, 1);
    now = 50;
    expect(lru.get('d')).toBeUndefined();
    lru.sweep();
    expect([lru.size, lru.weight]).toEqual([0, 0]);
  });
});
