import { agentBaseUrl, isLoopbackHost } from '../protocol/index.js';
import { ClientError } from './errors.js';

export interface BaseUrlOptions {
  /** Allow plain http to loopback hosts (127.x, localhost, *.localhost, [::1]): local testing only. */
  devHttp?: boolean;
  /** Replaces the id -> URL mapping, e.g. to reach a public id through a loopback tunnel. */
  resolveBaseUrl?: (agentId: string) => string;
}

/**
 * The base URL for an agent id (PROTOCOL.md §1: `agent://host` -> `https://host`). With devHttp a loopback
 * id maps to `http://` (the app's fetch resolves `*.localhost` to loopback itself, as browsers do).
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
  throw new ClientError(
    `Refusing ${url.origin} for ${agentId}: agents are reached over https only ` +
      '(set devHttp to allow plain http to a loopback address while testing)',
  );
}

function defaultBaseUrl(agentId: string, options: BaseUrlOptions): string {
  const base = agentBaseUrl(agentId, options.devHttp);
  if (!base)
    throw new ClientError(
      `"${agentId}" is not an agent id: expected agent://host or agent://host:port (a port from 1 to 65535)`,
    );
  return base;
}
