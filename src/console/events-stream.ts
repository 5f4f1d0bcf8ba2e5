import type { Context } from 'koa';
import { SseWriter } from '../agent/sse.js';
import type { AccessEvent, StateEvent, TrafficEntry } from '../protocol/console-api.js';
import { ConsoleError } from './errors.js';

export interface EventStreamOptions {
  /** A comment line this often keeps proxies and the browser from closing an idle stream; default 15 s. */
  keepAliveMs?: number;
  /** Open streams at most (each console tab holds one); default 16. */
  maxStreams?: number;
  /** A client that reads slower than events come is cut off past this much unsent data; default 1 MiB. */
  maxBufferedBytes?: number;
}

/**
 * GET /api/events: every TrafficEntry as `event: envelope`, every state change as `event: state` {kind},
 * each new sender asking for approval as `event: access`.
 * Streams are bounded in number and in buffered bytes, and forgotten when their client leaves.
 */
export class EventStreams {
  private readonly streams = new Set<SseWriter>();

  constructor(private readonly options: EventStreamOptions = {}) {}

  get open(): number {
    return this.streams.size;
  }

  /** Takes over the response; the first event says which entry was the newest when the stream opened. */
  attach(ctx: Context, hello: { lastId: number }): void {
    if (this.streams.size >= (this.options.maxStreams ?? 16)) {
      throw new ConsoleError(
        503,
        `Too many console event streams are open (${this.streams.size}).`,
        'Close console tabs or windows you no longer use, then reload.',
      );
    }
    ctx.respond = false;
    const sse = new SseWriter(ctx.res, {
      keepAliveMs: this.options.keepAliveMs ?? 15_000,
      maxBufferedBytes: this.options.maxBufferedBytes ?? 1024 * 1024,
    });
    this.streams.add(sse);
    ctx.res.once('close', () => this.streams.delete(sse));
    sse.send(hello, 'hello');
  }

  envelope(entry: TrafficEntry): void {
    this.broadcast('envelope', entry);
  }

  state(kind: StateEvent['kind']): void {
    this.broadcast('state', { kind } satisfies StateEvent);
  }

  /** A new sender asks (policy `pairing`): the console shows it at once. */
  access(event: AccessEvent): void {
    this.broadcast('access', event);
  }

  /** Ends every stream (the console is stopping); clients reconnect to the next launch by themselves. */
  close(): void {
    for (const sse of this.streams) sse.end();
    this.streams.clear();
  }

  private broadcast(event: string, data: unknown): void {
    if (this.streams.size === 0) return;
    const json = JSON.stringify(data);
    for (const sse of this.streams) {
      if (sse.closed) this.streams.delete(sse);
      else sse.sendJson(json, event);
    }
  }
}
