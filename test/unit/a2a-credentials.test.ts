import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  A2ACredentials,
  CREDENTIALS_FILE,
  CredentialError,
  MAX_CREDENTIALS,
  originKey,
} from '../../src/mcp/a2a-credentials.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function store(): { credentials: A2ACredentials; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-credentials-'));
  dirs.push(dir);
  return { credentials: new A2ACredentials(dir, () => Date.parse('2026-01-02T03:04:05Z')), dir };
}

const VALUE = 'token-0123456789';

describe('the credentials the operator keeps for A2A agents', () => {
  it('are keyed by origin in one spelling, and go only to exactly that origin', () => {
    const { credentials } = store();
    credentials.set({ url: 'https://Agent.Example.com.:443/', scheme: 'bearer', value: VALUE });
    expect(credentials.view().credentials).toEqual([
      { url: 'https://agent.example.com', scheme: 'bearer', addedAt: '2026-01-02T03:04:05.000Z' },
    ]);
    expect(credentials.headersFor(new URL('https://AGENT.example.com/a2a/jsonrpc'))).toEqual({
      Authorization: `Bearer ${VALUE}`,
    });
    for (const other of [
      'http://agent.example.com/',
      'https://agent.example.com:8443/',
      'https://sub.agent.example.com/',
      'https://agent.example.com.evil.example/',
    ])
      expect(credentials.headersFor(new URL(other)), other).toBeUndefined();
    expect(originKey(new URL('http://127.0.0.1:443/x'))).toBe('http://127.0.0.1:443');
    expect(originKey(new URL('https://[::1]:8443/'))).toBe('https://[::1]:8443');
  });

  it('an API key goes in the header named; plain http only for loopback (local tests)', () => {
    const { credentials } = store();
    credentials.set({ url: 'http://127.0.0.1:9000', scheme: 'apiKey', header: 'X-Api-Key', value: VALUE });
    expect(credentials.headersFor(new URL('http://127.0.0.1:9000/a2a'))).toEqual({ 'X-Api-Key': VALUE });
    expect(credentials.schemeFor(new URL('http://127.0.0.1:9000'))).toEqual({
      scheme: 'apiKey',
      header: 'X-Api-Key',
    });
    expect(() => credentials.set({ url: 'http://a.example', scheme: 'bearer', value: VALUE })).toThrow(
      CredentialError,
    );
  });

  it('are kept in a 0600 file that a new store reads back', () => {
    const { credentials, dir } = store();
    credentials.set({ url: 'https://a.example', scheme: 'bearer', value: VALUE });
    const file = join(dir, CREDENTIALS_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = new A2ACredentials(dir);
    expect(again.secrets()).toEqual([VALUE]);
    expect(again.view().problem).toBeUndefined();
  });

  it('a file that cannot be read: none of it is used, the console says why, and nothing overwrites it', () => {
    for (const content of [
      '{not json',
      '{"credentials": [{"url": "https://a.example"}]}',
      '{"credentials": 3}',
    ]) {
      const { dir } = store();
      writeFileSync(join(dir, CREDENTIALS_FILE), content);
      const credentials = new A2ACredentials(dir);
      expect(credentials.secrets()).toEqual([]);
      expect(credentials.view().problem, content).toMatch(
        /(fix or delete|delete or fix) it\. None of its credentials is used/,
      );
      expect(() => credentials.set({ url: 'https://b.example', scheme: 'bearer', value: VALUE })).toThrow(
        /cannot be read, so saving would lose what it holds/,
      );
      expect(readFileSync(join(dir, CREDENTIALS_FILE), 'utf8')).toBe(content);
    }
  });

  it(`keeps at most ${MAX_CREDENTIALS}`, () => {
    const { credentials } = store();
    for (let i = 0; i < MAX_CREDENTIALS; i++)
      credentials.set({ url: `https://a${i}.example`, scheme: 'bearer', value: VALUE });
    expect(() =>
      credentials.set({ url: 'https://one-more.example', scheme: 'bearer', value: VALUE }),
    ).toThrow(/At most 100 credentials/);
    // Replacing one is not adding one.
    expect(() =>
      credentials.set({ url: 'https://a0.example', scheme: 'bearer', value: VALUE }),
    ).not.toThrow();
  });
});
