import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { signRequest, type Signer } from '../protocol/index.js';
import { AddressRefusedError, guardedLookup, isPublicAddress } from '../lib/address-policy.js';
import type { CallbackEvent } from './events.js';

export interface CallbackOptions {
  signer: () => Signer;
  onEvent?: (event: CallbackEvent) => void;
  /** Waits before each retry; the number of entries is the number of retries. */
  backoffMs?: number[];
  timeoutMs?: number;
  /**
   * Test seams: the address rule and plain http. Production keeps the defaults (public addresses over
   * https only); tests that have no public host to call loosen them and say so.
   */
  isAllowedAddress?: (address: string) => boolean;
  allowHttp?: boolean;
  /** Name resolution (tests stand in for DNS, which this machine cannot reach). */
  resolveHost?: (hostname: string, family: number | undefined) => Promise<LookupAddress[]>;
}

const systemResolve = (hostname: string, family: number | undefined) =>
  new Promise<LookupAddress[]>((resolve, reject) =>
    dnsLookup(hostname, { all: true, family: family ?? 0 }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );

export class CallbackUrlError extends Error {}

/** Signed delivery of finished tasks to the caller's callbackUrl (PROTOCOL.md §6). */
export class CallbackSender {
  private readonly options: Required<Omit<CallbackOptions, 'onEvent'>> & Pick<CallbackOptions, 'onEvent'>;
  private readonly sleeping = new Map<NodeJS.Timeout, () => void>();
  private closed = false;

  constructor(options: CallbackOptions) {
    this.options = {
      backoffMs: [1000, 5000, 30_000, 120_000, 600_000],
      timeoutMs: 10_000,
      isAllowedAddress: isPublicAddress,
      allowHttp: false,
      resolveHost: systemResolve,
      ...options,
    };
  }

  /** The checks that need no DNS, made when the task is submitted so the caller hears at once. */
  check(rawUrl: string): URL {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      throw new CallbackUrlError('callbackUrl is not a valid URL.');
    }
    if (url.protocol !== 'https:' && !(this.options.allowHttp && url.protocol === 'http:')) {
      throw new CallbackUrlError('callbackUrl must be an https:// URL.');
    }
    if (url.username || url.password) throw new CallbackUrlError('callbackUrl must not carry credentials.');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !this.options.isAllowedAddress(host)) {
      throw new CallbackUrlError(
        'callbackUrl must point to a public address, not a loopback, private or link-local one.',
      );
    }
    if (host === 'localhost' || host.endsWith('.localhost')) {
      if (!this.options.isAllowedAddress('127.0.0.1'))
        throw new CallbackUrlError('callbackUrl must not point to localhost.');
    }
    return url;
  }

  /**
   * Delivers `body` with retries and backoff; resolves with the outcome and the attempts made, never
   * rejects. `interrupted` means the agent stopped while a retry was due: the delivery is still owed.
   */
  async deliver(
    taskId: string,
    rawUrl: string,
    body: unknown,
    firstAttempt = 1,
  ): Promise<{ outcome: 'delivered' | 'failed' | 'interrupted'; attempts: number }> {
    const payload = Buffer.from(JSON.stringify(body));
    const retries = this.options.backoffMs;
    let attempt = firstAttempt;
    const result = (outcome: 'delivered' | 'failed' | 'interrupted', made = attempt) => ({
      outcome,
      attempts: made,
    });
    for (; attempt <= retries.length + 1; attempt++) {
      if (this.closed) return result('interrupted', attempt - 1);
      let outcome: { ok: boolean; retry: boolean; status?: number; message: string };
      try {
        const url = this.check(rawUrl);
        const status = await this.post(url, payload);
        const ok = status >= 200 && status < 300;
        // 4xx other than 408/429 will not get better by retrying.
        const retry = !ok && (status >= 500 || status === 408 || status === 429);
        outcome = { ok, retry, status, message: `HTTP ${status}` };
      } catch (error) {
        const refused = error instanceof CallbackUrlError || error instanceof AddressRefusedError;
        outcome = { ok: false, retry: !refused, message: (error as Error).message };
        if (refused) {
          this.emit({ taskId, url: rawUrl, attempt, outcome: 'refused', message: outcome.message });
          return result('failed');
        }
      }
      if (outcome.ok) {
        this.emit({
          taskId,
          url: rawUrl,
          attempt,
          outcome: 'delivered',
          status: outcome.status,
          message: outcome.message,
        });
        return result('delivered');
      }
      const wait = retries[attempt - 1];
      if (outcome.retry && wait !== undefined && this.closed) return result('interrupted');
      if (!outcome.retry || wait === undefined) {
        this.emit({
          taskId,
          url: rawUrl,
          attempt,
          outcome: 'gave-up',
          status: outcome.status,
          message: outcome.message,
        });
        return result('failed');
      }
      this.emit({
        taskId,
        url: rawUrl,
        attempt,
        outcome: 'retrying',
        status: outcome.status,
        message: outcome.message,
      });
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

  private post(url: URL, payload: Buffer): Promise<number> {
    const path = `${url.pathname}${url.search}`;
    const signature = signRequest(this.options.signer(), { method: 'POST', path, body: payload });
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const request = client.request(
        url,
        {
          method: 'POST',
          lookup: this.checkedLookup(),
          timeout: this.options.timeoutMs,
          headers: {
            'Content-Type': 'application/json',
            'Content-Length': payload.length,
            'Content-Digest': signature['content-digest'],
            'Signature-Input': signature['signature-input'],
            Signature: signature.signature,
          },
        },
        (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
          response.on('error', reject);
        },
      );
      request.on('timeout', () =>
        request.destroy(new Error(`no answer within ${this.options.timeoutMs} ms`)),
      );
      request.on('error', reject);
      request.end(payload);
    });
  }

  // Every resolved address is checked, and the connection uses exactly those (lib/address-policy.ts).
  private checkedLookup(): LookupFunction {
    return guardedLookup(
      this.options.isAllowedAddress,
      this.options.resolveHost,
      (hostname, address) =>
        `callbackUrl host ${hostname} resolves to ${address}, which is not a public address.`,
    );
  }

  private emit(event: Omit<CallbackEvent, 'time'>): void {
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
