import { readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { A2AKeyError, A2AKeys, MAX_ACTIVE_KEYS, keyIdOf } from '../../src/access/a2a-keys.js';
import { A2A_KEYS_FILE, A2AKeyFile, type A2AKeyRecords } from '../../src/state/a2a-key-store.js';
import { tempDir } from '../helpers/agents.js';

// The A2A keys over the data-dir store (the Redis one passes the same contract: state-contract.test.ts).
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const DAY = 86_400_000;

function setup(options: { records?: A2AKeyRecords; dir?: string } = {}) {
  const dir = options.dir ?? tempDir('a2a-keys-');
  if (!options.dir) cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const clock = { now: Date.UTC(2025, 5, 1, 12) };
  const records = options.records ?? new A2AKeyFile(dir);
  const keys = new A2AKeys({ records, now: () => clock.now });
  cleanups.push(() => keys.close());
  return { dir, clock, records, keys, file: join(dir, A2A_KEYS_FILE) };
}

async function issueError(keys: A2AKeys, input: unknown): Promise<A2AKeyError> {
  const error = await keys.issue(input).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(A2AKeyError);
  return error as A2AKeyError;
}

describe('issuing a key', () => {
  it('gives a 256-bit key with a greppable prefix once, and keeps only its hash (0600, atomic)', async () => {
    const { keys, dir, file } = setup();
    const { key, secret } = await keys.issue({ name: '  Research agent  ' });
    expect(secret).toMatch(/^abk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    // 43 base64url characters: 32 random bytes.
    expect(Buffer.from(secret.split('_').slice(2).join('_'), 'base64url')).toHaveLength(32);
    expect(secret.slice(4, 16)).toBe(key.id);
    expect(key).toEqual({
      id: key.id,
      name: 'Research agent',
      caller: `a2a-key:${key.id}`,
      createdAt: '2025-06-01T12:00:00.000Z',
      limits: {},
      calls: 0,
      status: 'active',
    });
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.slice(17));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Written through a temp file renamed over it: nothing else is left in the data dir.
    expect(readdirSync(dir)).toEqual([A2A_KEYS_FILE]);
    // Two keys never share a secret or an id.
    const other = await keys.issue({ name: 'Research agent' });
    expect(other.secret).not.toBe(secret);
    expect(other.key.id).not.toBe(key.id);
  });

  it('takes an expiry and its own limits, and lists keys newest first without their secret or hash', async () => {
    const { keys, clock } = setup();
    const first = await keys.issue({
      name: 'Acme bot',
      expiresAt: '2025-07-01T00:00:00Z',
      limits: { requestsPerMinute: 5, tokensPerDay: 20_000 },
    });
    clock.now += 1000;
    const second = await keys.issue({
      name: 'Weather agent',
      expiresAt: null,
      limits: { tokensPerDay: null },
    });
    const list = await keys.list();
    expect(list.map((key) => key.name)).toEqual(['Weather agent', 'Acme bot']);
    expect(list[1]).toMatchObject({
      expiresAt: '2025-07-01T00:00:00.000Z',
      limits: { requestsPerMinute: 5, tokensPerDay: 20_000 },
    });
    expect(list[0]).toMatchObject({ limits: {} });
    expect(list[0]?.expiresAt).toBeUndefined();
    const shown = JSON.stringify(list);
    for (const secret of [first.secret, second.secret]) expect(shown).not.toContain(secret.slice(17));
    expect(shown).not.toMatch(/hash/);
  });

  it('refuses a bad request, naming every field and what it takes', async () => {
    const { keys, clock } = setup();
    const error = await issueError(keys, {
      name: 'line one\nline two',
      expiresAt: new Date(clock.now - 1000).toISOString(),
      limits: { requestsPerMinute: 0, tokensPerDay: 1.5, burst: 3 },
      owner: 'me',
    });
    expect(error.status).toBe(400);
    expect(error.fields?.map((field) => field.field)).toEqual([
      'owner',
      'name',
      'expiresAt',
      'limits.requestsPerMinute',
      'limits.tokensPerDay',
      'limits.burst',
    ]);
    expect(error.message).toMatch(/^The key was not issued: owner is not a key setting/);
    expect(error.fields?.find((f) => f.field === 'name')?.message).toBe(
      'must be one line of 1 to 100 characters: the agent the key is for',
    );
    expect(error.fields?.find((f) => f.field === 'limits.requestsPerMinute')?.message).toBe(
      'must be a whole number from 1 to 1,000,000; leave it out for the default',
    );
    for (const input of [
      {},
      { name: '' },
      { name: '   ' },
      { name: 'x'.repeat(101) },
      { name: 42 },
      { name: 'bidi \u202e trick' },
      { name: 'para\u2029graph' },
    ]) {
      expect((await issueError(keys, input)).fields?.map((f) => f.field)).toEqual(['name']);
    }
    expect((await issueError(keys, null)).message).toBe('The body must be a JSON object.');
    expect((await issueError(keys, ['x'])).status).toBe(400);
    for (const expiresAt of ['tomorrow', '2025-06-01T11:00:00Z', '2036-01-01T00:00:00Z', 1_900_000_000_000]) {
      expect((await issueError(keys, { name: 'n', expiresAt })).fields?.map((f) => f.field)).toEqual([
        'expiresAt',
      ]);
    }
    expect((await issueError(keys, { name: 'n', limits: 5 })).fields?.[0]?.field).toBe('limits');
    expect(await keys.list()).toEqual([]);
    // The longest name passes.
    expect((await keys.issue({ name: 'x'.repeat(100) })).key.name).toHaveLength(100);
  });

  it('scopes a key to the skills named (issue 27): each a skill there is, kept with the key, listed', async () => {
    const { dir } = setup();
    const keys = new A2AKeys({ records: new A2AKeyFile(dir), skills: () => ['chat', 'research', 'summary'] });
    cleanups.push(() => keys.close());
    const { key, secret } = await keys.issue({ name: 'Scoped', skills: ['research', 'research', 'summary'] });
    expect(key.skills).toEqual(['research', 'summary']);
    expect(await keys.verify(secret)).toMatchObject({ ok: true, key: { skills: ['research', 'summary'] } });
    expect((await keys.list())[0]?.skills).toEqual(['research', 'summary']);
    // Unscoped: every public and approved skill; the view says nothing of skills.
    expect((await keys.issue({ name: 'Unscoped' })).key.skills).toBeUndefined();
    const unknown = await issueError(keys, { name: 'Typo', skills: ['reserch'] });
    expect(unknown.fields).toEqual([
      {
        field: 'skills',
        message: 'names "reserch", which is not a skill of this agent: use chat, research, summary',
      },
    ]);
    for (const skills of [[], 'research', ['Research'], [42]]) {
      expect((await issueError(keys, { name: 'Bad', skills })).fields?.[0]?.message).toMatch(
        /^must be a list of 1 to 50 skill ids/,
      );
    }
  });

  it('refuses a key whose stored scope was hand-edited into something that is not a list of skill ids', async () => {
    const { keys, file } = setup();
    const { secret } = await keys.issue({ name: 'Partner', skills: ['research'] });
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { keys: Record<string, unknown>[] };
    saved.keys[0]!.skills = 'research,host-shell';
    writeFileSync(file, JSON.stringify(saved));
    expect(await keys.verify(secret)).toMatchObject({ refusal: 'unknown' });
  });

  it(`keeps at most ${MAX_ACTIVE_KEYS} keys in use, and drops keys dead for 30 days when it issues`, async () => {
    const { keys, dir, clock, file } = setup();
    const record = (n: number, extra: object = {}) => ({
      id: n.toString(16).padStart(12, '0'),
      name: `agent ${n}`,
      hash: 'h'.repeat(43),
      createdAt: clock.now - 60 * DAY,
      limits: {},
      calls: 0,
      ...extra,
    });
    const active = Array.from({ length: MAX_ACTIVE_KEYS }, (_, n) => record(n + 1));
    const longRevoked = record(5000, { revokedAt: clock.now - 31 * DAY });
    const longExpired = record(5001, { expiresAt: clock.now - 31 * DAY });
    const lately = record(5002, { revokedAt: clock.now - 29 * DAY });
    writeFileSync(file, JSON.stringify({ keys: [...active, longRevoked, longExpired, lately] }));
    const full = await issueError(keys, { name: 'one too many' });
    expect(full.status).toBe(409);
    expect(full.message).toBe(`There are ${MAX_ACTIVE_KEYS} A2A keys in use, the most this agent keeps.`);
    expect(full.fix).toMatch(/Revoke the keys no longer needed/);
    await keys.revoke(active[0]!.id);
    await keys.issue({ name: 'now there is room' });
    const ids = (await new A2AKeyFile(dir).list()).map((key) => key.id);
    expect(ids).toHaveLength(MAX_ACTIVE_KEYS + 2);
    expect(ids).toContain(lately.id);
    expect(ids).not.toContain(longRevoked.id);
    expect(ids).not.toContain(longExpired.id);
  });
});

describe('verifying a key', () => {
  it('takes a key it issued, and refuses others saying what to do', async () => {
    const { keys } = setup();
    const { key, secret } = await keys.issue({ name: 'Research agent', limits: { requestsPerMinute: 3 } });
    expect(await keys.verify(secret)).toEqual({
      ok: true,
      key: expect.objectContaining({ id: key.id, name: 'Research agent', limits: { requestsPerMinute: 3 } }),
    });
    const last = secret.at(-1) === 'A' ? 'B' : 'A';
    const refusals = await Promise.all(
      [
        `${secret.slice(0, -1)}${last}`,
        `abk_${'0'.repeat(12)}${secret.slice(16)}`,
        'not-a-key',
        `${secret}x`,
      ].map((text) => keys.verify(text)),
    );
    expect(refusals.map((verdict) => (verdict.ok ? 'ok' : verdict.refusal))).toEqual([
      'unknown',
      'unknown',
      'malformed',
      'malformed',
    ]);
    expect(refusals[0]).toMatchObject({
      message:
        "This A2A key is not one this agent's operator issued (or it was mistyped): check it, or ask the operator for a new key.",
    });
    expect(refusals[2]).toMatchObject({ message: expect.stringContaining('Authorization: Bearer abk_...') });
  });

  it('refuses a revoked key from the next request on, and an expired one from its expiry', async () => {
    const { keys, clock } = setup();
    const revoked = await keys.issue({ name: 'Old partner' });
    clock.now += 1000;
    const expiring = await keys.issue({ name: 'Trial', expiresAt: new Date(clock.now + DAY).toISOString() });
    expect((await keys.verify(revoked.secret)).ok).toBe(true);
    // At the process that revoked it: at once, though the key was read a moment ago.
    expect(await keys.revoke(revoked.key.id)).toMatchObject({
      status: 'revoked',
      revokedAt: expect.any(String),
    });
    // With the key itself, for the operator's log to name who still uses it (issue 26, item 7).
    expect(await keys.verify(revoked.secret)).toEqual({
      ok: false,
      refusal: 'revoked',
      message: "This A2A key was revoked by this agent's operator: ask the operator for a new one.",
      key: expect.objectContaining({ id: revoked.key.id, name: 'Old partner' }) as unknown,
    });
    clock.now += DAY - 1;
    expect((await keys.verify(expiring.secret)).ok).toBe(true);
    clock.now += 1;
    expect(await keys.verify(expiring.secret)).toEqual({
      ok: false,
      refusal: 'expired',
      message: "This A2A key expired on 2025-06-02T12:00:01.000Z: ask this agent's operator for a new one.",
      key: expect.objectContaining({ id: expiring.key.id, name: 'Trial' }) as unknown,
    });
    expect((await keys.list()).map((key) => key.status)).toEqual(['expired', 'revoked']);
  });

  it("says a wrong secret is unknown even for a revoked key's id (revocations are not told to strangers)", async () => {
    const { keys } = setup();
    const { key, secret } = await keys.issue({ name: 'Partner' });
    await keys.revoke(key.id);
    const guess = `abk_${key.id}_${'A'.repeat(43)}`;
    expect(guess).not.toBe(secret);
    const verdict = await keys.verify(guess);
    expect(verdict).toMatchObject({ refusal: 'unknown' });
    // Nor is the key named to the log: anyone can copy an id, only its holder has the secret.
    expect(verdict).not.toHaveProperty('key');
  });

  it('counts calls and the last use in memory, written in batches (not a write per call)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    cleanups.push(() => vi.useRealTimers());
    const { keys, records, clock, dir } = setup();
    const { key, secret } = await keys.issue({ name: 'Busy agent' });
    const writes = vi.spyOn(records, 'addUsage');
    for (let i = 0; i < 50; i++) {
      clock.now += 100;
      expect((await keys.verify(secret)).ok).toBe(true);
    }
    expect(writes).not.toHaveBeenCalled();
    // The console sees the calls at once, written or not.
    expect((await keys.list())[0]).toMatchObject({
      calls: 50,
      lastUsedAt: new Date(clock.now).toISOString(),
    });
    await vi.advanceTimersByTimeAsync(5000);
    expect(writes).toHaveBeenCalledTimes(1);
    expect(await new A2AKeyFile(dir).list()).toEqual([
      expect.objectContaining({ id: key.id, calls: 50, lastUsedAt: clock.now }),
    ]);
    // What is counted after the last write is written when the keys close.
    await keys.verify(secret);
    await keys.close();
    expect((await new A2AKeyFile(dir).list())[0]).toMatchObject({ calls: 51 });
  });
});

