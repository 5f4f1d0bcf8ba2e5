import type { IncomingMessage, ServerResponse } from 'node:http';
import { ProtocolError } from '../protocol/index.js';

/**
 * What an envelope may cost the agent before its sender is known (issue 11, items 2 and 3). Anyone can open
 * a connection, declare a body and send it slowly, or send an envelope whose `from` makes us fetch a card
 * from a host that never answers; every such request holds memory and, behind a tunnel, one of the
 * tunnel's few sockets (localtunnel.me gives 10). So:
 * - the body bytes being read are bounded across all requests at once (`budgetBytes`);
 * - at most `maxUnverified` envelopes are being read or verified at once, below the tunnel's socket count,
 *   so an anonymous client can never hold every socket and take the public address; the rest are answered
 *   503 at once, which frees their socket;
 * - a body must keep up `minBytesPerSecond` on average after `graceMs` (body.ts cuts it otherwise).
 * GETs (the card, health, task status) never pass through here.
 */
export interface IntakeOptions {
  /** Body bytes being read at once, all requests together; a body that does not fit gets 503. */
  budgetBytes: number;
  /** Envelopes being read or verified at once; more get 503 (see `probeMs` for the one exception). */
  maxUnverified: number;
  /** A body may take this long before the minimum rate applies. */
  graceMs: number;
  /** After the grace, a body must have arrived at this average rate, else it is cut (408). */
  minBytesPerSecond: number;
  /**
   * With every slot taken, a newcomer may still read its body for this long: a body that arrives whole in
   * that time (every genuine envelope does) takes the slot of the slowest body that is behind the minimum
   * rate, so a crowd of slow bodies cannot keep genuine callers out. Others get 503.
   */
  probeMs: number;
  retryAfterSeconds: number;
  now: () => number;
}

export const INTAKE_DEFAULTS: IntakeOptions = {
  budgetBytes: 32 * 1024 * 1024,
  maxUnverified: 6,
  graceMs: 2000,
  minBytesPerSecond: 16 * 1024,
  probeMs: 50,
  retryAfterSeconds: 1,
  now: Date.now,
};

/** One envelope request's claim on the intake, from its headers until it is verified or answered. */
export interface IntakeTicket {
  readonly rules: Pick<IntakeOptions, 'graceMs' | 'minBytesPerSecond' | 'probeMs' | 'now'>;
  /** Takes a read/verify slot: false when all are taken (the body may still win one, see `claim`). */
  admit(): boolean;
  /** A body that arrived whole while all slots were taken: takes a slow body's slot, or throws 503. */
  claim(): void;
  /** The 503 for a body that did not arrive whole within `probeMs` while all slots were taken. */
  busy(): ProtocolError;
  /** Counts `bytes` more against the shared budget; throws 503 when they do not fit. */
  reserve(bytes: number): void;
  /** Bytes of the body received so far (the minimum-rate rule and the choice of whose slot to take). */
  progress(received: number): void;
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

interface Entry {
  state: 'open' | 'reading' | 'verifying' | 'closed';
  admitted: boolean;
  startedAt: number;
  received: number;
  reserved: number;
  res: ServerResponse | undefined;
  evicted?: (refusal: ProtocolError) => void;
}

export class Intake {
  readonly options: IntakeOptions;
  private bytes = 0;
  private readonly slots = new Set<Entry>();

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

  /** Opens the ticket of one envelope request; everything is given back when its response closes. */
  open(req: IncomingMessage, res?: ServerResponse): IntakeTicket {
    const entry: Entry = { state: 'open', admitted: false, startedAt: 0, received: 0, reserved: 0, res };
    const ticket: IntakeTicket = {
      rules: this.options,
      admit: () => this.admit(entry),
      claim: () => this.claim(entry),
      busy: () => this.busy(entry, TOO_MANY),
      reserve: (bytes) => this.reserve(entry, bytes),
      progress: (received) => void (entry.received = received),
      bodyDone: () => this.bodyDone(entry),
      verified: () => {
        if (entry.state === 'verifying') this.free(entry);
      },
      onEvicted: (listener) => void (entry.evicted = listener),
      refuse: (refusal) => {
        // The body was not read to the end: close the connection after the reply rather than drain it.
        closeAfterReply(entry);
        this.free(entry);
        return refusal;
      },
      close: () => this.free(entry),
    };
    tickets.set(req, ticket);
    // Without the response (a request the server did not open), the slot lasts while the body is read.
    (res ?? req).once('close', ticket.close);
    return ticket;
  }

