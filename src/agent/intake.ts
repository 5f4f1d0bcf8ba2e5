import type { IncomingMessage, ServerResponse } from 'node:http';
import { ProtocolError } from '../protocol/index.js';
import { clientAddress, LOCAL_CLIENT } from './client-address.js';

/**
 * What an envelope may cost the agent before its sender is known (issue 11, items 2 and 3). Anyone can open
 * a connection, declare a body and send it slowly, or send an envelope whose `from` makes us fetch a card
 * from a host that never answers; every such request holds memory and, behind a tunnel, one of the
 * tunnel's few sockets (localtunnel.me gives 10). So:
 * - the body bytes being read are bounded across all requests at once (`budgetBytes`);
 * - at most `maxUnverified` envelopes are being read or verified at once, below the tunnel's socket count,
 *   so an anonymous client can never hold every socket and take the public address; a body that is not
 *   whole within `probeMs` is answered 503 at once, which frees its socket;
 * - a body that arrived whole while every slot was taken waits for one in a bounded queue (first come, first
 *   served, at most `queueMs`), so well-behaved callers under load are served rather than refused; it is
 *   whole (a slow sender never waits here), still counted in the byte budget, and its wait is no longer
 *   than the Retry-After a refusal would have told it;
 * - a body must keep up `minBytesPerSecond` on average after `graceMs` (one timer per intake checks the
 *   bodies being read; body.ts cuts a stalled one).
 * - at most `maxPerAddress` of the slots, and `maxStreamsPerAddress` open streams, per client address: a
 *   tunnel has about ten sockets, and each slow body or open stream holds one of them (issue 25, items 1
 *   and 5), so no one caller may hold most of them.
 * Every request with a body on the agent port opens a ticket here, whatever its path or protocol (the A2A
 * front door's too); GETs (the card, health, task status) never pass through here.
 */
export interface IntakeOptions {
  /** Body bytes being read at once, all requests together; a body that does not fit gets 503. */
  budgetBytes: number;
  /** Envelopes being read or verified at once; more wait (see `probeMs` and `maxQueued`) or get 503. */
  maxUnverified: number;
  /** A body may take this long before the minimum rate applies. */
  graceMs: number;
  /** After the grace, a body must have arrived at this average rate, else it is cut (408). */
  minBytesPerSecond: number;
  /**
   * With every slot taken, a newcomer may still read its body for this long: a body that arrives whole in
   * that time (every genuine envelope does) takes the slot of the slowest body that is behind the minimum
   * rate (and has been read for longer than this), so a crowd of slow bodies cannot keep genuine callers
   * out; else it waits in the queue. Others get 503.
   */
  probeMs: number;
  /** Whole bodies that may wait for a slot at once; one more gets 503. */
  maxQueued: number;
  /**
   * Slots one client address may hold at once (client-address.ts: behind a tunnel, the address the tunnel
   * forwarded). Past it, its next body must arrive whole within `probeMs`, as when every slot is taken. Callers
   * on this machine with no forwarded address (`local`) are held to the global caps only.
   */
  maxPerAddress: number;
  /** Streams (SSE answers) open at once, all callers together; one more is refused with 429. */
  maxStreams: number;
  /** Streams one client address may hold open at once; one more is refused with 429. */
  maxStreamsPerAddress: number;
  /** How long a whole body waits in the queue for a slot before it gets 503. */
  queueMs: number;
  retryAfterSeconds: number;
  now: () => number;
}

export const INTAKE_DEFAULTS: IntakeOptions = {
  budgetBytes: 32 * 1024 * 1024,
  maxUnverified: 6,
  graceMs: 2000,
  minBytesPerSecond: 16 * 1024,
  probeMs: 50,
  maxQueued: 64,
  maxPerAddress: 2,
  maxStreams: 64,
  maxStreamsPerAddress: 4,
  queueMs: 1000,
  retryAfterSeconds: 1,
  now: Date.now,
};

