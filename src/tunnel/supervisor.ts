import { isIP } from 'node:net';
import { EventEmitter } from 'node:events';
import { OFFLINE_MAX_MS } from './hints.js';
import {
  TunnelConfigError,
  TunnelUnreachableError,
  withTimeout,
  type TunnelConnection,
  type TunnelProvider,
} from './provider.js';
import type { AddressMemory } from './address-memory.js';
import { backoffDelay, type TunnelState } from './state.js';
import type { TunnelReachability } from '../protocol/console-api.js';

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
  /**
   * After the tunnel lost its address, how long the same name is asked for again before another name is
   * taken (localtunnel's server keeps a name for its old client about a second after that client's last
   * socket closed, and hands out a random one meanwhile). Default 60 s.
   */
  nameLapseMs?: number;
  /** A last guard around the provider's own step timeouts, so no provider can wedge the supervisor. */
  openTimeoutMs?: number;
  /**
   * Waits between tries: doubling from `initialMs` up to `maxMs` (30 s), and while the tunnel server cannot
   * be reached because this machine is offline, on up to `offlineMaxMs` (5 min; never below `maxMs`).
   */
  backoff?: { initialMs?: number; maxMs?: number; offlineMaxMs?: number };
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
  /** The address whose name is being asked for again, and until when (see `nameLapseMs`). */
  private keeping: { url: string; until: number } | undefined;

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
    // The address of the last run: its name may still be held for the old process for a moment.
    const remembered = this.options.memory?.url;
    if (remembered) this.keepName(remembered);
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

  /**
   * Checks reachability now (e.g. after the card changed), and shows what it measured (the Tunnel badge and
   * health read it). One failure is looked at again before anything else happens: a blip (a dropped socket,
   * a 502) is not an outage. A second one reconnects, asking for the same name.
   */
  async checkNow(): Promise<void> {
    const url = this.url;
    const check = this.options.checkReachability;
    if (!url || !check) return;
    const run = this.run;
    const stillCurrent = () => run !== undefined && run === this.run && this.url === url;
    const first = await attempt(check, url);
    if (!stillCurrent()) return;
    this.measured(first);
    if (first === undefined) return;
    await new Promise((resolve) => setTimeout(resolve, this.options.recheckDelayMs ?? 2000).unref());
    if (!stillCurrent()) return;
    const second = await attempt(check, url);
    if (!stillCurrent()) return;
    this.measured(second);
    if (second !== undefined) this.fail(`public URL is not reachable: ${second}`);
  }

  /** A check's outcome (undefined: reachable) on the online state; announced when it changes. */
  private measured(problem: string | undefined): void {
    const current = this.current;
    if (current.status !== 'online') return;
    if (problem === undefined) {
      this.failures = 0;
      this.keeping = undefined;
    }
    const reachability: TunnelReachability = {
      state: problem === undefined ? 'reachable' : 'unreachable',
      checkedAt: new Date().toISOString(),
      ...(problem === undefined ? {} : { problem }),
    };
    const before = current.reachability;
    const changed = before?.state !== reachability.state || before?.problem !== reachability.problem;
    this.setState({ ...current, reachability }, changed);
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
      return this.fail((error as Error).message, undefined, error);
    }
    if (signal.aborted) return connection.close();
    this.connection = connection;
    void connection.broken.then((error) => {
      if (this.connection === connection && !signal.aborted) this.fail(error.message);
    });

    const url = connection.url.replace(/\/+$/, '');
    if (requested && subdomainOf(url) !== requested && this.stillKeeping(before, url)) {
      // The server still holds our name for the connection we lost: a new name would change the agent's
      // id. Give this one back and ask again once the old hold lapsed.
      connection.close();
      this.connection = undefined;
      return this.fail(
        `the tunnel server still holds "${requested}" for this agent's previous connection; asking for it again (the address and the agent id stay ${before ?? ''})`,
        requested,
      );
    }
    if (url !== this.lastUrl) {
      const note = requested && subdomainOf(url) !== requested ? this.refusedName(requested, url) : undefined;
      const previous = before === url ? undefined : before;
      this.lastUrl = url;
      this.options.memory?.online(url, note);
      this.emit('address', { url, previous, ...(note ? { note } : {}) });
    }
    const checked = this.options.checkReachability !== undefined;
    this.setState({
      status: 'online',
      url,
      since: new Date().toISOString(),
      ...(checked ? { reachability: { state: 'checking' as const } } : {}),
    });
    this.scheduleChecks(signal);
    if (checked) await this.checkNow();
    else {
      this.failures = 0;
      this.keeping = undefined;
    }
  }

  /** From now until `nameLapseMs` is over, `url`'s name is asked for again rather than given up. */
  private keepName(url: string): void {
    if (this.keeping?.url === url) return;
    this.keeping = { url, until: Date.now() + (this.options.nameLapseMs ?? 60_000) };
  }

  /**
   * Whether `offered` (another name than asked for) is refused while the old name is kept: only within the
   * lapse time, and only from the same server (another tunnel host never held the old name).
   */
  private stillKeeping(before: string | undefined, offered: string): boolean {
    const keeping = this.keeping;
    if (!keeping || keeping.url !== before || Date.now() >= keeping.until) return false;
    return parentOf(keeping.url) === parentOf(offered);
  }

  /** Why the address is not the name asked for: the operator's subdomain, or the one the agent had. */
  private refusedName(requested: string, url: string): string {
    return this.options.subdomain
      ? `asked for "${requested}" but the server handed out ${url} (subdomain taken?)`
      : `asked for "${requested}" again (this agent's address before) but the server handed out ${url} (taken by someone else meanwhile, or the server forgot it)`;
  }

  private fail(reason: string, keepingName?: string, cause?: unknown): void {
    if (!this.run) return;
    this.clearTimers();
    // An address lost while it was ours: its name is asked for again until the server lets go of it.
    if (this.connection && this.lastUrl) this.keepName(this.lastUrl);
    this.connection?.close();
    this.connection = undefined;
    this.failures++;
    const { initialMs, maxMs = 30_000, offlineMaxMs = OFFLINE_MAX_MS } = this.options.backoff ?? {};
    // Offline, a try every 30 s changes nothing (and said so 33 times in 10 minutes, issue 26): wait longer.
    const unreachable = cause instanceof TunnelUnreachableError ? cause : undefined;
    const cap = unreachable?.offline ? Math.max(maxMs, offlineMaxMs) : maxMs;
    let delay = backoffDelay(this.failures, this.options.random, initialMs, cap);
    // The server lets a name go about a second after its client's last socket closed: never ask sooner.
    if (keepingName) delay = Math.max(delay, NAME_RELEASE_MS);
    const nextTryAt = new Date(Date.now() + delay).toISOString();
    this.setState({
      status: 'reconnecting',
      attempt: this.failures + 1,
      nextTryAt,
      lastError: reason,
      ...(unreachable ? { hint: unreachable.hint } : {}),
      ...(keepingName ? { keepingName } : {}),
    });
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

  /** `announce` false: the state is current (a check's time) but nothing changed that anyone must hear. */
  private setState(state: TunnelState, announce = true): void {
    this.current = state;
    if (announce) this.emit('state', state);
  }
}

/** How long localtunnel's server keeps a name after its client's last socket closed (1 s), and a margin. */
const NAME_RELEASE_MS = 1500;

/** A failed check's reason, or undefined when the check passed. */
async function attempt(check: (url: string) => Promise<void>, url: string): Promise<string | undefined> {
  try {
    await check(url);
    return undefined;
  } catch (error) {
    return (error as Error).message || 'the check failed';
  }
}

/** `https://abc.loca.lt` -> `loca.lt`: the server that hands out names under it. */
function parentOf(url: string): string {
  try {
    const { hostname, port } = new URL(url);
    return `${hostname.split('.').slice(1).join('.')}:${port}`;
  } catch {
    return url;
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