describe('revoking a key', () => {
  it('names the key by its id, says when there is none, and stays revoked at its first time', async () => {
    const { keys, clock } = setup();
    const { key } = await keys.issue({ name: 'Partner' });
    const first = await keys.revoke(key.id);
    clock.now += 5000;
    expect((await keys.revoke(key.id)).revokedAt).toBe(first.revokedAt);
    const unknown = await keys.revoke('ffffffffffff').catch((error: unknown) => error);
    expect(unknown).toMatchObject({ status: 404, message: 'No A2A key has the id ffffffffffff.' });
    for (const id of ['', 'FFFFFFFFFFFF', '../../etc', `abk_${key.id}_${'A'.repeat(43)}`]) {
      expect(await keys.revoke(id).catch((error: unknown) => error)).toMatchObject({ status: 400 });
    }
  });

  it('finds the id in a whole key pasted to revoke it (a leaked one), and in the id itself', () => {
    const key = `abk_0123456789ab_${'A'.repeat(43)}`;
    expect(keyIdOf(` ${key}\n`)).toBe('0123456789ab');
    expect(keyIdOf('0123456789ab')).toBe('0123456789ab');
    expect(keyIdOf('abk_0123')).toBeUndefined();
  });
});

describe('the data-dir store', () => {
  it('refuses to start on a corrupt file rather than forget a revocation, and says what to do', () => {
    const dir = tempDir('a2a-keys-');
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, A2A_KEYS_FILE), '{"keys": [');
    expect(() => new A2AKeyFile(dir)).toThrow(
      /a2a-keys\.json is not valid JSON.*it lists the A2A keys you issued\. Fix it, or delete it/,
    );
  });

  it('drops a hand-edited record that is not whole, which refuses its key', async () => {
    const { keys, file } = setup();
    const { key, secret } = await keys.issue({ name: 'Partner' });
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { keys: Record<string, unknown>[] };
    saved.keys[0]!.limits = { requestsPerMinute: -1 };
    writeFileSync(file, JSON.stringify(saved));
    // Another process wrote the file: it is read again, and the record no longer counts.
    expect(await keys.verify(secret)).toMatchObject({ refusal: 'unknown' });
    expect((await keys.list()).map((each) => each.id)).not.toContain(key.id);
  });
});

