import { describe, expect, it } from 'vitest';
import type { A2AKeys, KeyVerdict } from '../../src/access/a2a-keys.js';
import { KnownCallerRefused } from '../../src/a2a/chat-core.js';
import { A2AKeyGate } from '../../src/a2a/key-gate.js';
import type { AccessPolicy } from '../../src/protocol/console-api.js';
import { ProtocolError } from '../../src/protocol/index.js';

// The gate's own decisions (the keys themselves: a2a-keys.test.ts; through the SDK: a2a-keys integration).
function gate(policy: AccessPolicy, verdict: KeyVerdict = { ok: false, refusal: 'unknown', message: 'no' }) {
  const seen: string[] = [];
  const keys: Pick<A2AKeys, 'verify'> = {
    verify: async (text) => {
      seen.push(text);
      return verdict;
    },
  };
  return { gate: new A2AKeyGate({ keys, policy: () => policy }), seen };
}

const request = (authorization?: string, remoteAddress?: string) => ({
  headers: authorization === undefined ? {} : { authorization },
  remoteAddress,
  method: 'POST /a2a/jsonrpc SendMessage',
});

describe('the A2A key gate', () => {
  it('names a keyless caller by its socket address (IPv4 plain), only under the open policy', async () => {
    const open = gate('open').gate;
    expect(await open.authenticate(request(undefined, '::ffff:203.0.113.7'))).toEqual({
      id: 'a2a-anon:203.0.113.7',
      name: 'keyless caller at 203.0.113.7',
      limits: {},
    });
    expect((await open.authenticate(request('  ', '2001:db8::1'))).id).toBe('a2a-anon:2001:db8::1');
    expect((await open.authenticate(request(undefined, undefined))).id).toBe('a2a-anon:unknown');
    for (const policy of ['pairing', 'allowlist'] as const) {
      await expect(gate(policy).gate.authenticate(request(undefined, '203.0.113.7'))).rejects.toMatchObject({
        code: 'AUTH_FAILED',
        httpStatus: 401,
        step: 'access',
      });
    }
  });

  it('passes the bearer text to the keys as sent, and their refusal to the caller', async () => {
    const { gate: keyed, seen } = gate('pairing', {
      ok: false,
      refusal: 'revoked',
      message: 'Revoked: ask.',
    });
    await expect(keyed.authenticate(request('Bearer  abk_x'))).rejects.toMatchObject({
      code: 'AUTH_FAILED',
      httpStatus: 401,
      message: 'Revoked: ask.',
    });
    await expect(keyed.authenticate(request('Bearer a b'))).rejects.toMatchObject({
      message: expect.stringMatching(/^The Authorization header must be `Bearer <A2A key>`/),
    });
    expect(seen).toEqual(['abk_x']);
  });

  it('names the key it refused, when the key proved to be one the operator revoked or let expire', async () => {
    const key = {
      id: '0a1b2c3d4e5f',
      name: 'Old partner',
      hash: 'h',
      createdAt: 0,
      revokedAt: 1,
      limits: {},
    };
    const { gate: keyed } = gate('pairing', { ok: false, refusal: 'revoked', message: 'Revoked: ask.', key });
    const refusal: unknown = await keyed
      .authenticate(request('Bearer abk_x'))
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(KnownCallerRefused);
    expect(refusal).toMatchObject({
      code: 'AUTH_FAILED',
      httpStatus: 401,
      step: 'access',
      message: 'Revoked: ask.',
      caller: { id: 'a2a-key:0a1b2c3d4e5f', name: 'Old partner' },
      keyStatus: 'revoked',
    });
  });

  it('lets the keys\' "cannot check now" (503) through: a key is never taken unchecked', async () => {
    const down = new ProtocolError('AGENT_UNAVAILABLE', 503, 'retry shortly');
    const failing = new A2AKeyGate({
      keys: { verify: async () => Promise.reject(down) },
      policy: () => 'open',
    });
    await expect(failing.authenticate(request('Bearer abk_x'))).rejects.toBe(down);
  });
});