/** One envelope request's claim on the intake, from its headers until it is verified or answered. */
export interface IntakeTicket {
  readonly rules: Pick<IntakeOptions, 'graceMs' | 'minBytesPerSecond' | 'probeMs' | 'now'>;
  /** Takes a read/verify slot: false when all are taken (the body may still win one, see `claim`). */
  admit(): boolean;
  /**
   * A body that arrived whole while all slots were taken: resolves once it holds a slot (a slow body's, or
   * the next one freed, first come first served); rejects with 503 when the queue is full or `queueMs` is
   * over, and with a plain Error when the caller leaves while it waits.
   */
  claim(): Promise<void>;
  /** The 503 for a body that did not arrive whole within `probeMs` while all slots were taken. */
  busy(): ProtocolError;
  /** Counts `bytes` more against the shared budget; throws 503 when they do not fit. */
  reserve(bytes: number): void;
  /** Bytes of the body received so far (the minimum-rate rule and the choice of whose slot to take). */
  progress(received: number): void;
  /**
   * While the body is read: `onStall` is called once it falls behind the minimum rate (`graceMs`, then
   * `minBytesPerSecond` on average; the intake checks every body being read a few times a second).
   * `undefined` stops the watch.
   */
  watchRate(onStall: (() => void) | undefined): void;
  /** The body is read: its bytes leave the budget; the slot is kept until `verified`. */
  bodyDone(): void;
  /** The sender's key lookup is over (the only wait in verification): the slot is free. */
  verified(): void;
  /** Called with the refusal if this request's slot is given to a newcomer. */
  onEvicted(listener: ((refusal: ProtocolError) => void) | undefined): void;
  /** Gives everything back and marks the connection to close after the reply: returns `refusal` to throw. */
  refuse(refusal: ProtocolError): ProtocolError;
  /** Gives everything back (the reply ended or the socket died). */
  close(): void;
}

/** Every how often the bodies being read are checked against the minimum rate (one timer per intake). */
const RATE_CHECK_MS = 250;

export class Intake {
  readonly options: IntakeOptions;
  /** @internal Body bytes being read now (see Ticket). */
  bytes = 0;
  /** @internal Tickets holding a read/verify slot. */
  readonly slots = new Set<Ticket>();
  /** @internal Whole bodies waiting for a slot, oldest first (never more than `maxQueued`). */
  readonly queue: Ticket[] = [];
  /** @internal Slots held per client address (`local` is not counted). */
  readonly slotsByAddress = new Map<string, number>();
  /** Streams open now, and per client address. */
  private streamCount = 0;
  private readonly streamsByAddress = new Map<string, number>();
  /** Bodies being read under the minimum rate, checked together by one timer. */
  private readonly watched = new Set<Ticket>();
  private rateTimer: NodeJS.Timeout | undefined;

  constructor(options: Partial<IntakeOptions> = {}) {
    this.options = { ...INTAKE_DEFAULTS, ...stripUndefined(options) };
  }

  /** Body bytes being read now, all requests together (never above `budgetBytes`). */
  get bytesInFlight(): number {
    return this.bytes;
  }

  /** Envelopes being read or verified now (never above `maxUnverified`). */
  get unverified(): number {
    return this.slots.size;
  }

  /** Whole bodies waiting for a slot now (never above `maxQueued`). */
  get queued(): number {
    return this.queue.length;
  }

  /** Streams open now, all callers together (never above `maxStreams`). */
  get streams(): number {
    return this.streamCount;
  }

