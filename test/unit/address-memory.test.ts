import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addressLines } from '../../src/tunnel/address-change.js';
import { AddressMemory, TUNNEL_FILE } from '../../src/tunnel/address-memory.js';
import { tempDir } from '../helpers/agents.js';

// The tunnel's address across restarts (tunnel.json) and the change the operator has not seen yet; the
// supervisor and the real localtunnel client are in test/integration/tunnel-identity.test.ts.
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function memory(): { open: () => AddressMemory; dir: string } {
  const dir = tempDir('address-memory-');
  dirs.push(dir);
  let clock = Date.parse('2026-11-26T10:00:00Z');
  return { open: () => new AddressMemory(dir, () => (clock += 60_000)), dir };
}

describe('AddressMemory', () => {
  it('remembers the first address without calling it a change, in a file only the user reads', () => {
    const { open, dir } = memory();
    open().online('https://abcd.loca.lt');
    const again = open();
    expect(again.url).toBe('https://abcd.loca.lt');
    expect(again.lastChange).toBeUndefined();
    expect(statSync(join(dir, TUNNEL_FILE)).mode & 0o777).toBe(0o600);
  });

  it('measures a change from the address the operator last knew, until dismissed', () => {
    const { open, dir } = memory();
    const mem = open();
    mem.online('https://a.loca.lt');
    mem.online('https://b.loca.lt', 'why');
    expect(mem.lastChange).toEqual({
      previous: 'https://a.loca.lt',
      url: 'https://b.loca.lt',
      at: '2026-11-26T10:01:00.000Z',
      note: 'why',
    });
    // Another change before the operator looked: still from a (approvals to a are what broke).
    mem.online('https://c.loca.lt');
    expect(open().lastChange).toMatchObject({ previous: 'https://a.loca.lt', url: 'https://c.loca.lt' });
    // Back at a: nothing changed for the agents that know it.
    mem.online('https://a.loca.lt');
    expect(mem.lastChange).toBeUndefined();
    mem.online('https://d.loca.lt');
    mem.dismiss();
    expect(open().lastChange).toBeUndefined();
    expect(JSON.parse(readFileSync(join(dir, TUNNEL_FILE), 'utf8'))).toEqual({ url: 'https://d.loca.lt' });
  });
});

describe('what the terminal says', () => {
  it('the public URL and the id it gives the agent, when the address is the one the agent had', () => {
    expect(addressLines({ url: 'https://a.loca.lt', previous: undefined }, true)).toEqual([
      'Public URL: https://a.loca.lt',
      'Agent id:   agent://a.loca.lt',
    ]);
  });

  it('that the registry entry follows, when the agent is registered', () => {
    const lines = addressLines({ url: 'https://b.loca.lt', previous: 'https://a.loca.lt' }, true);
    expect(lines[0]).toBe(
      "WARNING: this agent's public address changed, and with it its id: agent://a.loca.lt is now agent://b.loca.lt (https://b.loca.lt).",
    );
    expect(lines).toContain('  Follows: the registry entry moves to the new address by itself.');
    expect(lines.some((line) => line.startsWith('  Why:'))).toBe(false);
  });
});
