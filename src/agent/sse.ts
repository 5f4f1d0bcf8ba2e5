import type { ServerResponse } from 'node:http';

export interface SseOptions {
  keepAliveMs?: number;
  /** A caller that reads slower than we write is cut off past this much unsent data. */
  maxBufferedBytes?: number;
}

/**
 * The one place that writes Server-Sent Events: headers, framing, keep-alive comments, and clean-up when
 * the caller leaves (the timer is cleared and `closed` turns true, so no listener or timer outlives it).
 */
export class SseWriter {
  private timer: NodeJS.Timeout;
  private ended = false;
  bytesOut = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly options: SseOptions = {},
  ) {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    this.timer = setInterval(() => this.write(': keep-alive\n\n'), options.keepAliveMs ?? 15_000);
    this.timer.unref();
    res.once('close', () => this.stop());
  }

  get closed(): boolean {
    return this.ended || this.res.destroyed || this.res.writableEnded;
  }

  /** One event; `data` is written as a single line of JSON so the SDK's reader can parse it. */
  send(data: unknown, event?: string): void {
    this.sendJson(JSON.stringify(data), event);
  }

  /** The same with the JSON already made: one serialisation serves many streams. */
  sendJson(json: string, event?: string): void {
    const head = event ? `event: ${event}\n` : '';
    this.write(`${head}data: ${json}\n\n`);
  }

  end(): void {
    if (this.closed) return;
    this.stop();
    this.res.end();
  }

  private write(text: string): void {
    if (this.closed) return;
    if (this.res.writableLength > (this.options.maxBufferedBytes ?? 1024 * 1024)) {
      this.stop();
      this.res.destroy();
      return;
    }
    this.bytesOut += Buffer.byteLength(text);
    this.res.write(text);
    // Reset the keep-alive clock: a comment is only needed while nothing else flows.
    this.timer.refresh();
  }

  private stop(): void {
    this.ended = true;
    clearInterval(this.timer);
  }
}
