import { appendFileSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../src/lib/address-policy.js';
import { NonceStore } from '../../src/state/nonce-store.js';
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
  it('refuses a pair seen before, per sender, until it expires', () => {
    let now = 1_000_000;
    const store = new NonceStore(dir(), { now: () => now });
    expect(store.record('agent://a', 'n1', now + 1000)).toBe(true);
    expect(store.record('agent://a', 'n1', now + 1000)).toBe(false);
    expect(store.record('agent://b', 'n1', now + 1000)).toBe(true);
    now += 1001;
    expect(store.record('agent://a', 'n1', now + 1000)).toBe(true);
    store.close();
  });

  it('remembers across a reopen, skips a torn last line, and forgets expired pairs', () => {
    const d = dir();
    let now = 1_000_000;
    const first = new NonceStore(d, { now: () => now });
    first.record('agent://a', 'kept', now + 10_000);
    first.record('agent://a', 'expiring', now + 100);
    first.close();
    appendFileSync(join(d, 'nonces.log'), '99999999999999 "agent://a tor'); // a crash mid-write
    now += 200;
    const second = new NonceStore(d, { now: () => now });
    expect(second.size).toBe(1);
    expect(second.record('agent://a', 'kept', now + 10_000)).toBe(false);
    expect(second.record('agent://a', 'expiring', now + 10_000)).toBe(true);
    second.close();
    expect(statSync(join(d, 'nonces.log')).mode & 0o777).toBe(0o600);
  });

  it('stays bounded: sweeping drops expired pairs and compacts the file', () => {
    const d = dir();
    let now = 1_000_000;
    const store = new NonceStore(d, { now: () => now });
    for (let i = 0; i < 25_000; i++) store.record('agent://a', `nonce-${i}`, now + 1000);
    store.record('agent://a', 'late', now + 60_000);
    now += 2000;
    store.sweep();
    expect(store.size).toBe(1);
    expect(readFileSync(join(d, 'nonces.log'), 'utf8').trim().split('\n')).toHaveLength(1);
    expect(store.record('agent://a', 'late', now + 60_000)).toBe(false);
    store.close();
  });

  it('reports full at its cap instead of forgetting', () => {
    const store = new NonceStore(dir(), { maxEntries: 2 });
    store.record('a', '1', Date.now() + 1000);
    expect(store.full).toBe(false);
    store.record('a', '2', Date.now() + 1000);
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
