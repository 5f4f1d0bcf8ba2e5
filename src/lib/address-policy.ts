import type { LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

// Addresses a callback must never reach (SSRF: OWASP "Server Side Request Forgery"): loopback, private,
// link-local (cloud metadata at 169.254.169.254), carrier-grade NAT, multicast, reserved, and their IPv6 kin.
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
// IPv4-mapped IPv6 (::ffff:a.b.c.d) is not listed: BlockList treats it as the IPv4 address itself, so a
// ::ffff:0:0/96 rule would block every IPv4 address; mapped addresses are unwrapped and checked as IPv4.
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** True when `address` (an IP literal) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return isPublicAddress(mapped[1]);
  return !blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export class AddressRefusedError extends Error {
  readonly code = 'ENOTPUBLIC';
}

/**
 * A `lookup` for outbound connections that must not reach private networks (SSRF): it resolves the name,
 * refuses it when any address fails `isAllowed`, and hands the connection exactly the checked addresses,
 * so DNS rebinding between the check and the connect cannot slip through.
 */
export function guardedLookup(
  isAllowed: (address: string) => boolean,
  resolve: (hostname: string, family: number | undefined) => Promise<LookupAddress[]>,
  describe: (hostname: string, address: string) => string = (hostname, address) =>
    `${hostname} resolves to ${address}, which is not a public address`,
): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, typeof options.family === 'number' ? options.family : undefined).then(
      (addresses) => {
        const refused = addresses.find((entry) => !isAllowed(entry.address));
        if (refused) return callback(new AddressRefusedError(describe(hostname, refused.address)), '', 0);
        if (options.all)
          return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        const first = addresses[0];
        if (!first) return callback(new Error(`${hostname} has no address`), '', 0);
        return callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
