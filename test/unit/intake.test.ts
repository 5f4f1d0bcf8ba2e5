import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { Intake, type IntakeOptions } from '../../src/agent/intake.js';
import { ProtocolError } from '../../src/protocol/index.js';

// The intake's bookkeeping on its own, with a fake clock: the byte budget, the read/verify slots, and
// which slot a body that arrived whole may take. (body.ts and the server are covered by
// test/integration/body-limits.test.ts and tunnel-slowloris.test.ts.)

function intake(options: Partial<IntakeOptions> = {}) {
  let now = 0;
  const gate = new Intake({
    budgetBytes: 1000,
    maxUnverified: 2,
    minBytesPerSecond: 100,
    now: () => now,
    ...options,
  });
  const open = () => gate.open({ once: () => undefined } as unknown as IncomingMessage);
  return { gate, open, advance: (ms: number) => void (now += ms) };
}

function refusal(step: () => unknown): ProtocolError {
  try {
    step();
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError);
    return error as ProtocolError;
  }
  throw new Error('expected a refusal');
}

describe('Intake', () => {
  it('counts reserved bytes against the budget and refuses what does not fit with 503 and Retry-After', () => {
    const { gate, open } = intake();
    const a = open();
    a.admit();
    a.reserve(700);
    const b = open();
    b.admit();
    const refused = refusal(() => b.reserve(400));
    expect(refused).toMatchObject({ code: 'AGENT_UNAVAILABLE', httpStatus: 503, step: 'size' });
    expect(refused.retryAfterSeconds).toBe(1);
    expect(gate.bytesInFlight).toBe(700);
    // A refused ticket has given its slot back.
    expect(gate.unverified).toBe(1);
    a.bodyDone();
    expect(gate.bytesInFlight).toBe(0);
    expect(gate.unverified).toBe(1); // until verified
    a.verified();
    expect(gate.unverified).toBe(0);
  });

  it('gives everything back once, however often it is closed', () => {
    const { gate, open } = intake();
    const a = open();
    a.admit();
    a.reserve(500);
    a.close();
    a.close();
    a.verified();
    expect(gate.bytesInFlight).toBe(0);
    expect(gate.unverified).toBe(0);
  });

  it('admits up to maxUnverified; a body that arrived whole takes the slowest slot behind the minimum rate', () => {
    const { gate, open, advance } = intake();
    const slow = open();
    const fast = open();
    expect(slow.admit()).toBe(true);
    expect(fast.admit()).toBe(true);
    let evicted: ProtocolError | undefined;
    slow.onEvicted((why) => (evicted = why));
    advance(1000);
    slow.progress(10); // 10 B/s, behind 100 B/s
    fast.progress(500); // 500 B/s, keeping up

    const newcomer = open();
    expect(newcomer.admit()).toBe(false);
    newcomer.claim();
    expect(evicted).toMatchObject({ code: 'AGENT_UNAVAILABLE', httpStatus: 503, retryAfterSeconds: 1 });
    expect(evicted?.message).toMatch(/10 bytes in 1\.0 s/);
    expect(gate.unverified).toBe(2);

    // The remaining readers keep up, or are verifying: a further newcomer is refused.
    newcomer.bodyDone();
    const late = open();
    expect(late.admit()).toBe(false);
    expect(refusal(() => late.claim())).toMatchObject({ httpStatus: 503 });
    expect(late.busy()).toMatchObject({ httpStatus: 503 });
    expect(gate.unverified).toBe(2);
  });

  it('never takes the slot of a request that is verifying (its body is read, its key lookup pending)', () => {
    const { gate, open, advance } = intake({ maxUnverified: 1 });
    const verifying = open();
    verifying.admit();
    verifying.bodyDone();
    advance(60_000);
    const newcomer = open();
    expect(newcomer.admit()).toBe(false);
    expect(refusal(() => newcomer.claim()).message).toMatch(/Too many requests/);
    expect(gate.unverified).toBe(1);
  });
});