  /**
   * A stream (an SSE answer, which holds its connection, and behind a tunnel one of its sockets, while it
   * lasts) is about to open for `req`: counted against the caps until `res` closes. Throws the 429 to
   * answer instead when the caller's address, or everyone together, holds as many as they may.
   */
  openStream(req: IncomingMessage, res: ServerResponse): void {
    const address = clientAddress(req);
    const local = address === LOCAL_CLIENT;
    const mine = this.streamsByAddress.get(address) ?? 0;
    const { maxStreams, maxStreamsPerAddress, retryAfterSeconds } = this.options;
    if (this.streamCount >= maxStreams || (!local && mine >= maxStreamsPerAddress)) {
      const held =
        this.streamCount >= maxStreams
          ? `${this.streamCount} streams are open on this agent, the most it keeps at once`
          : `your address holds ${mine} open streams, the most one caller may`;
      throw new ProtocolError(
        'RATE_LIMITED',
        429,
        `${held}; close one or wait for it to end, then retry in ${retryAfterSeconds} s.`,
        { step: 'rate-limit', retryAfterSeconds },
      );
    }
    this.streamCount++;
    if (!local) this.streamsByAddress.set(address, mine + 1);
    res.once('close', () => {
      this.streamCount--;
      if (local) return;
      const left = (this.streamsByAddress.get(address) ?? 1) - 1;
      if (left > 0) this.streamsByAddress.set(address, left);
      else this.streamsByAddress.delete(address);
    });
  }

  /** Opens the ticket of one request with a body; everything is given back when its response closes. */
  open(req: IncomingMessage, res?: ServerResponse): IntakeTicket {
    const ticket = new Ticket(this, res, clientAddress(req));
    (req as Carrier)[TICKET] = ticket;
    // Without the response (a request the server did not open), the slot lasts while the body is read.
    const closer = (res ?? req) as Carrier;
    if (res) closer[TICKET] = ticket;
    closer.once('close', closeTicket);
    return ticket;
  }

  /** @internal The body of `ticket` is being read: from now on its rate is checked (see `checkRates`). */
  watch(ticket: Ticket): void {
    this.watched.add(ticket);
    if (this.rateTimer) return;
    this.rateTimer = setInterval(() => this.checkRates(), RATE_CHECK_MS);
    this.rateTimer.unref();
  }

  /** @internal */
  unwatch(ticket: Ticket): void {
    this.watched.delete(ticket);
  }

  /**
   * The minimum rate: by `grace + received / rate` after its start, a body must have had its next bytes.
   * The timer stops at the first check with no body being read (it starts again with the next body).
   */
  private checkRates(): void {
    if (this.watched.size === 0) {
      clearInterval(this.rateTimer);
      this.rateTimer = undefined;
      return;
    }
    const { graceMs, minBytesPerSecond, now } = this.options;
    const at = now();
    for (const ticket of this.watched) {
      if (at - ticket.startedAt >= graceMs + (ticket.received * 1000) / minBytesPerSecond) {
        this.watched.delete(ticket);
        ticket.stalled?.();
      }
    }
    // A body read since the last check may have fallen behind the rate: its slot goes to the queue.
    this.serveQueue();
  }

  /** @internal Queues a whole body for the next slot (see IntakeTicket.claim). */
  enqueue(ticket: Ticket): Promise<void> {
    const waiting = new Promise<void>((resolve, reject) => (ticket.waiter = { resolve, reject }));
    this.queue.push(ticket);
    this.serveQueue();
    if (ticket.waiter && this.queue.length > this.options.maxQueued) {
      ticket.refuseWait('Too many requests are waiting to be received right now');
    } else if (ticket.waiter) {
      const timer = setTimeout(() => {
        const waited = (this.options.queueMs / 1000).toFixed(1);
        ticket.refuseWait(`${TOO_MANY} (waited ${waited} s for a turn)`);
      }, this.options.queueMs);
      timer.unref();
      ticket.queueTimer = timer;
    }
    return waiting;
  }

  /** @internal A slot was given back: the oldest waiting body takes it. */
  slotFreed(): void {
    const next = this.queue.shift();
    if (next) next.grant();
  }

  /** Gives the waiting bodies the free slots, then the slots of bodies behind the minimum rate. */
  private serveQueue(): void {
    while (this.queue.length > 0) {
      if (this.slots.size < this.options.maxUnverified) {
        (this.queue.shift() as Ticket).grant();
        continue;
      }
      const slowest = this.slowestBehindRate();
      if (!slowest) return;
      slowest.evict(); // its slot goes to the oldest waiting body (slotFreed)
    }
  }

