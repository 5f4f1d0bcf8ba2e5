import type { IncomingMessage } from 'node:http';
import { ProtocolError, schemaInvalid } from '../protocol/index.js';
import { ticketFor, type IntakeTicket } from './intake.js';

/**
 * Reads the exact request bytes (the digest and signatures cover them) under the intake's rules
 * (intake.ts): at most `limit` bytes (413), within the shared byte budget and the read/verify slots (503
 * with Retry-After; a body that arrived whole waits briefly for a slot first), and at the minimum rate after
 * the grace (a stalled body is cut with 408). Every refusal of a body not read to the end closes the
 * connection after the reply, so the rest of the body is never read.
 */
export async function readRawBody(
  req: IncomingMessage,
  limit: number,
  onBytes?: (bytes: number) => void,
): Promise<Buffer> {
  const ticket = ticketFor(req);
  const declared = declaredLength(req);
  if (declared !== undefined && declared > limit) throw ticket.refuse(tooLarge(limit));
  const admitted = ticket.admit();
  // A declared body is counted whole before a byte is read; a chunked one as it arrives.
  if (declared !== undefined) ticket.reserve(declared);
  return read(req, ticket, { limit, declared, admitted, onBytes });
}

interface ReadState {
  limit: number;
  declared: number | undefined;
  /** False when every read/verify slot was taken: the body must arrive whole within the probe. */
  admitted: boolean;
  /** Hears of each chunk as it arrives: what was read, whatever the request declared. */
  onBytes: ((bytes: number) => void) | undefined;
}

function read(req: IncomingMessage, ticket: IntakeTicket, state: ReadState): Promise<Buffer> {
  const { graceMs, minBytesPerSecond, probeMs, now } = ticket.rules;
  const { limit, declared, admitted, onBytes } = state;
  const startedAt = now();
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let probeTimer: NodeJS.Timeout | undefined;

    const detach = () => {
      ticket.watchRate(undefined);
      clearTimeout(probeTimer);
      ticket.onEvicted(undefined);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    // Stops reading; what still arrives is discarded until the connection closes after the reply.
    const cut = (error: unknown) => {
      detach();
      req.resume();
      reject(error instanceof ProtocolError ? ticket.refuse(error) : error);
    };
    // Runs an intake step that may refuse (it throws the 503); false when it did.
    const allowed = (step: () => void): boolean => {
      try {
        step();
        return true;
      } catch (error) {
        cut(error);
        return false;
      }
    };

    function onData(chunk: Buffer) {
      received += chunk.length;
      onBytes?.(chunk.length);
      if (received > limit) return cut(tooLarge(limit));
      if (declared === undefined && !allowed(() => ticket.reserve(chunk.length))) return;
      ticket.progress(received);
      chunks.push(chunk);
    }
    function onEnd() {
      detach();
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      const done = () => {
        ticket.bodyDone();
        resolve(body);
      };
      if (admitted) return done();
      // Arrived whole while every slot was taken: it takes a slow body's slot or waits for a free one.
      ticket.claim().then(done, reject);
    }
    function onGone() {
      detach();
      ticket.close();
      reject(new Error('the caller closed the connection before sending the whole body'));
    }

    // The minimum rate (checked by the intake): by `grace + received / rate` after the start, the next
    // bytes must have come.
    const stalled = () => {
      const seconds = ((now() - startedAt) / 1000).toFixed(1);
      const of = declared === undefined ? '' : ` of ${declared}`;
      cut(
        schemaInvalid(
          `The request body stalled: ${received}${of} bytes arrived in ${seconds} s; after the first ${graceMs / 1000} s a body must arrive at ${perSecond(minBytesPerSecond)} or more. Send the body at once.`,
          'size',
          408,
        ),
      );
    };

    ticket.onEvicted((refusal) => cut(refusal));
    if (!admitted) probeTimer = setTimeout(() => cut(ticket.busy()), probeMs);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onGone);
    req.once('close', onGone);
    ticket.watchRate(stalled);
  });
}

/** Whether the request declares a body (a length above 0, or a transfer coding). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

function perSecond(bytes: number): string {
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB/s` : `${bytes} bytes/s`;
}

function declaredLength(req: IncomingMessage): number | undefined {
  const value = req.headers['content-length'];
  if (value === undefined) return undefined;
  const length = Number(value);
  return Number.isFinite(length) && length >= 0 ? length : undefined;
}

function tooLarge(limit: number): ProtocolError {
  return schemaInvalid(`Request body is larger than ${limit} bytes; send a smaller payload.`, 'size', 413);
}
