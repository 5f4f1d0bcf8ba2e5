/**
 * Whether an address can be reached from the internet at all. The renderer imports no code from the core
 * (renderer/README.md), so this mirrors the core's loopback rule (RFC 6761 `localhost` names, 127/8, ::1).
 */

export function isLoopbackHost(host: string): boolean {
  let name = host.toLowerCase();
  const close = name.indexOf(']');
  // `[v6]:port`, `[v6]`, `name:port`; a bare IPv6 address (`::1`) has no port to strip.
  if (name.startsWith('[')) name = name.slice(1, close > 0 ? close : undefined);
  else if (name.split(':').length === 2) name = name.replace(/:\d+$/, '');
  return (
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    name === '::1' ||
    /^127(\.\d{1,3}){3}$/.test(name) ||
    // The unspecified address is where a server listens, never where anyone reaches it.
    name === '0.0.0.0' ||
    name === '::'
  );
}

/** An `https://` URL whose host is not loopback: an address other agents can call. */
export function isPublicHttpsUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return parsed.protocol === 'https:' && parsed.hostname !== '' && !isLoopbackHost(parsed.hostname);
}
