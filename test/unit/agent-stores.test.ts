import { appendFileSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../src/lib/address-policy.js';
import { NonceStore, nonceKey } from '../../src/state/nonce-store.js';
import { RateLimiter } from '../../src/state/rate-limits.js';
import { TokenLedger } from '../../src/state/token-ledger.js';
import { tempDir } from '../helpers/agents.js';

const dirs: string[] = [];
const dir = () => {
  const d = tempDir();
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('NonceStore', () => {
  const key = nonceKey;

  it('refuses a pair seen before, per sender, until it expires', () => {
    let now = 1_000_000;
    const store = new NonceStore(dir(), { now: () => now });
    expect(store.record(key('agent://a', 'n1'), now + 1000)).toBe(true);
    expect(store.has(key('agent://a', 'n1'))).toBe(true);
    expect(store.record(key('agent://a', 'n1'), now + 1000)).toBe(false);
    expect(store.record(key('agent://b', 'n1'), now + 1000)).toBe(true);
    now += 1001;
    expect(store.has(key('agent://a', 'n1'))).toBe(false);
    expect(store.record(key('agent://a', 'n1'), now + 1000)).toBe(true);
    store.close();
  });

  it('keys each pair apart: a sender and a nonce cannot be re-cut into another pair', () => {
    expect(key('agent://a', 'bc')).not.toEqual(key('agent://ab', 'c'));
    expect(key('agent://a', 'n1')).toEqual(key('agent://a', 'n1'));
  });

  it('remembers across a reopen, skips a torn last line, and forgets expired pairs', () => {
    const d = dir();
    let now = 1_000_000;
    const first = new NonceStore(d, { now: () => now });
    first.record(key('agent://a', 'kept'), now + 10_000);
    first.record(key('agent://a', 'expiring'), now + 100);
    first.close();
    appendFileSync(join(d, 'nonces.log'), '99999999999999 0123abc'); // a crash mid-write
    now += 1000;
    const second = new NonceStore(d, { now: () => now });
    expect(second.size).toBe(1);
    expect(second.record(key('agent://a', 'kept'), now + 10_000)).toBe(false);
    expect(second.record(key('agent://a', 'expiring'), now + 10_000)).toBe(true);
    second.close();
    expect(statSync(join(d, 'nonces.log')).mode & 0o777).toBe(0o600);
  });

  it('keeps no sender id or nonce in its log, and still reads a log written by the earlier version', () => {
    const d = dir();
    const now = 1_000_000;
    // The earlier version wrote each pair as JSON: a replay right after the upgrade is still refused.
    writeFileSync(join(d, 'nonces.log'), `${now + 10_000} "agent://a before-upgrade"\n`);
    const store = new NonceStore(d, { now: () => now });
    expect(store.has(key('agent://a', 'before-upgrade'))).toBe(true);
    store.record(key('agent://a', 'after-upgrade'), now + 10_000);
    store.close();
    const log = readFileSync(join(d, 'nonces.log'), 'utf8');
    expect(log).not.toMatch(/agent:|upgrade/);
    expect(log.trim().split('\n')).toHaveLength(2);
  });

  it('stays bounded: sweeping drops expired pairs and compacts the file', () => {
    const d = dir();
    let now = 1_000_000;
    const store = new NonceStore(d, { now: () => now });
    for (let i = 0; i < 25_000; i++) store.record(key('agent://a', `nonce-${i}`), now + 1000);
    store.record(key('agent://a', 'late'), now + 60_000);
    now += 2000;
    store.sweep();
    expect(store.size).toBe(1);
    expect(readFileSync(join(d, 'nonces.log'), 'utf8').trim().split('\n')).toHaveLength(1);
    expect(store.record(key('agent://a', 'late'), now + 60_000)).toBe(false);
    store.close();
  });

  it('answers as a plain map would through growth, expiry, sweeps and shrinking', () => {
    let now = 1_000_000;
    const store = new NonceStore(dir(), { now: () => now });
    const model = new Map<string, number>();
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 40; round++) {
      for (let i = 0; i < 1500; i++) {
        // Reused nonces (a small space) exercise replays and expired pairs coming back.
        const nonce = `n${random(20_000)}`;
        const expiresAt = now + 1000 * (1 + random(8));
        const live = (model.get(nonce) ?? 0) > now;
        expect(store.has(key('agent://a', nonce))).toBe(live);
        expect(store.record(key('agent://a', nonce), expiresAt)).toBe(!live);
        if (!live) model.set(nonce, Math.ceil(expiresAt / 1000) * 1000);
      }
      now += 1000 * random(4);
      if (round % 3 === 0) store.sweep();
    }
    for (let i = 0; i < 20_000; i++)
      expect(store.has(key('agent://a', `n${i}`))).toBe((model.get(`n${i}`) ?? 0) > now);
    now += 10_000;
    store.sweep();
    expect(store.size).toBe(0);
    store.close();
  });

  it('reports full at its cap instead of forgetting', () => {
    const store = new NonceStore(dir(), { maxEntries: 2 });
    store.record(key('a', '1'), Date.now() + 1000);
    expect(store.full).toBe(false);
    store.record(key('a', '2'), Date.now() + 1000);
    expect(store.full).toBe(true);
    store.close();
  });
});

describe('RateLimiter', () => {
  it('allows a burst up to the limit, then says how long to wait, and refills over time', () => {
    let now = 0;
    const limiter = new RateLimiter(3, () => now);
    for (let i = 0; i < 3; i++) {
      expect(limiter.wait('s')).toBe(0);
      limiter.take('s');
    }
    expect(limiter.wait('s')).toBe(20);
    expect(limiter.wait('other')).toBe(0);
    now += 20_000;
    expect(limiter.wait('s')).toBe(0);
  });

  it('forgets full buckets when swept', () => {
    let now = 0;
    const limiter = new RateLimiter(60, () => now);
    limiter.take('a');
    limiter.take('b');
    now += 60_000;
    limiter.sweep();
    expect(limiter.size).toBe(0);
  });
});

describe('TokenLedger', () => {
  it('adds usage per sender, resets at UTC midnight, and persists', () => {
    const d = dir();
    let now = Date.UTC(2026, 10, 25, 23, 59, 0);
    const ledger = new TokenLedger(d, () => now);
    ledger.add('agent://a', 15);
    ledger.add('agent://a', 0);
    ledger.add('agent://a', Number.NaN);
    expect(ledger.spent('agent://a')).toBe(15);
    expect(ledger.secondsUntilReset()).toBe(60);
    ledger.flush();
    expect(new TokenLedger(d, () => now).spent('agent://a')).toBe(15);
    now += 61_000;
    expect(ledger.spent('agent://a')).toBe(0);
    expect(new TokenLedger(d, () => now).spent('agent://a')).toBe(0);
  });

  it('keeps the prompt floor across restarts and days', () => {
    const d = dir();
    let now = Date.UTC(2026, 10, 25, 23, 59, 0);
    const ledger = new TokenLedger(d, () => now);
    ledger.notePrompt(2400);
    ledger.notePrompt(3000);
    ledger.flush();
    expect(new TokenLedger(d, () => now).promptFloor).toBe(2400);
    now += 120_000;
    expect(new TokenLedger(d, () => now).promptFloor).toBe(2400);
  });

  it('holds reservations in memory only, for their day', () => {
    const d = dir();
    let now = Date.UTC(2026, 10, 25, 23, 59, 0);
    const ledger = new TokenLedger(d, () => now);
    ledger.reserve('agent://a', 900);
    expect(ledger.committed('agent://a')).toBe(900);
    expect(ledger.spent('agent://a')).toBe(0);
    ledger.flush();
    expect(new TokenLedger(d, () => now).committed('agent://a')).toBe(0);
    // Past midnight yesterday's reservation is gone with its day, and its release takes nothing from today.
    now += 120_000;
    ledger.reserve('agent://a', 500);
    ledger.release('agent://a', 900, now - 120_000);
    expect(ledger.committed('agent://a')).toBe(500);
    ledger.release('agent://a', 500, now);
    expect(ledger.committed('agent://a')).toBe(0);
  });
});

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fe80::1',
    'fd12::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '224.0.0.1',
    'not-an-ip',
  ])('refuses %s', (address) => expect(isPublicAddress(address)).toBe(false));
  it.each(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) =>
    expect(isPublicAddress(address)).toBe(true),
  );
});
