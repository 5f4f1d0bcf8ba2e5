// One identity per agent, however its id is spelled: a denial, an approval or a limit cannot be dodged by
// writing the host in another case or adding the default port.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { AccessControl } from '../../src/access/access-control.js';
import { agentBaseUrl, normalizeAgentId } from '../../src/protocol/index.js';
import { validateSettings } from '../../src/settings/schema.js';
import { tempDir } from '../helpers/agents.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function control(allowedPeers: string[] = []) {
  const dataDir = tempDir('access-ids-');
  dirs.push(dataDir);
  return new AccessControl({
    dataDir,
    policy: () => 'pairing',
    allowedPeers: () => allowedPeers,
    isOwnId: () => false,
    describe: () => undefined,
    expiryHours: () => 24,
    heldTasks: { run: () => undefined, fail: () => undefined },
  });
}

/** A verified call through both access steps, as the pipeline makes them. */
const ask = (access: AccessControl, id: string) => {
  const request = {
    sender: normalizeAgentId(id),
    unsigned: false,
    mode: 'sync' as const,
    payload: { message: 'hi' },
    signedWith: { keys: ['a-key'], pinned: false },
  };
  return access.gate.admit(request, access.gate.precheck(request));
};

describe('agent ids', () => {
  it.each([
    ['agent://Evil.Example', 'agent://evil.example'],
    ['agent://evil.example:443', 'agent://evil.example'],
    ['agent://EVIL.example:8443', 'agent://evil.example:8443'],
    ['agent://[::1]:8787', 'agent://[::1]:8787'],
    // Issue 15: every other spelling of the same host is one identity too.
    ['agent://evil.example.', 'agent://evil.example'],
    ['agent://Evil.Example.:443', 'agent://evil.example'],
    ['agent://evil.example.:8443', 'agent://evil.example:8443'],
    ['agent://2130706433', 'agent://127.0.0.1'],
    ['agent://0x7f.1:8787', 'agent://127.0.0.1:8787'],
    ['agent://127.0.0.1:8787', 'agent://127.0.0.1:8787'],
    ['agent://[0:0:0:0:0:0:0:1]:8787', 'agent://[::1]:8787'],
    ['agent://a1.example', 'agent://a1.example'],
    // A port is a number: leading zeros are the same port (review of issue 15).
    ['agent://evil.example:0443', 'agent://evil.example'],
    ['agent://evil.example:08443', 'agent://evil.example:8443'],
    ['agent://[::1]:08787', 'agent://[::1]:8787'],
    ['not an id', 'not an id'],
    // Ports outside 1-65535 name no host: not an agent id, so no spelling of it is made up.
    ['agent://evil.example:0', 'agent://evil.example:0'],
    ['agent://evil.example:99999', 'agent://evil.example:99999'],
  ])('%s is %s', (id, normal) => expect(normalizeAgentId(id)).toBe(normal));

  it('a port outside 1-65535 is not an agent id: no base URL, and refused in settings', () => {
    expect(agentBaseUrl('agent://evil.example:65536')).toBeNull();
    expect(agentBaseUrl('agent://evil.example:00443')).toBe('https://evil.example:443');
    const result = validateSettings({
      allowedPeers: ['agent://evil.example:70000'],
      trustedPeerKeys: { 'agent://friend.example:0': Buffer.alloc(32, 1).toString('base64') },
    });
    expect(result).toEqual({
      ok: false,
      errors: [
        { field: 'allowedPeers', message: expect.stringMatching(/port outside 1-65535/) },
        { field: 'trustedPeerKeys', message: expect.stringMatching(/port outside 1-65535/) },
      ],
    });
  });

  it('a denied sender cannot come back with another spelling of its id', () => {
    const access = control();
    expect(() => ask(access, 'agent://evil.example')).toThrow(/not yet approved/);
    access.deny('agent://evil.example');
    expect(() => ask(access, 'agent://Evil.Example:443')).toThrow(/operator declined/);
    access.close();
  });

  it('an approval and the allowed peers hold for any spelling', () => {
    const access = control(['agent://Friend.Example']);
    expect(ask(access, 'agent://friend.example:443')).toEqual({ admitted: true, rule: 'allowed-peer' });
    access.approve('agent://Other.Example');
    expect(ask(access, 'agent://other.example')).toEqual({ admitted: true, rule: 'approved' });
    access.close();
  });
});
