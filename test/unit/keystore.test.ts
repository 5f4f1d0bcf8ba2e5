import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import * as ed from '@noble/ed25519';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KeyStore, KeyStoreError } from '../../src/keys/keystore.js';
import { verifyBytes } from '../../src/protocol/index.js';

const posixOnly = process.platform === 'win32' ? it.skip : it;
const TTL = 300;
const START = Date.parse('2026-11-25T10:00:00.000Z');

let root: string;
let dataDir: string;
let clock: number;
const now = () => clock;
const open = (cardTTLSeconds = TTL) => KeyStore.open(dataDir, { cardTTLSeconds, now });
const keyFile = () => join(dataDir, 'keys.json');
const readKeyFile = () =>
  JSON.parse(readFileSync(keyFile(), 'utf8')) as {
    signingKey: { kid: string; privateKey: string };
    keys: { kid: string; publicKey: string }[];
  };

function errorOf(action: () => unknown): Error | undefined {
  try {
    action();
  } catch (error) {
    return error as Error;
  }
  return undefined;
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'agent-bridge-keys-'));
  dataDir = join(root, 'data');
  clock = START;
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('first start and reopening', () => {
  it('creates one active signing key with a readable, dated kid', () => {
    const store = open();
    const keys = store.list();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ active: true, signing: true, createdAt: '2026-11-25T10:00:00.000Z' });
    expect(keys[0]?.kid).toMatch(/^k-20261125-[0-9a-f]{6}$/);
    expect(store.signer.kid).toBe(keys[0]?.kid);
    expect(store.publicKeys()).toEqual([{ kid: keys[0]?.kid, key: keys[0]?.publicKey, active: true }]);
  });

  posixOnly('writes keys.json with mode 0600 in a 0700 directory', () => {
    open();
    expect(statSync(keyFile()).mode & 0o777).toBe(0o600);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
  });

  it('loads the same identity when reopened', () => {
    const first = open();
    const second = open();
    expect(second.list()).toEqual(first.list());
    const signature = second.signer.sign('hello');
    const key = first.verificationKey(first.signer.kid)?.key;
    expect(key && verifyBytes(key, 'hello', signature)).toBe(true);
  });

  posixOnly('narrows a key file that was left readable by others', () => {
    open();
    chmodSync(keyFile(), 0o644);
    open();
    expect(statSync(keyFile()).mode & 0o777).toBe(0o600);
  });
});

describe('signatures', () => {
  it('verify with the published public key, by node:crypto and by @noble/ed25519', async () => {
    const store = open();
    const message = new TextEncoder().encode('{"a":1}');
    const signature = store.signer.sign(message);
    const entry = store.publicKeys()[0];
    const own = store.verificationKey(store.signer.kid);
    expect(own?.active).toBe(true);
    expect(own && verifyBytes(own.key, message, signature)).toBe(true);
    const publicKey = Buffer.from(entry?.key ?? '', 'base64');
    expect(await ed.verifyAsync(Buffer.from(signature, 'base64'), message, publicKey)).toBe(true);
    expect(own && verifyBytes(own.key, 'tampered', signature)).toBe(false);
  });
});

describe('rotate', () => {
  it('signs with a new key and keeps the old one active for exactly one cardTTL', () => {
    const store = open();
    const oldKid = store.signer.kid;
    clock += 1000;
    const fresh = store.rotate();

    expect(fresh).toMatchObject({ signing: true, active: true });
    expect(fresh.kid).not.toBe(oldKid);
    expect(store.signer.kid).toBe(fresh.kid);
    const old = store.list().find((key) => key.kid === oldKid);
    expect(old).toMatchObject({
      signing: false,
      active: true,
      retiredAt: new Date(START + 1000).toISOString(),
      inactiveFrom: new Date(START + 1000 + TTL * 1000).toISOString(),
    });
    expect(store.publicKeys().map((key) => key.active)).toEqual([true, true]);

    clock += TTL * 1000 - 1;
    expect(store.verificationKey(oldKid)?.active).toBe(true);
    clock += 1;
    expect(store.verificationKey(oldKid)?.active).toBe(false);
    expect(store.publicKeys()).toEqual([
      { kid: fresh.kid, key: fresh.publicKey, active: true },
      { kid: oldKid, key: old?.publicKey, active: false },
    ]);
  });

  it('persists: a reopened store signs with the new key and still lists the old one', () => {
    const store = open();
    const oldKid = store.signer.kid;
    const fresh = store.rotate();
    const reopened = open();
    expect(reopened.signer.kid).toBe(fresh.kid);
    expect(reopened.list().map((key) => key.kid)).toEqual([fresh.kid, oldKid]);
  });

  it('drops the retired private key from the file at once', () => {
    const store = open();
    const oldPrivate = readKeyFile().signingKey.privateKey;
    store.rotate();
    expect(readFileSync(keyFile(), 'utf8')).not.toContain(oldPrivate);
  });

  it('keeps honouring a longer cardTTL that cached cards may still carry after the TTL is lowered', () => {
    const store = open(600);
    const oldKid = store.signer.kid;
    store.setCardTTL(60);
    store.rotate();
    expect(store.list().find((key) => key.kid === oldKid)?.inactiveFrom).toBe(
      new Date(START + 600_000).toISOString(),
    );
    clock += 600_000;
    const nextOld = store.signer.kid;
    store.rotate();
    expect(store.list().find((key) => key.kid === nextOld)?.inactiveFrom).toBe(
      new Date(clock + 60_000).toISOString(),
    );
  });

  it('tells listeners, until they unsubscribe', () => {
    const store = open();
    let calls = 0;
    const off = store.onChange(() => calls++);
    store.rotate();
    expect(calls).toBe(1);
    off();
    store.rotate();
    expect(calls).toBe(1);
  });
});