  private admit(entry: Entry): boolean {
    if (entry.state !== 'open') return entry.admitted;
    entry.state = 'reading';
    entry.startedAt = this.options.now();
    if (this.slots.size >= this.options.maxUnverified) return false;
    entry.admitted = true;
    this.slots.add(entry);
    return true;
  }

  private claim(entry: Entry): void {
    if (entry.admitted || entry.state === 'closed') return;
    const slowest = this.slowestBehindRate();
    if (!slowest) throw this.busy(entry, TOO_MANY);
    slowest.evicted?.(this.evictedRefusal(slowest));
    this.free(slowest);
    entry.admitted = true;
    this.slots.add(entry);
  }

  /** The body still being read with the lowest average rate, if it is below the minimum rate. */
  private slowestBehindRate(): Entry | undefined {
    const now = this.options.now();
    let slowest: Entry | undefined;
    let slowestRate = Infinity;
    for (const entry of this.slots) {
      if (entry.state !== 'reading') continue;
      const seconds = Math.max(now - entry.startedAt, 1) / 1000;
      const rate = entry.received / seconds;
      if (rate < this.options.minBytesPerSecond && rate < slowestRate) {
        slowest = entry;
        slowestRate = rate;
      }
    }
    return slowest;
  }

  private reserve(entry: Entry, bytes: number): void {
    if (entry.state === 'closed') return;
    if (this.bytes + bytes > this.options.budgetBytes)
      throw this.busy(entry, 'The agent is receiving too much data right now');
    this.bytes += bytes;
    entry.reserved += bytes;
  }

  private bodyDone(entry: Entry): void {
    if (entry.state !== 'reading') return;
    this.releaseBytes(entry);
    entry.state = 'verifying';
  }

  private free(entry: Entry): void {
    this.releaseBytes(entry);
    this.slots.delete(entry);
    entry.admitted = false;
    entry.evicted = undefined;
    entry.state = 'closed';
  }

  private releaseBytes(entry: Entry): void {
    this.bytes -= entry.reserved;
    entry.reserved = 0;
  }

  private busy(entry: Entry, what: string): ProtocolError {
    const seconds = this.options.retryAfterSeconds;
    const refusal = new ProtocolError('AGENT_UNAVAILABLE', 503, `${what}; retry in ${seconds} s.`, {
      step: 'size',
      retryAfterSeconds: seconds,
    });
    closeAfterReply(entry);
    this.free(entry);
    return refusal;
  }

  private evictedRefusal(entry: Entry): ProtocolError {
    const seconds = this.options.retryAfterSeconds;
    const elapsed = ((this.options.now() - entry.startedAt) / 1000).toFixed(1);
    return new ProtocolError(
      'AGENT_UNAVAILABLE',
      503,
      `The request body was arriving too slowly (${entry.received} bytes in ${elapsed} s) while other requests waited; send the body at once and retry in ${seconds} s.`,
      { step: 'size', retryAfterSeconds: seconds },
    );
  }
}

const TOO_MANY = 'Too many requests are being received or verified right now';
const tickets = new WeakMap<IncomingMessage, IntakeTicket>();
let standalone: Intake | undefined;

/**
 * The ticket the agent server opened for this request (AgentServer does for every envelope POST); a request
 * it did not see gets one from a default intake, so the body rules hold wherever a body is read.
 */
export function ticketFor(req: IncomingMessage): IntakeTicket {
  return tickets.get(req) ?? (standalone ??= new Intake()).open(req);
}

// A body not read to the end is not drained: the connection closes after the reply.
function closeAfterReply(entry: Entry): void {
  if (entry.res && !entry.res.headersSent) entry.res.setHeader('Connection', 'close');
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
