// Shared access lists (Redis): every change is written and announced, and each replica (this one too) then
// reloads them. A reload reads the lists before a change made here while it was in flight; taking them as
// they were read undid that change here (an approval gone until the next reload), and the next save then
// deleted it from Redis. Found while testing issue 15 on Redis (the tests flaked); the lists are held in
// memory here, as RedisRecords hands them over, so the interleaving is exact.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { AccessControl } from '../../src/access/access-control.js';
import type { AccessFile } from '../../src/access/access-store.js';
import { tempDir } from '../helpers/agents.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function sharedControl() {
  const dataDir = tempDir('access-reload-');
  dirs.push(dataDir);
  const saved: AccessFile[] = [];
  const access = new AccessControl({
    dataDir,
    policy: () => 'pairing',
    allowedPeers: () => [],
    isOwnId: () => false,
    describe: () => undefined,
    expiryHours: () => 24,
    heldTasks: { run: () => undefined, fail: () => undefined },
    shared: { save: (file) => saved.push(structuredClone(file)) },
  });
  return { access, saved, last: () => structuredClone(saved[saved.length - 1]!) };
}

const ask = (access: AccessControl, sender: string) => {
  const request = {
    sender,
    unsigned: false,
    mode: 'sync' as const,
    payload: { message: 'hi' },
    signedWith: { keys: ['k'], pinned: false },
  };
  expect(() => access.gate.admit(request, access.gate.precheck(request))).toThrow(/not yet approved/);
};

describe('reloading shared access lists', () => {
  it('keeps a change made here while the lists were being loaded, and takes the rest as loaded', () => {
    const { access, last } = sharedControl();
    ask(access, 'agent://a.example');
    // A reload starts: the mark, then Redis is read (the request of a.example, as written above).
    const since = access.store.changes;
    const loaded = last();
    // Meanwhile another replica approved b.example: the lists read hold it.
    loaded.approved.push({ sender: 'agent://b.example', approvedAt: Date.now() });
    // And here the operator approves a.example, before the read lists arrive.
    access.approve('agent://a.example');
    access.reload(loaded, since);

    expect(access.store.isApproved('agent://a.example')).toBe(true);
    expect(access.store.pendingOf('agent://a.example')).toBeUndefined();
    expect(access.store.isApproved('agent://b.example')).toBe(true);
    access.close();
  });

  it('a reload begun after the change takes the lists as read (the change is in them)', () => {
    const { access, last } = sharedControl();
    ask(access, 'agent://a.example');
    access.approve('agent://a.example');
    const since = access.store.changes;
    // Another replica revoked it since: what Redis holds now wins.
    const loaded = last();
    loaded.approved = [];
    access.reload(loaded, since);
    expect(access.store.isApproved('agent://a.example')).toBe(false);
    access.close();
  });

  it("carries an approval's scope to the other replicas, and drops an approval whose scope is not a list of skills", () => {
    const here = sharedControl();
    const there = sharedControl();
    here.access.approve('agent://a.example', ['research']);
    here.access.approve('agent://b.example');
    const written = here.last();
    expect(written.approved.find((r) => r.sender === 'agent://a.example')?.skills).toEqual(['research']);
    // Hand-edited in Redis: a scope that is not a list of skill ids would open what nobody named.
    written.approved.push({ sender: 'agent://c.example', approvedAt: 1, skills: 'research,shell' as never });
    there.access.reload(written);
    const request = (sender: string) => ({
      sender,
      unsigned: false,
      mode: 'sync' as const,
      payload: {},
      signedWith: { keys: ['k'], pinned: false },
    });
    expect(there.access.gate.grant(request('agent://a.example'))).toEqual({
      approved: true,
      skills: ['research'],
      open: false,
    });
    expect(there.access.gate.grant(request('agent://b.example'))).toEqual({ approved: true, open: false });
    expect(there.access.gate.grant(request('agent://c.example'))).toEqual({ approved: false, open: false });
    expect(Object.fromEntries(there.access.view().approved.map((a) => [a.sender, a.skills]))).toEqual({
      'agent://a.example': ['research'],
      'agent://b.example': undefined,
    });
    here.access.close();
    there.access.close();
  });
});
