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
