// The hop guard's rules (issue 28, item 4): a chain too deep or come back round a loop is refused; calls out
// continue the chain of the inbound call being served; forged values can only get a call refused.
import { describe, expect, it } from 'vitest';
import { CHAIN_MEMORY_MS, HopGuard, chainOf } from '../../src/calls/hop-guard.js';
import { ProtocolError, readChain, type CallChain } from '../../src/protocol/index.js';

function guard(limit = 4) {
  let now = 1_000_000;
  const hops = new HopGuard({ hopLimit: () => limit, now: () => now });
  return { hops, later: (ms: number) => (now += ms) };
}

function refusal(run: () => void): ProtocolError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError);
    return error as ProtocolError;
  }
  throw new Error('expected a refusal');
}

describe('readChain and chainOf: the wire form', () => {
  it('reads {id, hop}, copying nothing else; absent or null is no chain', () => {
    expect(readChain({ id: 'abcdefgh', hop: 2, extra: 'x' })).toEqual({ id: 'abcdefgh', hop: 2 });
    expect(readChain(undefined)).toBeUndefined();
    expect(readChain(null)).toBeUndefined();
  });

  it.each([
    ['a string', 'abc'],
    ['an array', [1]],
    ['a short id', { id: 'abc', hop: 1 }],
    ['an id with a space', { id: 'abc defgh', hop: 1 }],
    ['hop 0', { id: 'abcdefgh', hop: 0 }],
    ['a fractional hop', { id: 'abcdefgh', hop: 1.5 }],
    ['a hop as text', { id: 'abcdefgh', hop: '2' }],
    ['a huge hop', { id: 'abcdefgh', hop: 1e9 }],
  ])('refuses %s (SCHEMA_INVALID at the chain step, naming the field)', (_what, value) => {
    const error = refusal(() => chainOf(value, 'Envelope field "x-agent-bridge-chain"'));
    expect(error).toMatchObject({ code: 'SCHEMA_INVALID', httpStatus: 400, step: 'chain' });
    expect(error.message).toMatch(/^Envelope field "x-agent-bridge-chain" must /);
  });
});

describe('HopGuard.check: inbound', () => {
  it('takes a call without a chain, and any chain up to the limit it never sent', () => {
    const { hops } = guard(4);
    expect(() => hops.check(undefined)).not.toThrow();
    expect(() => hops.check({ id: 'someone-elses', hop: 4 })).not.toThrow();
  });

  it('refuses a hop over the limit with DELEGATION_EXCEEDED 400, naming the hop, the limit and the setting', () => {
    const { hops } = guard(4);
    const error = refusal(() => hops.check({ id: 'deep-chain-1', hop: 5 }));
    expect(error).toMatchObject({ code: 'DELEGATION_EXCEEDED', httpStatus: 400, step: 'chain' });
    expect(error.message).toMatch(/hop 5 .*chain deep-chain-1.*at most 4 hops.*hopLimit/);
  });

  it('follows the limit as the setting changes', () => {
    let limit = 2;
    const hops = new HopGuard({ hopLimit: () => limit });
    expect(() => hops.check({ id: 'chain-abc-1', hop: 3 })).toThrow(/at most 2 hops/);
    limit = 3;
    expect(() => hops.check({ id: 'chain-abc-1', hop: 3 })).not.toThrow();
  });

  it('refuses a chain it sent out that comes back at the same or a later hop: a loop', () => {
    const { hops, later } = guard();
    const sent = hops.next();
    expect(sent.hop).toBe(1);
    later(12_000);
    const error = refusal(() => hops.check({ id: sent.id, hop: 2 }));
    expect(error).toMatchObject({ code: 'DELEGATION_EXCEEDED', step: 'chain' });
    expect(error.message).toMatch(
      new RegExp(`came back to this agent: it is hop 2 of chain ${sent.id}.*12 s ago \\(at hop 1\\).*loop`),
    );
    // A forwarder that copies the chain unchanged brings it back at the hop it left at: a loop too.
    expect(() => hops.check({ id: sent.id, hop: 1 })).toThrow(/came back/);
  });

  it('lets a call from further up a chain it continued go on (the caller asked twice), not one deeper', () => {
    const { hops } = guard();
    const leave = hops.enter({ id: 'upstream-chain', hop: 2 });
    expect(hops.next()).toEqual({ id: 'upstream-chain', hop: 3 });
    leave();
    expect(() => hops.check({ id: 'upstream-chain', hop: 2 })).not.toThrow();
    expect(() => hops.check({ id: 'upstream-chain', hop: 3 })).toThrow(/came back/);
  });

  it('forgets a chain an hour after it last sent it', () => {
    const { hops, later } = guard();
    const sent = hops.next();
    later(CHAIN_MEMORY_MS - 1000);
    expect(() => hops.check({ id: sent.id, hop: 2 })).toThrow(/came back/);
    later(2000);
    expect(() => hops.check({ id: sent.id, hop: 2 })).not.toThrow();
  });

  it('remembers a bounded number of chains, the least recently sent forgotten first', () => {
    const hops = new HopGuard({ hopLimit: () => 4, maxRemembered: 3 });
    const sent = [hops.next(), hops.next(), hops.next(), hops.next()];
    expect(() => hops.check({ ...sent[0]!, hop: 2 })).not.toThrow();
    for (const chain of sent.slice(1)) expect(() => hops.check({ ...chain, hop: 2 })).toThrow(/came back/);
  });

  it('forged values only refuse: a made-up chain is taken, one naming a chain it sent is refused', () => {
    const { hops } = guard();
    // A caller cannot make a call pass that would be refused: nothing it sends is trusted to allow anything.
    expect(() => hops.check({ id: 'made-up-chain-id', hop: 1 })).not.toThrow();
    const ours = hops.next();
    expect(() => hops.check({ id: ours.id, hop: 1 })).toThrow(/came back/);
    // And what callers send is never remembered: only chains this agent sent out are.
    hops.check({ id: 'made-up-chain-2', hop: 3 });
    expect(() => hops.check({ id: 'made-up-chain-2', hop: 3 })).not.toThrow();
  });
});

