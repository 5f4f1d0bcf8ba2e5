import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, fetch as undiciFetch, type RequestInit, type Response } from 'undici';

/**
 * RFC 6761 reserves `localhost` and every `*.localhost` name for loopback, and browsers resolve them so, but
 * this machine's resolver does not. The app's own HTTP client maps them itself (a tunnel's public URL can be
 * `http://<id>.localhost:PORT` in local testing); every other name goes to the system resolver.
 */
export const lookupWithLocalhost: LookupFunction = (hostname, options, callback) => {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) {
    const loopback: LookupAddress = { address: '127.0.0.1', family: 4 };
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [loopback]);
    return callback(null, loopback.address, loopback.family);
  }
  dnsLookup(
    hostname,
    options,
    callback as (
      error: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void,
  );
};

const dispatcher = new Agent({ connect: { lookup: lookupWithLocalhost }, keepAliveTimeout: 10_000 });

export type { RequestInit, Response };

/** fetch with the app's name resolution (above) and a shared keep-alive pool. */
export function appFetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
  return undiciFetch(url, { dispatcher, ...init });
}

export class BodyTooLargeError extends Error {}

/** Reads a body up to `maxBytes`; a larger one is cancelled rather than buffered (memory exhaustion). */
export async function readCapped(
  response: { headers: { get(name: string): string | null }; body: ReadableStream<Uint8Array> | null },
  maxBytes: number,
): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new BodyTooLargeError(`the reply declares ${declared} bytes, more than the ${maxBytes} allowed`);
  }
  const reader = response.body?.getReader();
  if (!reader) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLargeError(`the reply is larger than the ${maxBytes} bytes allowed`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