  /**
   * @internal The body still being read with the lowest average rate, if it is below the minimum rate and
   * has been read for longer than `probeMs` (a genuine body arrives whole by then: a young one is not slow).
   */
  slowestBehindRate(): Ticket | undefined {
    const now = this.options.now();
    let slowest: Ticket | undefined;
    let slowestRate = Infinity;
    for (const entry of this.slots) {
      if (entry.state !== 'reading' || now - entry.startedAt < this.options.probeMs) continue;
      const seconds = Math.max(now - entry.startedAt, 1) / 1000;
      const rate = entry.received / seconds;
      if (rate < this.options.minBytesPerSecond && rate < slowestRate) {
        slowest = entry;
        slowestRate = rate;
      }
    }
    return slowest;
  }
}

/** The ticket as a class (methods on the prototype): one small object per request, no closures. */
class Ticket implements IntakeTicket {
  state: 'open' | 'reading' | 'verifying' | 'closed' = 'open';
  admitted = false;
  startedAt = 0;
  received = 0;
  reserved = 0;
  evicted: ((refusal: ProtocolError) => void) | undefined = undefined;
  /** Called by the intake's rate check when the body fell behind the minimum rate. */
  stalled: (() => void) | undefined = undefined;
  /** While the whole body waits in the queue: how to end its wait. */
  waiter: { resolve: () => void; reject: (error: Error) => void } | undefined = undefined;
  queueTimer: NodeJS.Timeout | undefined = undefined;

  constructor(
    private readonly intake: Intake,
    private readonly res: ServerResponse | undefined,
    private readonly address: string,
  ) {}

  get rules(): IntakeOptions {
    return this.intake.options;
  }

  admit(): boolean {
    if (this.state !== 'open') return this.admitted;
    const { intake } = this;
    this.state = 'reading';
    this.startedAt = intake.options.now();
    if (intake.slots.size >= intake.options.maxUnverified) return false;
    const held = intake.slotsByAddress.get(this.address) ?? 0;
    if (this.address !== LOCAL_CLIENT && held >= intake.options.maxPerAddress) return false;
    this.takeSlot();
    return true;
  }

  /** @internal The slot is this request's: counted for its address too. */
  takeSlot(): void {
    this.admitted = true;
    this.intake.slots.add(this);
    if (this.address === LOCAL_CLIENT) return;
    const held = this.intake.slotsByAddress;
    held.set(this.address, (held.get(this.address) ?? 0) + 1);
  }

  /** @internal The slot is given back (its address's count with it); true when it held one. */
  dropSlot(): boolean {
    if (!this.intake.slots.delete(this)) return false;
    if (this.address === LOCAL_CLIENT) return true;
    const held = this.intake.slotsByAddress;
    const left = (held.get(this.address) ?? 1) - 1;
    if (left > 0) held.set(this.address, left);
    else held.delete(this.address);
    return true;
  }

  claim(): Promise<void> {
    if (this.admitted) return Promise.resolve();
    if (this.state === 'closed') return Promise.reject(callerLeft());
    return this.intake.enqueue(this);
  }

  /** @internal Its turn in the queue (the intake took it out): the slot is its own. */
  grant(): void {
    const waiter = this.endWait();
    this.takeSlot();
    waiter?.resolve();
  }

  /** @internal Out of the queue with a 503 (queue full, or the wait is over); the body was read whole. */
  refuseWait(what: string): void {
    const waiter = this.leaveQueue();
    waiter?.reject(this.refuseBusy(what, false));
  }

  /** @internal Its slot goes to a body that waits: it is refused as too slow. */
  evict(): void {
    this.evicted?.(this.evictedRefusal());
    this.close();
  }

  busy(): ProtocolError {
    return this.refuseBusy(TOO_MANY);
  }

