import type { TunnelInfo, TunnelServerReply } from 'localtunnel/lib/Tunnel.js';
import { BodyTooLargeError, appFetch, readCapped, type Response } from '../lib/http.js';
import { escapedLine } from '../lib/text.js';
import { isOfflineCode, unreachableHint } from './hints.js';
import {
  TunnelConfigError,
  TunnelUnreachableError,
  withTimeout,
  type TunnelConnection,
  type TunnelProvider,
} from './provider.js';

/** The server's answer is a small JSON object ({id, port, max_conn_count, url}); more is not read. */
export const ADDRESS_REPLY_MAX_BYTES = 64 * 1024;

export interface LocaltunnelOptions {
  /** The localtunnel server, e.g. https://localtunnel.me. */
  host: string;
  /** Each step (asking for an address, connecting) gets this long. */
  stepTimeoutMs?: number;
}

/**
 * The real `localtunnel` client, guarded. Its own address request retries forever (even on a refused
 * subdomain) and has no timeout, so that one step is done here, once, with a timeout; the client's tunnel
 * sockets, reconnects and request piping are used as they are. Its `error` events (which would crash the
 * process unhandled) become the connection's `broken` reason.
 */
export class LocaltunnelProvider implements TunnelProvider {
  readonly name = 'localtunnel';
  readonly asksForName = true;
  private readonly host: string;
  private readonly stepTimeoutMs: number;

  constructor(options: LocaltunnelOptions) {
    let host: URL;
    try {
      host = new URL(options.host);
    } catch {
      throw new TunnelConfigError(
        `Tunnel host "${options.host}" is not a URL; use e.g. https://localtunnel.me.`,
      );
    }
    if (host.protocol !== 'https:' && host.protocol !== 'http:') {
      throw new TunnelConfigError(`Tunnel host must be an http(s) URL, not ${host.protocol}`);
    }
    this.host = options.host.replace(/\/+$/, '');
    this.stepTimeoutMs = options.stepTimeoutMs ?? 10_000;
  }

  async open(port: number, options: { subdomain?: string; signal: AbortSignal }): Promise<TunnelConnection> {
    const reply = await this.requestAddress(options.subdomain, options.signal);
    // Loaded with the first tunnel: an agent without one never holds the client's code (axios and all).
    const { default: Tunnel } = await import('localtunnel/lib/Tunnel.js');
    const tunnel = new Tunnel({ port, host: this.host, subdomain: options.subdomain });
    tunnel._init = (callback) => callback(null, tunnel._getInfo(reply));
    let reportBroken: (error: Error) => void = () => undefined;
    const broken = new Promise<Error>((resolve) => (reportBroken = resolve));
    tunnel.on('error', (error: Error) =>
      reportBroken(new Error(`tunnel connection failed: ${error.message}`)),
    );

    const url = await withTimeout(
      new Promise<string>((resolve, reject) => {
        tunnel.once('url', resolve);
        tunnel.once('error', reject);
        tunnel.open((error) => error && reject(error));
      }),
      this.stepTimeoutMs,
      `connecting to the tunnel server at ${reply.ip ?? new URL(this.host).hostname}:${reply.port}`,
      options.signal,
    ).catch((error: unknown) => {
      tunnel.close();
      throw error;
    });
    return { url, broken, close: () => tunnel.close() };
  }

  /** `GET {host}/{subdomain}` (or `/?new`): the server's answer names the URL and the port to connect to. */
  private async requestAddress(
    subdomain: string | undefined,
    signal: AbortSignal,
  ): Promise<TunnelServerReply> {
    const endpoint = `${this.host}/${subdomain ?? '?new'}`;
    const timeout = AbortSignal.any([signal, AbortSignal.timeout(this.stepTimeoutMs)]);
    let response;
    try {
      response = await appFetch(endpoint, { signal: timeout, redirect: 'error' });
    } catch (error) {
      if (signal.aborted) throw new Error('cancelled');
      if (timeout.aborted)
        throw new Error(`tunnel server ${this.host} did not answer within ${this.stepTimeoutMs / 1000} s`);
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const code = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new TunnelUnreachableError(
        `tunnel server ${this.host} is unreachable (${code})`,
        isOfflineCode(code),
        unreachableHint(this.host, code),
      );
    }
    const text = await this.readAddressReply(response, signal, timeout);
    let body: Partial<Record<keyof TunnelServerReply | 'message', unknown>> = {};
    try {
      body = (JSON.parse(text) as typeof body | null) ?? {};
    } catch {
      // Reported below with the status.
    }
    if (!response.ok) {
      // The server's own words, quoted: one line, capped and escaped.
      const detail = escapedLine(typeof body.message === 'string' ? body.message : text, 200);
      const hint =
        subdomain && response.status < 500 ? `; subdomain "${subdomain}" may be taken or not allowed` : '';
      throw new Error(`tunnel server refused (HTTP ${response.status}: ${detail})${hint}`);
    }
    const reply = tunnelReply(body);
    if (!reply)
      throw new Error(`tunnel server ${this.host} answered something that is not a localtunnel reply`);
    return reply;
  }

  /** The address request's answer, at most ADDRESS_REPLY_MAX_BYTES (a server streaming without end). */
  private async readAddressReply(
    response: Response,
    signal: AbortSignal,
    timeout: AbortSignal,
  ): Promise<string> {
    try {
      return Buffer.from(await readCapped(response, ADDRESS_REPLY_MAX_BYTES)).toString('utf8');
    } catch (error) {
      if (signal.aborted) throw new Error('cancelled');
      if (error instanceof BodyTooLargeError) {
        throw new Error(
          `tunnel server ${this.host} sent more than ${ADDRESS_REPLY_MAX_BYTES / 1024} KiB in answer to the address request, which is not a localtunnel reply: reading stopped there; check the tunnel host setting (e.g. https://localtunnel.me)`,
        );
      }
      if (timeout.aborted)
        throw new Error(
          `tunnel server ${this.host} did not finish its answer within ${this.stepTimeoutMs / 1000} s`,
        );
      throw new Error(`tunnel server ${this.host} broke off its answer (${(error as Error).message})`);
    }
  }
}

/**
 * The server's answer, its url cut to its origin (it becomes this agent's public address, shown to the
 * operator and put in the card: a path, a newline or a terminal escape the server slipped in stays out).
 */
function tunnelReply(body: Partial<Record<keyof TunnelServerReply, unknown>>): TunnelServerReply | undefined {
  const { id, url, port } = body;
  if (typeof url !== 'string' || typeof port !== 'number' || typeof id !== 'string') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined;
  return { ...(body as TunnelServerReply), url: parsed.origin };
}

export type { TunnelInfo };
