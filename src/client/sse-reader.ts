/**
 * Server-Sent Events parsing (WHATWG HTML §9.2.6): blocks end at a blank line, `data:` lines join with
 * `\n`, `event:` names the block, `:` lines are comments. Chunks may split lines, CRLF pairs and UTF-8
 * sequences anywhere.
 */

export interface SseBlock {
  /** The `event:` name; absent for unnamed blocks. */
  event?: string;
  data: string;
  /** The block's field lines (comments left out), joined with `\n`. */
  raw: string;
}

/** A block or an unfinished line bigger than this is refused: a stream must not buffer without bound. */
export const SSE_MAX_BLOCK_CHARS = 1024 * 1024;

export class SseParser {
  private pending = '';
  private lines: string[] = [];
  private size = 0;

  constructor(private readonly maxBlockChars = SSE_MAX_BLOCK_CHARS) {}

  /** Feeds decoded text; returns the blocks it completed. */
  push(text: string): SseBlock[] {
    this.pending += text;
    const blocks: SseBlock[] = [];
    const newline = /\r\n?|\n/g;
    let start = 0;
    for (let match = newline.exec(this.pending); match; match = newline.exec(this.pending)) {
      // A trailing \r may be the first half of \r\n: wait for the next chunk to decide.
      if (match[0] === '\r' && match.index === this.pending.length - 1) break;
      const block = this.line(this.pending.slice(start, match.index));
      if (block) blocks.push(block);
      start = newline.lastIndex;
    }
    this.pending = this.pending.slice(start);
    this.checkSize(this.pending.length);
    return blocks;
  }

  /** End of stream: a last block that lacks only its blank line still counts; a cut-off line does not. */
  end(): SseBlock[] {
    const pending = this.pending;
    this.pending = '';
    const blocks: SseBlock[] = [];
    if (pending !== '' && !pending.endsWith('\r')) {
      this.lines = [];
      return blocks;
    }
    const held = pending === '' ? null : this.line(pending.slice(0, -1));
    const last = this.dispatch();
    for (const block of [held, last]) if (block) blocks.push(block);
    return blocks;
  }

  private line(line: string): SseBlock | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return null;
    this.lines.push(line);
    this.size += line.length;
    this.checkSize(0);
    return null;
  }

  private checkSize(extra: number): void {
    if (this.size + extra > this.maxBlockChars) {
      throw new Error(
        `An event stream block exceeds ${this.maxBlockChars} characters: refusing to buffer it`,
      );
    }
  }

  private dispatch(): SseBlock | null {
    const lines = this.lines;
    this.lines = [];
    this.size = 0;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of lines) {
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
      // `id` and `retry` are for reconnecting EventSource clients; a signed call is never replayed.
    }
    // Per the standard, a block without data is not an event.
    if (data.length === 0) return null;
    const block: SseBlock = { data: data.join('\n'), raw: lines.join('\n') };
    if (event !== undefined && event !== '') block.event = event;
    return block;
  }
}

/** Reads an event-stream body block by block; stopping early cancels the body (the connection closes). */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseBlock> {
  const reader = body.getReader();
  const decoder = new TextDecoder('utf-8');
  const parser = new SseParser();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
    finished = true;
    yield* parser.push(decoder.decode());
    yield* parser.end();
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