describe('HopGuard.enter and next: calls out while an inbound call is served', () => {
  it('starts a new chain at hop 1 when no inbound call is being served', () => {
    const { hops } = guard();
    const a = hops.next();
    const b = hops.next();
    expect(a.hop).toBe(1);
    expect(b.hop).toBe(1);
    expect(a.id).not.toBe(b.id);
    expect(a.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('continues the served call’s chain one hop further; one that named none is its hop 1', () => {
    const { hops } = guard();
    const leave = hops.enter({ id: 'inbound-chain', hop: 2 });
    expect(hops.next()).toEqual({ id: 'inbound-chain', hop: 3 });
    leave();
    const leaveAnon = hops.enter(undefined);
    const [served] = hops.runningChains() as [CallChain];
    expect(served.hop).toBe(1);
    expect(hops.next()).toEqual({ id: served.id, hop: 2 });
    leaveAnon();
    expect(hops.runningChains()).toEqual([]);
    expect(hops.next().hop).toBe(1);
  });

  it('starts the chain of a served call that named none once, when a call out first needs it, and keeps it', () => {
    const { hops } = guard();
    const leave = hops.enter(undefined);
    const first = hops.next();
    const second = hops.next();
    expect(first.hop).toBe(2);
    expect(second).toEqual(first);
    expect(hops.runningChains()).toEqual([{ id: first.id, hop: 1 }]);
    // A later served call that named none is newer among equals: its own chain, not the first one's.
    const leaveOther = hops.enter(undefined);
    const other = hops.next();
    expect(other.hop).toBe(2);
    expect(other.id).not.toBe(first.id);
    leaveOther();
    expect(hops.next()).toEqual(first);
    leave();
  });

  it('with several served at once, continues the deepest (its hop limit comes soonest)', () => {
    const { hops } = guard();
    const leaves = [
      hops.enter({ id: 'shallow-chain', hop: 1 }),
      hops.enter({ id: 'deepest-chain', hop: 3 }),
      hops.enter({ id: 'middle-chain1', hop: 2 }),
    ];
    expect(hops.next()).toEqual({ id: 'deepest-chain', hop: 4 });
    leaves[1]!();
    expect(hops.next()).toEqual({ id: 'middle-chain1', hop: 3 });
  });

  it('remembers the lowest hop a chain left at, so a return anywhere past it is a loop', () => {
    const { hops } = guard(10);
    const first = hops.enter({ id: 'chain-lowest', hop: 1 });
    hops.next(); // sent at hop 2
    first();
    const second = hops.enter({ id: 'chain-lowest', hop: 5 });
    hops.next(); // sent at hop 6
    second();
    expect(() => hops.check({ id: 'chain-lowest', hop: 1 })).not.toThrow();
    expect(() => hops.check({ id: 'chain-lowest', hop: 2 })).toThrow(/at hop 2/);
  });
});
