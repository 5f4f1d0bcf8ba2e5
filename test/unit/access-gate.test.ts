// The access gate's two steps (issue 15): what memory decides before the limits, and what is decided again
// after them, when the operator may have acted in between (the limits are a Redis round trip on replicas).
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AccessControl } from '../../src/access/access-control.js';
import type { AccessRequest } from '../../src/agent/access-check.js';
import { tempDir } from '../helpers/agents.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function control(file?: object) {
  const dataDir = tempDir('access-gate-');
  dirs.push(dataDir);
  if (file) writeFileSync(join(dataDir, 'access.json'), JSON.stringify(file));
  return new AccessControl({
    dataDir,
    policy: () => 'pairing',
    allowedPeers: () => [],
    isOwnId: () => false,
    describe: () => undefined,
    expiryHours: () => 24,
    heldTasks: { run: () => undefined, fail: () => undefined },
  });
}

const request = (sender: string): AccessRequest => ({
  sender,
  unsigned: false,
  mode: 'sync',
  payload: { message: 'hi' },
  signedWith: { keys: ['k1'], pinned: false },
});

describe('the access gate between its two steps', () => {
  it('an approval revoked while the call was counted no longer admits it: the sender asks again', () => {
    const access = control();
    access.approve('agent://a.example');
    const call = request('agent://a.example');
    expect(access.gate.precheck(call)).toBe('approved');
    access.revoke('agent://a.example');
    expect(() => access.gate.admit(call, 'approved')).toThrow(/not yet approved/);
    expect(access.view().pending.map((p) => p.sender)).toEqual(['agent://a.example']);
    access.close();
  });

  it('a stored approval whose keys are not a list of keys is dropped, not taken as bound to any key', () => {
    // As a string, "includes" would match any part of it; as nothing, the first key would bind.
    const access = control({
      approved: [
        { sender: 'agent://c.example', approvedAt: 1, keys: 'k1 k2' },
        { sender: 'agent://d.example', approvedAt: 1, keys: ['k1'] },
      ],
      pending: [],
      denied: [],
    });
    expect(access.gate.precheck(request('agent://c.example'))).toBeUndefined();
    expect(access.gate.precheck(request('agent://d.example'))).toBe('approved');
    access.close();
  });

  it('a sender approved while its call was counted is admitted, bound to the key that signed it', () => {
    const access = control();
    const call = request('agent://b.example');
    expect(access.gate.precheck(call)).toBeUndefined();
    access.approve('agent://b.example');
    expect(access.gate.admit(call, undefined)).toEqual({ admitted: true, rule: 'approved' });
    expect(access.store.approvedRecord('agent://b.example')?.keys).toEqual(['k1']);
    access.close();
  });
});
