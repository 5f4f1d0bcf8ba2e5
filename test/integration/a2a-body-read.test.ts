import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readJsonBody } from '../../src/a2a/http-io.js';
import { ProtocolError } from '../../src/protocol/index.js';

// readJsonBody on a real loopback server and raw sockets: what it resolves or throws for each way a body
// can arrive (test/unit/a2a-http-io.test.ts covers the same rules on hand-made streams).
interface Outcome {
  value?: unknown;
  error?: unknown;
  bytes: number;
}

describe('reading an A2A request body from a socket', () => {
  let server: http.Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  /**
   * A server that reads each body with `limit` (after `waitMs`, as the front door reads it only once the
   * caller's key is checked). `outcome` settles with what the read gave; `reading` once its first bytes came.
   */
  async function reader(limit: number, waitMs = 0) {
    let settle!: (outcome: Outcome) => void;
    let firstBytes!: () => void;
    const outcome = new Promise<Outcome>((resolve) => (settle = resolve));
    const reading = new Promise<void>((resolve) => (firstBytes = resolve));
    server = http.createServer((req, res) => {
      let bytes = 0;
      const counted = (n: number) => {
        bytes += n;
        firstBytes();
      };
      const read = async () => {
        if (waitMs) await new Promise((resolve) => setTimeout(resolve, waitMs));
        return readJsonBody(req, limit, counted);
      };
      read().then(
        (value) => {
          settle({ value, bytes });
          res.end('ok');
        },
        (error: unknown) => {
          settle({ error, bytes });
          res.statusCode = error instanceof ProtocolError ? error.httpStatus : 500;
          res.end();
        },
      );
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return { port: (server.address() as AddressInfo).port, outcome, reading };
  }

  /**
   * Sends raw HTTP/1.1 bytes; resolves with the status line ('' when none came). `leave`: destroy the
   * socket once this settles (without it, the socket stays until the server closes it).
   */
  function raw(port: number, head: string, chunks: string[], leave?: Promise<unknown>): Promise<string> {
    return new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write(head);
        for (const chunk of chunks) socket.write(chunk);
        void leave?.then(() => socket.destroy());
      });
      let reply = '';
      socket.on('data', (data) => (reply += data.toString('latin1')));
      socket.on('close', () => resolve(reply.split('\r\n')[0] ?? ''));
      socket.on('error', () => undefined);
    });
  }

  const chunked = (text: string) => `${text.length.toString(16)}\r\n${text}\r\n`;
  const head = (extra: string) => `POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${extra}\r\n`;

  it('parses a chunked body whole and counts its bytes as they arrive', async () => {
    const { port, outcome } = await reader(1024);
    await raw(port, head('Transfer-Encoding: chunked\r\n'), [
      chunked('{"a":'),
      chunked('[1,2]}'),
      '0\r\n\r\n',
    ]);
    expect(await outcome).toEqual({ value: { a: [1, 2] }, bytes: 11 });
  });

  it('is an empty object for an empty body', async () => {
    const { port, outcome } = await reader(1024);
    await raw(port, head('Content-Length: 0\r\n'), []);
    expect((await outcome).value).toEqual({});
  });

  it('refuses a chunked body as soon as it passes the limit, and still answers 413', async () => {
    const { port, outcome } = await reader(100);
    // The body never ends: the 413 must come anyway, on a connection the agent did not cut.
    const status = raw(port, head('Transfer-Encoding: chunked\r\n'), [
      chunked('x'.repeat(80)),
      chunked('y'.repeat(80)),
    ]);
    const { error, bytes } = await outcome;
    expect(error).toMatchObject({ httpStatus: 413 });
    expect((error as Error).message).toMatch(/larger than 100 bytes/);
    // Read up to the chunk that passed the limit (TCP may split the chunks otherwise than they were sent).
    expect(bytes).toBeGreaterThan(100);
    expect(bytes).toBeLessThanOrEqual(160);
    expect(await status).toMatch(/ 413 /);
  });

  it('is a 408 that says to send again when the caller leaves mid-body', async () => {
    const { port, outcome, reading } = await reader(1024);
    void raw(port, head('Content-Length: 500\r\n'), ['{"half":'], reading);
    const { error } = await outcome;
    expect(error).toMatchObject({ httpStatus: 408 });
    expect((error as Error).message).toMatch(/did not arrive whole; send it again/);
  });

  it('is a 408 too when the caller left before the body was read (while its key was checked)', async () => {
    const { port, outcome } = await reader(1024, 150);
    const left = new Promise((resolve) => setTimeout(resolve, 20));
    void raw(port, head('Content-Length: 500\r\n'), ['{"half":'], left);
    const { error } = await outcome;
    expect(error).toMatchObject({ httpStatus: 408 });
  });

  it('names the fix for a body that is not JSON, without quoting it', async () => {
    const { port, outcome } = await reader(1024);
    await raw(port, head('Content-Length: 14\r\n'), ['{"key":"s3cret']);
    const { error } = await outcome;
    expect(error).toMatchObject({ httpStatus: 400 });
    expect((error as Error).message).toMatch(/not valid JSON/);
    expect((error as Error).message).not.toMatch(/s3cret/);
  });
});
