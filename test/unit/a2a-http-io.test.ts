import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ContentTypeNotSupportedError } from '@a2a-js/sdk/errors';
import { readJsonBody } from '../../src/a2a/http-io.js';
import { ProtocolError } from '../../src/protocol/index.js';

/**
 * A request body as node hands it over: a readable with headers. `open`: the caller is still sending (the
 * body does not end).
 */
function request(
  chunks: (string | Error)[],
  headers: Record<string, string> = {},
  open = false,
): IncomingMessage {
  const body = new Readable({ read() {} });
  for (const chunk of chunks) {
    if (chunk instanceof Error) queueMicrotask(() => body.destroy(chunk));
    else body.push(chunk);
  }
  if (!open && !chunks.some((chunk) => chunk instanceof Error)) body.push(null);
  return Object.assign(body, {
    headers: { 'content-type': 'application/json', ...headers },
  }) as unknown as IncomingMessage;
}

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('reading an A2A request body', () => {
  it('parses JSON of any JSON media type; an empty body is {}', async () => {
    expect(await readJsonBody(request(['{"a":', '1}']), 100)).toEqual({ a: 1 });
    expect(await readJsonBody(request(['{}'], { 'content-type': 'application/a2a+json' }), 100)).toEqual({});
    expect(await readJsonBody(request([]), 100)).toEqual({});
  });

  it('refuses a declared length past the limit before reading, and a chunked one once it passes it', async () => {
    expect(await refusal(readJsonBody(request(['{}'], { 'content-length': '101' }), 100))).toMatchObject({
      httpStatus: 413,
    });
    const chunked = request(['{"a":"', 'x'.repeat(60), 'x'.repeat(60)], {}, true);
    expect(await refusal(readJsonBody(chunked, 100))).toMatchObject({ httpStatus: 413 });
    // Not destroyed: the 413 can still be written to the caller.
    expect(chunked.destroyed).toBe(false);
  });

  it('answers a body that is not JSON without quoting it, and another media type with ContentTypeNotSupported', async () => {
    const broken = await refusal(readJsonBody(request(['{"token": "s3cret"']), 100));
    expect(broken).toBeInstanceOf(ProtocolError);
    expect(broken).toMatchObject({ httpStatus: 400 });
    expect((broken as Error).message).not.toMatch(/s3cret/);
    const xml = await refusal(readJsonBody(request(['<a/>'], { 'content-type': 'text/xml' }), 100));
    expect(xml).toBeInstanceOf(ContentTypeNotSupportedError);
  });

  it('takes a caller that left mid-body as the caller’s doing (408), not as the agent’s failure', async () => {
    const aborted = await refusal(readJsonBody(request(['{"jsonrpc"', new Error('aborted')]), 100));
    expect(aborted).toBeInstanceOf(ProtocolError);
    expect(aborted).toMatchObject({ httpStatus: 408, code: 'SCHEMA_INVALID' });
  });
});