describe('counting the live keys (the console status)', () => {
  it('reads the store once per change, counts expiries as they come, and trusts a read 10 s at most', async () => {
    const { keys, clock, records, dir } = setup();
    await keys.issue({ name: 'Lasting' });
    await keys.issue({ name: 'Brief', expiresAt: new Date(clock.now + 5000).toISOString() });
    const reads = vi.spyOn(records, 'list');
    expect(await keys.activeCount()).toBe(2);
    expect(await keys.activeCount()).toBe(2);
    expect(reads).toHaveBeenCalledTimes(1);
    clock.now += 5000;
    expect(await keys.activeCount()).toBe(1);
    expect(reads).toHaveBeenCalledTimes(1);
    // A change here is counted at once.
    const third = await keys.issue({ name: 'Third' });
    expect(await keys.activeCount()).toBe(2);
    await keys.revoke(third.key.id);
    expect(await keys.activeCount()).toBe(1);
    // Another process's change, unannounced (the data-dir file): seen once the last read is 10 s old.
    const other = new A2AKeys({ records: new A2AKeyFile(dir), now: () => clock.now });
    cleanups.push(() => other.close());
    await other.issue({ name: 'From the CLI' });
    expect(await keys.activeCount()).toBe(1);
    clock.now += 10_000;
    expect(await keys.activeCount()).toBe(2);
  });

  it('fails, saying why, when the store cannot be read', async () => {
    const { keys, file } = setup();
    writeFileSync(file, '{"keys": [');
    const error = await keys.activeCount().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(A2AKeyError);
    expect((error as A2AKeyError).status).toBe(503);
    expect((error as A2AKeyError).message).toMatch(/could not be read/);
  });
});
