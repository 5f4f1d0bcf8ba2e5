import type { IncomingMessage } from 'node:http';
import { schemaInvalid } from '../protocol/index.js';

/** Reads the exact request bytes (the digest and signatures cover them), refusing bodies over `limit`. */
export async function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      // Stop reading; the connection is closed after the 413 so the rest is not buffered.
      req.unpipe();
      req.resume();
      throw tooLarge(limit);
    }
    chunks.push(chunk as Buffer);
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

function tooLarge(limit: number) {
  return schemaInvalid(`Request body is larger than ${limit} bytes; send a smaller payload.`, 'size', 413);
}
