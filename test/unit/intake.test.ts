import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Intake, type IntakeOptions } from '../../src/agent/intake.js';
import { ProtocolError } from '../../src/protocol/index.js';

// The intake's bookkeeping on its own, with a fake clock: the byte budget, the read/verify slots, which
// slot a body that arrived whole may take, and the queue where it otherwise waits. (body.ts and the server are covered by
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
  const open = (from?: string) => gate.open(request(from));
  return { gate, open, advance: (ms: number) => void (now += ms) };
}

/** A request from this machine, or (`from`) one the tunnel on this machine forwarded for that address. */
function request(from?: string): IncomingMessage {
  const headers = from ? { 'x-forwarded-for': from } : {};
  return {
    once: () => undefined,
    headers,
    socket: { remoteAddress: '127.0.0.1' },
  } as unknown as IncomingMessage;
}

/** A response whose 'close' the test fires. */
function response() {
  const listeners: (() => void)[] = [];
  const res = { once: (_event: string, listener: () => void) => listeners.push(listener) };
  return { res: res as unknown as ServerResponse, close: () => listeners.splice(0).forEach((l) => l()) };
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

  it('admits up to maxUnverified; a body that arrived whole takes the slowest slot behind the minimum rate', async () => {
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
    await newcomer.claim();
    expect(evicted).toMatchObject({ code: 'AGENT_UNAVAILABLE', httpStatus: 503, retryAfterSeconds: 1 });
    expect(evicted?.message).toMatch(/10 bytes in 1\.0 s/);
    expect(gate.unverified).toBe(2);
    expect(gate.queued).toBe(0);
  });

  it('never takes the slot of a body read for less than probeMs: a young body is not a slow one', () => {
    const { gate, open, advance } = intake({ probeMs: 50 });
    const young = open();
    young.admit();
    const other = open();
    other.admit();
    let evicted = false;
    young.onEvicted(() => (evicted = true));
    advance(10); // nothing received yet: "behind the rate", but only 10 ms old
    const newcomer = open();
    expect(newcomer.admit()).toBe(false);
    void newcomer.claim().catch(() => undefined);
    expect(evicted).toBe(false);
    expect(gate.queued).toBe(1);
    newcomer.close();
  });

  it('never takes the slot of a request that is verifying (its body is read, its key lookup pending)', () => {
    const { gate, open, advance } = intake({ maxUnverified: 1 });
    const verifying = open();
    verifying.admit();
    verifying.bodyDone();
    advance(60_000);
    const newcomer = open();
    expect(newcomer.admit()).toBe(false);
    void newcomer.claim().catch(() => undefined);
    expect(gate.unverified).toBe(1);
    expect(gate.queued).toBe(1);
    newcomer.close();
  });
});

