import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

  it('names the address just before the change, and counts the changes not dismissed yet', () => {
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
    // Another change before the operator looked: from b (where it just was), the second since a.
    mem.online('https://c.loca.lt');
    expect(open().lastChange).toEqual({
      previous: 'https://b.loca.lt',
      url: 'https://c.loca.lt',
      at: '2026-11-26T10:02:00.000Z',
      changes: 2,
      known: 'https://a.loca.lt',
    });
    // Back at a: nothing changed for the agents that know it.
    mem.online('https://a.loca.lt');
    expect(mem.lastChange).toBeUndefined();
    mem.online('https://d.loca.lt');
    mem.dismiss();
    expect(open().lastChange).toBeUndefined();
    expect(JSON.parse(readFileSync(join(dir, TUNNEL_FILE), 'utf8'))).toEqual({ url: 'https://d.loca.lt' });
  });

  it('after a restart, names the address the agent had before the restart, not the first one', () => {
    const { open } = memory();
    const first = open();
    first.online('https://first.loca.lt');
    first.online('https://second.loca.lt');
    // Restarted without the operator dismissing the change: the tunnel comes back at a third address.
    const restarted = open();
    restarted.online('https://third.loca.lt', 'the name asked for was taken');
    expect(restarted.lastChange).toMatchObject({
      previous: 'https://second.loca.lt',
      url: 'https://third.loca.lt',
      changes: 2,
      known: 'https://first.loca.lt',
    });
    // Dismissed, then another change: one change again, from the address it just had.
    restarted.dismiss();
    open().online('https://fourth.loca.lt');
    expect(open().lastChange).toMatchObject({
      previous: 'https://third.loca.lt',
      url: 'https://fourth.loca.lt',
    });
    expect(open().lastChange?.changes).toBeUndefined();
  });

  it('reads a change kept by an earlier version (no count) as one change, and ignores a count it did not write', () => {
    const { open, dir } = memory();
    const change = {
      previous: 'https://a.loca.lt',
      url: 'https://b.loca.lt',
      at: '2026-11-26T10:01:00.000Z',
    };
    writeFileSync(join(dir, TUNNEL_FILE), JSON.stringify({ url: 'https://b.loca.lt', change }));
    const mem = open();
    expect(mem.lastChange).toEqual(change);
    mem.online('https://c.loca.lt');
    expect(mem.lastChange).toMatchObject({
      previous: 'https://b.loca.lt',
      changes: 2,
      known: 'https://a.loca.lt',
    });
    writeFileSync(
      join(dir, TUNNEL_FILE),
      JSON.stringify({ url: 'https://b.loca.lt', change: { ...change, changes: 'many' } }),
    );
    expect(open().lastChange).toBeUndefined();
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
