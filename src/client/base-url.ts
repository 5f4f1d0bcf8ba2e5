import { agentHost } from '../protocol/index.js';

export interface BaseUrlOptions {
  /** Allow plain http to loopback hosts (127.x, localhost, *.localhost, [::1]): local testing only. */
  devHttp?: boolean;
  /** Replaces the id -> URL mapping, e.g. to reach a public id through a loopback tunnel. */
  resolveBaseUrl?: (agentId: string) => string;
}

export function isLoopbackHost(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return (
    name === 'localhost' || name.endsWith('.localhost') || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name)
  );
}

/**
 * The base URL for an agent id (PROTOCOL.md §1: `agent://host` -> `https://host`). With devHttp a loopback
 * id maps to `http://`, and `*.localhost` connects to 127.0.0.1 because those names do not resolve
 * everywhere (Node's fetch cannot override the Host header, so the agent sees `127.0.0.1:port` as Host).
 * Whatever the mapping, the result must be https, or http to loopback with devHttp: never plain http
 * across the network.
 */
export function baseUrlFor(agentId: string, options: BaseUrlOptions = {}): string {
  const base = options.resolveBaseUrl ? options.resolveBaseUrl(agentId) : defaultBaseUrl(agentId, options);
  const url = new URL(base);
  if (url.protocol === 'https:') return base.replace(/\/+$/, '');
  if (url.protocol === 'http:' && options.devHttp && isLoopbackHost(url.hostname)) {
    return base.replace(/\/+$/, '');
  }
  throw new Error(
    `Refusing ${url.origin} for ${agentId}: agents are reached over https only ` +
      '(set devHttp to allow plain http to a loopback address while testing)',
  );
}

function defaultBaseUrl(agentId: string, options: BaseUrlOptions): string {
  const host = agentHost(agentId);
  if (!host) throw new Error(`"${agentId}" is not an agent id: expected agent://host or agent://host:port`);
  const hostname = host.replace(/:\d+$/, '');
  if (!options.devHttp || !isLoopbackHost(hostname)) return `https://${host}`;
  const port = host.slice(hostname.length);
  return `http://${hostname.endsWith('.localhost') ? '127.0.0.1' : hostname}${port}`;
}