describe('the queue of whole bodies waiting for a slot', () => {
  afterEach(() => void vi.useRealTimers());

  /** Every slot taken by a body that is verifying; then `count` whole bodies claim a slot. */
  function full(count: number, options: Partial<IntakeOptions> = {}) {
    const made = intake({ maxUnverified: 2, ...options });
    const holders = [made.open(), made.open()];
    for (const holder of holders) {
      holder.admit();
      holder.bodyDone();
    }
    const outcomes: string[] = [];
    const waiting = Array.from({ length: count }, (_, i) => {
      const ticket = made.open();
      expect(ticket.admit()).toBe(false);
      void ticket.claim().then(
        () => outcomes.push(`${i} served`),
        (error: Error) =>
          outcomes.push(
            `${i} ${error instanceof ProtocolError ? error.httpStatus : 'dropped'}: ${error.message}`,
          ),
      );
      return ticket;
    });
    return { ...made, holders, waiting, outcomes };
  }
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it('serves waiting bodies first come, first served, as slots are given back', async () => {
    const { gate, holders, waiting, outcomes } = full(3);
    expect(gate.queued).toBe(3);
    holders[0]!.verified();
    await settle();
    expect(outcomes).toEqual(['0 served']);
    holders[1]!.close();
    waiting[0]!.bodyDone();
    waiting[0]!.verified();
    await settle();
    expect(outcomes).toEqual(['0 served', '1 served', '2 served']);
    expect(gate.unverified).toBe(2);
    expect(gate.queued).toBe(0);
  });

  it('is bounded: one body more than maxQueued is refused at once with 503, the others keep waiting', async () => {
    const { gate, outcomes } = full(3, { maxQueued: 2 });
    await settle();
    expect(outcomes).toEqual([
      '2 503: Too many requests are waiting to be received right now; retry in 1 s.',
    ]);
    expect(gate.queued).toBe(2);
  });

  it('drops a body whose caller left while it waited: the freed slot goes to the next one', async () => {
    const { gate, holders, waiting, outcomes } = full(2);
    waiting[0]!.close(); // its response closed: the caller went away
    await settle();
    expect(outcomes).toEqual([
      '0 dropped: the caller closed the connection while its body waited for a turn',
    ]);
    expect(gate.queued).toBe(1);
    holders[0]!.verified();
    await settle();
    expect(outcomes.at(-1)).toBe('1 served');
  });

  it('keeps a waiting body counted in the byte budget until it is read into its slot', async () => {
    const { gate, holders, waiting } = full(1);
    waiting[0]!.reserve(400);
    expect(gate.bytesInFlight).toBe(400);
    holders[0]!.verified();
    await settle();
    waiting[0]!.bodyDone();
    expect(gate.bytesInFlight).toBe(0);
  });

  it('waits at most queueMs, then answers 503 as before', async () => {
    vi.useFakeTimers();
    const { gate, outcomes } = full(2, { queueMs: 1000 });
    await vi.advanceTimersByTimeAsync(999);
    expect(outcomes).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(outcomes.sort()).toEqual([
      '0 503: Too many requests are being received or verified right now (waited 1.0 s for a turn); retry in 1 s.',
      '1 503: Too many requests are being received or verified right now (waited 1.0 s for a turn); retry in 1 s.',
    ]);
    expect(gate.queued).toBe(0);
    expect(gate.unverified).toBe(2);
  });

  it('lets one client address hold at most maxPerAddress slots; others, and callers on this machine, still get theirs', () => {
    const { gate, open } = intake({ maxUnverified: 6, maxPerAddress: 2 });
    const crowd = ['203.0.113.9', '203.0.113.9', '203.0.113.9'].map((address) => open(address));
    expect(crowd.map((ticket) => ticket.admit())).toEqual([true, true, false]);
    // A caller at another address, behind the same tunnel, is not held up by that one.
    expect(open('198.51.100.4').admit()).toBe(true);
    // The tunnel appends its hop last: a caller's own entries before it do not make it someone else.
    expect(open('10.0.0.1, 203.0.113.9').admit()).toBe(false);
    // No forwarded address: a process on this machine, held to the global cap only.
    expect([open(), open()].map((ticket) => ticket.admit())).toEqual([true, true]);
    expect(gate.unverified).toBe(5);
    crowd[0]?.close();
    expect(open('203.0.113.9').admit()).toBe(true);
  });

  it('caps open streams per client address and in all, with a 429 that says what to do, until their responses close', () => {
    const { gate } = intake({ maxStreams: 5, maxStreamsPerAddress: 2 });
    const first = response();
    gate.openStream(request('203.0.113.9'), first.res);
    gate.openStream(request('203.0.113.9'), response().res);
    const mine = refusal(() => gate.openStream(request('203.0.113.9'), response().res));
    expect(mine).toMatchObject({ code: 'RATE_LIMITED', httpStatus: 429, retryAfterSeconds: 1 });
    expect(mine.message).toMatch(/your address holds 2 open streams, the most one caller may; close one/);
    first.close();
    gate.openStream(request('203.0.113.9'), response().res);
    // Callers on this machine are held to the total only.
    gate.openStream(request(), response().res);
    gate.openStream(request(), response().res);
    gate.openStream(request(), response().res);
    expect(gate.streams).toBe(5);
    const all = refusal(() => gate.openStream(request('198.51.100.4'), response().res));
    expect(all.message).toMatch(/5 streams are open on this agent, the most it keeps at once/);
  });
});
