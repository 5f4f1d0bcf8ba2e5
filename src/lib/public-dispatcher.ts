import type { LookupAddress } from 'node:dns';
import { Agent } from 'undici';
import { isLoopbackHost } from '../protocol/index.js';
import { guardedLookup, isPublicAddress } from './address-policy.js';
import { lookupWithLocalhost } from './http.js';

/** Public addresses only; loopback too when `allowLoopback` (local testing with --dev-http-peers). */
export function isAllowedPeerAddress(address: string, allowLoopback: boolean): boolean {
  return isPublicAddress(address) || (allowLoopback && isLoopbackHost(address));
}

const resolveWithLocalhost = (hostname: string, family: number | undefined) =>
  new Promise<LookupAddress[]>((resolve, reject) =>
    lookupWithLocalhost(hostname, { all: true, family: family ?? 0 }, (error, found) =>
      error ? reject(error) : resolve(found as unknown as LookupAddress[]),
    ),
  );

const pools = new Map<boolean, Agent>();

/**
 * A connection pool whose name resolution refuses private, link-local and (unless allowed) loopback
 * addresses, and connects to exactly the addresses it checked: requests another program asks for (the
 * operator's agent through MCP) cannot reach the operator's own network (SSRF), not even by DNS rebinding.
 */
export function publicOnlyDispatcher(allowLoopback: boolean): Agent {
  let pool = pools.get(allowLoopback);
  if (!pool) {
    const lookup = guardedLookup(
      (address) => isAllowedPeerAddress(address, allowLoopback),
      resolveWithLocalhost,
    );
    pool = new Agent({ connect: { lookup }, keepAliveTimeout: 10_000 });
    pools.set(allowLoopback, pool);
  }
  return pool;
}