  reserve(bytes: number): void {
    if (this.state === 'closed') return;
    const { intake } = this;
    if (intake.bytes + bytes > intake.options.budgetBytes)
      throw this.refuseBusy('The agent is receiving too much data right now');
    intake.bytes += bytes;
    this.reserved += bytes;
  }

  progress(received: number): void {
    this.received = received;
  }

  watchRate(onStall: (() => void) | undefined): void {
    this.stalled = onStall;
    if (onStall) this.intake.watch(this);
    else this.intake.unwatch(this);
  }

  bodyDone(): void {
    if (this.state !== 'reading') return;
    this.releaseBytes();
    this.state = 'verifying';
  }

  verified(): void {
    if (this.state === 'verifying') this.close();
  }

  onEvicted(listener: ((refusal: ProtocolError) => void) | undefined): void {
    this.evicted = listener;
  }

  refuse(refusal: ProtocolError): ProtocolError {
    // The body was not read to the end: close the connection after the reply rather than drain it.
    this.closeAfterReply();
    this.close();
    return refusal;
  }

  close(): void {
    this.releaseBytes();
    // Its caller left while it waited: it is dropped from the queue.
    if (this.waiter) this.leaveQueue()?.reject(callerLeft());
    const freed = this.dropSlot();
    this.intake.unwatch(this);
    this.admitted = false;
    this.evicted = undefined;
    this.stalled = undefined;
    this.state = 'closed';
    if (freed) this.intake.slotFreed();
  }

  private leaveQueue(): Ticket['waiter'] {
    const at = this.intake.queue.indexOf(this);
    if (at >= 0) this.intake.queue.splice(at, 1);
    return this.endWait();
  }

  private endWait(): Ticket['waiter'] {
    const waiter = this.waiter;
    this.waiter = undefined;
    clearTimeout(this.queueTimer);
    this.queueTimer = undefined;
    return waiter;
  }

  private releaseBytes(): void {
    this.intake.bytes -= this.reserved;
    this.reserved = 0;
  }

  private refuseBusy(what: string, closeConnection = true): ProtocolError {
    const seconds = this.intake.options.retryAfterSeconds;
    const refusal = new ProtocolError('AGENT_UNAVAILABLE', 503, `${what}; retry in ${seconds} s.`, {
      step: 'size',
      retryAfterSeconds: seconds,
    });
    if (closeConnection) this.closeAfterReply();
    this.close();
    return refusal;
  }

  private evictedRefusal(): ProtocolError {
    const seconds = this.intake.options.retryAfterSeconds;
    const elapsed = ((this.intake.options.now() - this.startedAt) / 1000).toFixed(1);
    return new ProtocolError(
      'AGENT_UNAVAILABLE',
      503,
      `The request body was arriving too slowly (${this.received} bytes in ${elapsed} s) while other requests waited; send the body at once and retry in ${seconds} s.`,
      { step: 'size', retryAfterSeconds: seconds },
    );
  }

  // A body not read to the end is not drained: the connection closes after the reply.
  private closeAfterReply(): void {
    if (this.res && !this.res.headersSent) this.res.setHeader('Connection', 'close');
  }
}

const TOO_MANY = 'Too many requests are being received or verified right now';
const callerLeft = () => new Error('the caller closed the connection while its body waited for a turn');
/** The request's ticket (and, on the response, the same ticket for its 'close' listener). */
const TICKET = Symbol('intake ticket');
type Carrier = (IncomingMessage | ServerResponse) & { [TICKET]?: Ticket };
let standalone: Intake | undefined;

// One listener function for every request: the emitter it is called on carries its ticket.
function closeTicket(this: Carrier): void {
  this[TICKET]?.close();
}

/**
 * The ticket the agent server opened for this request (AgentServer does for every envelope POST); a request
 * it did not see gets one from a default intake, so the body rules hold wherever a body is read.
 */
export function ticketFor(req: IncomingMessage): IntakeTicket {
  return (req as Carrier)[TICKET] ?? (standalone ??= new Intake()).open(req);
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
