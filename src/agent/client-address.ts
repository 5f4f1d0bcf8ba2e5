import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { isLoopbackHost } from '../protocol/index.js';

/** The bucket of callers that reach the port from this machine with no forwarded address (see below). */
export const LOCAL_CLIENT = 'local';

/**
 * Who holds a connection, for the per-address caps (intake.ts) and budgets (peer-keys.ts). Behind a tunnel
 * every caller arrives from the tunnel client's loopback address: then the address the tunnel appended to
 * X-Forwarded-For (its last hop: a caller can prepend any values, not choose what the proxy adds) names the
 * caller. A loopback connection without one is a process on this machine (a local proxy that forwards no
 * address, a local gateway's own A2A channel): `local`. One IPv6 host usually holds a whole /64: the
 * prefix is counted, or one caller would be 2^64 callers. Used only to split caps, never to grant anything.
 */
export function clientAddress(req: IncomingMessage): string {
  return addressBucketOf(req.socket?.remoteAddress ?? 'unknown', proxyHop(req));
}

/** The same from a socket address and the proxy's hop (what the pipeline keeps of a request). */
export function addressBucketOf(socketAddress: string, forwardedFor: string | undefined): string {
  const socket = socketAddress.replace(/^::ffff:/, '');
  if (!isLoopbackHost(socket)) return addressBucket(socket);
  return forwardedFor ? `fwd:${addressBucket(forwardedFor)}` : LOCAL_CLIENT;
}

/** The last X-Forwarded-For hop: the one the nearest proxy (the tunnel) appended. */
export function proxyHop(req: IncomingMessage): string | undefined {
  return forwardedHop(req.headers);
}

/** `proxyHop` from a request's headers alone. */
export function forwardedHop(headers: IncomingHttpHeaders): string | undefined {
  const value = headers['x-forwarded-for'];
  const text = Array.isArray(value) ? value.join(', ') : value;
  return text ? text.split(',').at(-1)?.trim().slice(0, 64) || undefined : undefined;
}

function addressBucket(address: string): string {
  if (isIP(address) !== 6) return address;
  const groups = expandIpv6(address);
  return groups ? `${groups.slice(0, 4).join(':')}::/64` : address;
}

function expandIpv6(address: string): string[] | undefined {
  const [head = '', tail] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  if (right.some((group) => group.includes('.')) || left.some((group) => group.includes('.')))
    return undefined;
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? left.length !== 8 : missing < 0) return undefined;
  return [...left, ...Array<string>(Math.max(0, missing)).fill('0'), ...right].map((g) =>
    g.replace(/^0+(?=.)/, ''),
  );
}
