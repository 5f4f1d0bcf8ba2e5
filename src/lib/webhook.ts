import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isLoopbackHost } from '../protocol/index.js';
import { AddressRefusedError, guardedLookup, isPublicAddress } from './address-policy.js';
import { isAllowedPeerAddress } from './public-dispatcher.js';
import { escapedLine } from './text.js';

/** One delivery attempt's outcome, for the operator's log (never a header: they may hold the caller's secrets). */
export interface WebhookEvent {
  time: string;
  taskId: string;
  url: string;
  attempt: number;
  outcome: 'delivered' | 'retrying' | 'gave-up' | 'refused';
  status?: number;
  message?: string;
}

export interface WebhookOptions {
  /** What the URL is called in refusals (`callbackUrl`, `the URL`). */
  name: string;
  onEvent?: (event: WebhookEvent) => void;
  /** Waits before each retry; the number of entries is the number of retries. */
  backoffMs?: number[];
  timeoutMs?: number;
  /**
   * The address rule and plain http. Production keeps the defaults (public addresses over https only);
   * `'loopback'` lets plain http reach loopback hosts only (`--dev-http-peers`), `true` any (test seam).
   */
  isAllowedAddress?: (address: string) => boolean;
  allowHttp?: boolean | 'loopback';
  /** Name resolution (tests stand in for DNS, which this machine cannot reach). */
  resolveHost?: (hostname: string, family: number | undefined) => Promise<LookupAddress[]>;
}

/** One POST: its body, and its headers for the URL (a signature covers the path; may hold secrets). */
export interface WebhookRequest {
  taskId: string;
  url: string;
  body: Buffer;
  contentType: string;
  headers(url: URL): Record<string, string>;
}

export type WebhookOutcome = { outcome: 'delivered' | 'failed' | 'interrupted'; attempts: number };

export class WebhookUrlError extends Error {}

