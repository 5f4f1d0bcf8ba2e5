import { isIP } from 'node:net';
import { EventEmitter } from 'node:events';
import { TunnelConfigError, withTimeout, type TunnelConnection, type TunnelProvider } from './provider.js';
import type { AddressMemory } from './address-memory.js';
import { backoffDelay, type TunnelState } from './state.js';

export interface SupervisorOptions {
  provider: TunnelProvider;
  /** The local agent port the tunnel forwards to (never the console's). */
  port: number;
  /**
   * The subdomain the operator asked for; without one, the address the tunnel had last (`memory`, across
   * restarts) is asked for again.
   */
  subdomain?: string;
  /** Where the address survives a restart (address-memory.ts). */
  memory?: Pick<AddressMemory, 'url' | 'online'>;
  /** Proves the public URL reaches this agent; throws with a reason when it does not. */
  checkReachability?: (url: string) => Promise<void>;
  checkIntervalMs?: number;
  /** How long to wait before checking again after a failed reachability check. */
  recheckDelayMs?: number;
  /** A last guard around the provider's own step timeouts, so no provider can wedge the supervisor. */
  openTimeoutMs?: number;
  backoff?: { initialMs?: number; maxMs?: number };
  random?: () => number;
}

/** The tunnel's address, announced when it first comes up in this run and whenever it changes. */
export interface AddressChange {
  url: string;
  /** The address before (in this run, or the last one's), when it was another: the agent's id changed. */
  previous: string | undefined;
  /** Why it changed, when the server did it silently (a taken subdomain). */
  note?: string;
}

interface SupervisorEvents {
  state: [TunnelState];
  address: [AddressChange];
}

/**
 * Keeps a tunnel up: connect, watch, reconnect with backoff and a fresh client after every failure, and a
 * periodic reachability check, because a running client is not a reachable agent.
 */
export class TunnelSupervisor extends EventEmitter<SupervisorEvents> {
  private current: TunnelState = { status: 'off' };
  private connection: TunnelConnection | undefined;
  private run: AbortController | undefined;
  private lastUrl: string | undefined;
  private checkTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Failures since the tunnel last proved reachable: drives the backoff, so a flapping tunnel slows down. */
  private failures = 0;

  constructor(private readonly options: SupervisorOptions) {
    super();
  }

  get state(): TunnelState {
    return this.current;
  }

  get url(): string | undefined {
    return this.current.status === 'online' ? this.current.url : undefined;
  }

  start(): void {
    if (this.run) return;
    this.run = new AbortController();
    this.failures = 0;
    void this.connect(this.run.signal);
  }

  stop(): void {
    this.run?.abort();
    this.run = undefined;
    this.clearTimers();
    this.connection?.close();
    this.connection = undefined;
    this.setState({ status: 'off' });
  }

  /** Checks reachability now (e.g. after the card changed); a failure starts a reconnect. */
  async checkNow(): Promise<void> {
    const url = this.url;
    if (!url || !this.options.checkReachability) return;
    const run = this.run;
    const stillCurrent = () => run !== undefined && run === this.run && this.url === url;
    try {
      await this.options.checkReachability(url);
      this.failures = 0;
    } catch (first) {
      if (!stillCurrent()) return;
      // One blip (a dropped socket, a 502) is not an outage: look again before tearing the tunnel down,
      // since a reconnect may lose the address to the server's grace period.
      await new Promise((resolve) => setTimeout(resolve, this.options.recheckDelayMs ?? 2000).unref());
      if (!stillCurrent()) return;
      try {
        await this.options.checkReachability(url);
        this.failures = 0;
      } catch (error) {
        if (stillCurrent())
          this.fail(`public URL is not reachable: ${(error as Error).message || (first as Error).message}`);
      }
    }
  }

  private async connect(signal: AbortSignal): Promise<void> {
    this.setState({ status: 'connecting', attempt: this.failures + 1 });
    const before = this.lastUrl ?? this.options.memory?.url;
    const requested = this.options.provider.asksForName
      ? (this.options.subdomain ?? subdomainOf(before))
      : undefined;
    let connection: TunnelConnection;
    try {
      const opening = this.options.provider.open(this.options.port, { subdomain: requested, signal });
      let gaveUp = false;
      // A connection that arrives after we stopped waiting is closed, not leaked.
      opening.then(
        (late) => (gaveUp || signal.aborted) && late.close(),
        () => undefined,
      );
      const guard = this.options.openTimeoutMs ?? 60_000;
      connection = await withTimeout(
        opening,
        guard,
        `opening the ${this.options.provider.name} tunnel`,
      ).catch((error: unknown) => {
        gaveUp = true;
        throw error;
      });
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof TunnelConfigError)
        return this.setState({ status: 'failed', reason: error.message });
      return this.fail((error as Error).message);
    }
    if (signal.aborted) return connection.close();
    this.connection = connection;
    void connection.broken.then((error) => {
      if (this.connection === connection && !signal.aborted) this.fail(error.message);
    });

    const url = connection.url.replace(/\/+$/, '');
    if (url !== this.lastUrl) {
      const note = requested && subdomainOf(url) !== requested ? this.refusedName(requested, url) : undefined;
      const previous = before === url ? undefined : before;
      this.lastUrl = url;
      this.options.memory?.online(url, note);
      this.emit('address', { url, previous, ...(note ? { note } : {}) });
    }
    this.setState({ status: 'online', url, since: new Date().toISOString() });
    this.scheduleChecks(signal);
    if (this.options.checkReachability) await this.checkNow();
    else this.failures = 0;
  }

  /** Why the address is not the name asked for: the operator's subdomain, or the one the agent had. */
  private refusedName(requested: string, url: string): string {
    return this.options.subdomain
      ? `asked for "${requested}" but the server handed out ${url} (subdomain taken?)`
      : `asked for "${requested}" again (this agent's address before) but the server handed out ${url} (taken by someone else meanwhile, or the server forgot it)`;
  }

  private fail(reason: string): void {
    if (!this.run) return;
    this.clearTimers();
    this.connection?.close();
    this.connection = undefined;
    this.failures++;
    const { initialMs, maxMs } = this.options.backoff ?? {};
    const delay = backoffDelay(this.failures, this.options.random, initialMs, maxMs);
    const nextTryAt = new Date(Date.now() + delay).toISOString();
    this.setState({ status: 'reconnecting', attempt: this.failures + 1, nextTryAt, lastError: reason });
    const signal = this.run.signal;
    this.retryTimer = setTimeout(() => void this.connect(signal), delay);
    this.retryTimer.unref();
  }

  private scheduleChecks(signal: AbortSignal): void {
    if (!this.options.checkReachability) return;
    this.checkTimer = setInterval(() => {
      if (!signal.aborted) void this.checkNow();
    }, this.options.checkIntervalMs ?? 60_000);
    this.checkTimer.unref();
  }

  private clearTimers(): void {
    clearInterval(this.checkTimer);
    clearTimeout(this.retryTimer);
    this.checkTimer = undefined;
    this.retryTimer = undefined;
  }

  private setState(state: TunnelState): void {
    this.current = state;
    this.emit('state', state);
  }
}

/** `https://abc.loca.lt` -> `abc`: asking for it again keeps the address across reconnects. */
function subdomainOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const { hostname } = new URL(url);
    if (isIP(hostname.replace(/^\[|\]$/g, '')) || !hostname.includes('.')) return undefined;
    const label = hostname.split('.')[0];
    return label && /^[a-z0-9][a-z0-9-]{2,62}$/.test(label) ? label : undefined;
  } catch {
    return undefined;
  }
}