describe('revoke', () => {
  it('makes a retired key inactive now', () => {
    const store = open();
    const oldKid = store.signer.kid;
    store.rotate();
    clock += 5000;
    const revoked = store.revoke(oldKid);
    expect(revoked).toMatchObject({
      kid: oldKid,
      active: false,
      inactiveFrom: new Date(clock).toISOString(),
    });
    expect(store.verificationKey(oldKid)?.active).toBe(false);
    expect(open().verificationKey(oldKid)?.active).toBe(false);
  });

  it('rotates first when revoking the signing key, so the agent can still sign', () => {
    const store = open();
    const oldKid = store.signer.kid;
    let calls = 0;
    store.onChange(() => calls++);
    const revoked = store.revoke(oldKid);
    expect(revoked).toMatchObject({ kid: oldKid, active: false, signing: false });
    expect(store.signer.kid).not.toBe(oldKid);
    expect(store.verificationKey(store.signer.kid)?.active).toBe(true);
    expect(store.verificationKey(oldKid)?.active).toBe(false);
    expect(calls).toBe(1);
  });

  it('refuses an unknown kid with a message that says where to look', () => {
    const store = open();
    expect(() => store.revoke('k-20000101-000000')).toThrow(KeyStoreError);
    expect(() => store.revoke('k-20000101-000000')).toThrow(
      'No key with kid "k-20000101-000000"; list keys with GET /api/status',
    );
  });
});

describe('private keys stay inside the store', () => {
  it('appear in no returned object, JSON, inspect output, string or error', () => {
    const store = open();
    const secrets = new Set<string>();
    const collect = () => secrets.add(readKeyFile().signingKey.privateKey);
    collect();
    store.rotate();
    collect();
    const oldKid = store.list()[1]?.kid ?? '';
    store.revoke(store.signer.kid);
    collect();

    const forms = (base64: string) => {
      const bytes = Buffer.from(base64, 'base64');
      return [base64, bytes.toString('base64url'), bytes.toString('hex')];
    };
    const error = errorOf(() => store.revoke('k-nope'));
    expect(error).toBeInstanceOf(KeyStoreError);
    const outputs = [
      JSON.stringify(store),
      inspect(store, { showHidden: true, depth: Infinity }),
      String(store),
      `${store}`,
      JSON.stringify(store.list()),
      JSON.stringify(store.publicKeys()),
      inspect(store.signer, { showHidden: true, depth: Infinity }),
      JSON.stringify(store.signer),
      inspect(store.verificationKey(oldKid), { showHidden: true, depth: Infinity }),
      inspect(store.rotate(), { showHidden: true, depth: Infinity }),
      inspect(error, { showHidden: true, depth: Infinity }),
    ].join('\n');

    expect(secrets.size).toBe(3);
    for (const secret of secrets) {
      for (const form of forms(secret)) expect(outputs).not.toContain(form);
    }
    // The check is meaningful: the signer really holds one of those keys.
    expect(readFileSync(keyFile(), 'utf8')).toContain(readKeyFile().signingKey.privateKey);
  });
});

describe('a damaged key file', () => {
  it('is refused with a message naming the file and what to do, and is never replaced', () => {
    open();
    writeFileSync(keyFile(), '{"version":1,"signingKey":');
    const damaged = readFileSync(keyFile(), 'utf8');
    const caught = errorOf(() => open());
    expect(caught).toBeInstanceOf(KeyStoreError);
    expect((caught as KeyStoreError).code).toBe('corrupt');
    expect((caught as Error).message).toContain(keyFile());
    expect((caught as Error).message).toMatch(/restore it from a backup/);
    expect(readFileSync(keyFile(), 'utf8')).toBe(damaged);
  });

  it('is refused when the private key does not match its public key, without quoting either', () => {
    open();
    const data = readKeyFile();
    const otherDir = join(root, 'other');
    KeyStore.open(otherDir, { cardTTLSeconds: TTL, now });
    const foreign = (JSON.parse(readFileSync(join(otherDir, 'keys.json'), 'utf8')) as typeof data).signingKey;
    writeFileSync(
      keyFile(),
      JSON.stringify({ ...data, signingKey: { ...data.signingKey, privateKey: foreign.privateKey } }),
    );
    const message = errorOf(() => open())?.message ?? '';
    expect(message).toMatch(/does not match its listed public key/);
    expect(message).not.toContain(foreign.privateKey);
  });
});