const systemResolve = (hostname: string, family: number | undefined) =>
  new Promise<LookupAddress[]>((resolve, reject) =>
    dnsLookup(hostname, { all: true, family: family ?? 0 }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );

/** The address rule `--dev-http-peers` sets: public https, and loopback (also over http) when on. */
export function webhookRules(devHttpPeers: boolean): Pick<WebhookOptions, 'isAllowedAddress' | 'allowHttp'> {
  return {
    isAllowedAddress: (address) => isAllowedPeerAddress(address, devHttpPeers),
    allowHttp: devHttpPeers ? 'loopback' : false,
  };
}

/**
 * Delivery of a POST to an address a caller chose (SAMVAD callbacks, A2A push notifications): public
 * addresses only, checked again on every resolved address and connected to exactly those (SSRF, DNS
 * rebinding), https only, retried with backoff on a network error, a 5xx, 408 or 429, each attempt reported.
 */
export class WebhookSender {
  private readonly options: Required<Omit<WebhookOptions, 'onEvent'>> & Pick<WebhookOptions, 'onEvent'>;
  private readonly sleeping = new Map<NodeJS.Timeout, () => void>();
  private closed = false;

  constructor(options: WebhookOptions) {
    this.options = {
      ...options,
      backoffMs: options.backoffMs ?? [1000, 5000, 30_000, 120_000, 600_000],
      timeoutMs: options.timeoutMs ?? 10_000,
      isAllowedAddress: options.isAllowedAddress ?? isPublicAddress,
      allowHttp: options.allowHttp ?? false,
      resolveHost: options.resolveHost ?? systemResolve,
    };
  }

  /** The checks that need no DNS, made when the URL is given so the caller hears at once. */
  check(rawUrl: string): URL {
    const { name, allowHttp, isAllowedAddress } = this.options;
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      throw new WebhookUrlError(`${name} is not a valid URL.`);
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const plainHttpAllowed = allowHttp === true || (allowHttp === 'loopback' && isLoopbackHost(host));
    if (url.protocol !== 'https:' && !(plainHttpAllowed && url.protocol === 'http:')) {
      throw new WebhookUrlError(`${name} must be an https:// URL.`);
    }
    if (url.username || url.password) throw new WebhookUrlError(`${name} must not carry credentials.`);
    if (isIP(host) && !isAllowedAddress(host)) {
      throw new WebhookUrlError(
        `${name} must point to a public address, not a loopback, private or link-local one.`,
      );
    }
    if ((host === 'localhost' || host.endsWith('.localhost')) && !isAllowedAddress('127.0.0.1')) {
      throw new WebhookUrlError(`${name} must not point to localhost.`);
    }
    return url;
  }

  /**
   * Delivers with retries and backoff; resolves with the outcome and the attempts made, never rejects.
   * `interrupted` means the agent stopped while a retry was due: the delivery is still owed.
   */
  async deliver(request: WebhookRequest, firstAttempt = 1): Promise<WebhookOutcome> {
    const { taskId, url: rawUrl } = request;
    const retries = this.options.backoffMs;
    let attempt = firstAttempt;
    const result = (outcome: WebhookOutcome['outcome'], made = attempt) => ({ outcome, attempts: made });
    for (; attempt <= retries.length + 1; attempt++) {
      if (this.closed) return result('interrupted', attempt - 1);
      let outcome: { ok: boolean; retry: boolean; status?: number; message: string };
      try {
        const url = this.check(rawUrl);
        const status = await this.post(url, request);
        const ok = status >= 200 && status < 300;
        // 4xx other than 408/429 will not get better by retrying.
        const retry = !ok && (status >= 500 || status === 408 || status === 429);
        outcome = { ok, retry, status, message: `HTTP ${status}` };
      } catch (error) {
        const refused = error instanceof WebhookUrlError || error instanceof AddressRefusedError;
        // A network error's text can quote the peer (a TLS message names its certificate): one escaped line.
        outcome = { ok: false, retry: !refused, message: escapedLine((error as Error).message, 300) };
        if (refused) {
          this.emit({ taskId, url: rawUrl, attempt, outcome: 'refused', message: outcome.message });
          return result('failed');
        }
      }
      const { status, message } = outcome;
      if (outcome.ok) {
        this.emit({ taskId, url: rawUrl, attempt, outcome: 'delivered', status, message });
        return result('delivered');
      }
      const wait = retries[attempt - 1];
      if (outcome.retry && wait !== undefined && this.closed) return result('interrupted');
      if (!outcome.retry || wait === undefined) {
        this.emit({ taskId, url: rawUrl, attempt, outcome: 'gave-up', status, message });
        return result('failed');
      }
      this.emit({ taskId, url: rawUrl, attempt, outcome: 'retrying', status, message });
      await this.sleep(wait);
    }
    return result('failed', attempt - 1);
  }

  close(): void {
    this.closed = true;
    // Wake every waiting delivery so it sees `closed` and ends instead of hanging.
    for (const [timer, wake] of this.sleeping) {
      clearTimeout(timer);
      wake();
    }
    this.sleeping.clear();
  }

  private post(url: URL, request: WebhookRequest): Promise<number> {
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const outgoing = client.request(
        url,
        {
          method: 'POST',
          lookup: this.checkedLookup(),
          timeout: this.options.timeoutMs,
          headers: {
            ...request.headers(url),
            'Content-Type': request.contentType,
            'Content-Length': request.body.length,
          },
        },
        (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
          response.on('error', reject);
        },
      );
      outgoing.on('timeout', () =>
        outgoing.destroy(new Error(`no answer within ${this.options.timeoutMs} ms`)),
      );
      outgoing.on('error', reject);
      outgoing.end(request.body);
    });
  }

  // Every resolved address is checked, and the connection uses exactly those (lib/address-policy.ts).
  private checkedLookup(): LookupFunction {
    return guardedLookup(
      this.options.isAllowedAddress,
      this.options.resolveHost,
      (hostname, address) =>
        `${this.options.name} host ${hostname} resolves to ${address}, which is not a public address.`,
    );
  }

  private emit(event: Omit<WebhookEvent, 'time'>): void {
    this.options.onEvent?.({ time: new Date().toISOString(), ...event });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.sleeping.delete(timer);
        resolve();
      }, ms);
      timer.unref();
      this.sleeping.set(timer, resolve);
    });
  }
}
