import type { AgentCard } from '../protocol/index.js';
import type { PublicAddressHealth } from '../protocol/console-api.js';
import { AddressMemory } from './address-memory.js';
import { CommandProvider } from './command-provider.js';
import { LocaltunnelProvider } from './localtunnel-provider.js';
import type { TunnelProvider } from './provider.js';
import { checkReachable } from './reachability.js';
import type { TunnelState } from './state.js';
import { TunnelSupervisor, type AddressChange, type SupervisorOptions } from './supervisor.js';

/** The settings that say how the agent is reached from outside. */
export interface AddressSettings {
  /** The agent port (the local URL until the agent listens). */
  port: number;
  tunnel: 'localtunnel' | 'command' | 'none';
  tunnelHost: string;
  subdomain?: string;
  tunnelNameHoldSeconds?: number;
  tunnelCommand?: string;
  tunnelUrlPattern?: string;
  publicUrl?: string;
}

/** Tunnel supervision timing (tests shorten the backoff and the reachability interval). */
export type TunnelTiming = Pick<
  SupervisorOptions,
  'backoff' | 'checkIntervalMs' | 'random' | 'recheckDelayMs'
> & {
  stepTimeoutMs?: number;
};

const TUNNEL_SETTINGS = ['tunnel', 'tunnelHost', 'subdomain', 'tunnelCommand', 'tunnelUrlPattern'] as const;

export interface PublicAddressOptions {
  dataDir: string;
  settings(): AddressSettings;
  /** The card as served now: the reachability check compares the one fetched through the tunnel with it. */
  card(): AgentCard;
  timing?: TunnelTiming;
  now?: () => number;
  onState(state: TunnelState): void;
  onAddress(change: AddressChange): void;
  /** The address the agent is reached at changed (the card's `url` and `id` follow it). */
  onUrl(): void;
}

/**
 * Where the agent is reached from outside, and the tunnel's life: opened (localtunnel or the operator's own
 * command) to the agent port only, supervised, its address kept across restarts (address-memory.ts) and
 * across reconnects (so the agent's id does not flap), and reopened when its settings change.
 */
export class PublicAddress {
  /** The tunnel's address across restarts, and a change of it the operator has not dismissed. */
  readonly memory: AddressMemory;
  private supervisor: TunnelSupervisor | undefined;
  private tunnelUrl: string | undefined;
  /** A tunnel that could not even start (bad settings): kept so `state` reports it. */
  private failure: TunnelState | undefined;
  private listenUrl: string;

  constructor(private readonly options: PublicAddressOptions) {
    this.memory = new AddressMemory(options.dataDir, options.now);
    this.listenUrl = `http://127.0.0.1:${options.settings().port}`;
  }

  /** Where callers reach the agent from outside: the tunnel's address, or the `publicUrl` setting. */
  get publicUrl(): string | undefined {
    if (this.tunnelUrl) return this.tunnelUrl;
    return this.options.settings().publicUrl?.replace(/\/+$/, '') || undefined;
  }

  /** The tunnel's URL, else the public URL setting, else the local one (loopback for 0.0.0.0 or [::]). */
  get url(): string {
    return (
      this.publicUrl ??
      this.listenUrl.replace('://0.0.0.0:', '://127.0.0.1:').replace('://[::]:', '://127.0.0.1:')
    );
  }

  get localUrl(): string {
    return this.listenUrl;
  }

  get state(): TunnelState {
    return this.supervisor?.state ?? this.failure ?? { status: 'off' };
  }

  /**
   * What the last check through the tunnel's address found, for /agent/health: a connected client is not a
   * reachable agent. `none` without a tunnel (a `publicUrl` setting is the operator's word, not measured).
   */
  health(): PublicAddressHealth {
    const state = this.state;
    if (state.status === 'off') return 'none';
    if (state.status !== 'online') return 'unreachable';
    return state.reachability?.state ?? 'checking';
  }

  /** The agent listens at `url`: the tunnel, when one is set, opens to it. */
  listening(url: string): void {
    this.listenUrl = url;
    this.options.onUrl();
    if (this.options.settings().tunnel !== 'none') this.startTunnel();
  }

  /** Opens the configured tunnel to the agent port only. */
  startTunnel(): void {
    if (this.supervisor) return;
    this.failure = undefined;
    const port = Number(new URL(this.listenUrl).port || 80);
    let provider: TunnelProvider;
    try {
      provider = this.provider();
    } catch (error) {
      this.failure = { status: 'failed', reason: (error as Error).message };
      this.options.onState(this.failure);
      return;
    }
    const supervisor = new TunnelSupervisor({
      provider,
      port,
      subdomain: this.options.settings().subdomain,
      nameLapseMs: (this.options.settings().tunnelNameHoldSeconds ?? 60) * 1000,
      memory: this.memory,
      checkReachability: (url) => checkReachable(url, this.options.card()),
      ...this.options.timing,
    });
    this.supervisor = supervisor;
    supervisor.on('state', (state) => {
      if (state.status === 'online') this.setTunnelUrl(state.url);
      if (state.status === 'off' || state.status === 'failed') this.setTunnelUrl(undefined);
      this.options.onState(state);
    });
    supervisor.on('address', (change) => {
      this.setTunnelUrl(change.url);
      this.options.onAddress(change);
    });
    supervisor.start();
  }

  stopTunnel(): void {
    const supervisor = this.supervisor;
    this.supervisor = undefined;
    this.failure = undefined;
    // The supervisor announces `off` itself; without one, say it here.
    if (supervisor) supervisor.stop();
    else this.options.onState({ status: 'off' });
    supervisor?.removeAllListeners();
    this.setTunnelUrl(undefined);
  }

  /** A changed tunnel setting takes effect by reopening the tunnel (the agent keeps serving meanwhile). */
  settingsChanged(before: AddressSettings, listening: boolean): void {
    const now = this.options.settings();
    if (!listening || !TUNNEL_SETTINGS.some((name) => now[name] !== before[name])) return;
    this.stopTunnel();
    if (now.tunnel !== 'none') this.startTunnel();
  }

  /** Proves `url` serves this agent's card (the registrar checks before it registers). */
  checkReachable(url: string): Promise<void> {
    return checkReachable(url, this.options.card());
  }

  /** Stops the tunnel for good (the agent is stopping). */
  close(): void {
    this.supervisor?.stop();
  }

  private provider(): TunnelProvider {
    const settings = this.options.settings();
    if (settings.tunnel === 'command') {
      return new CommandProvider({
        command: settings.tunnelCommand ?? '',
        urlPattern: settings.tunnelUrlPattern,
      });
    }
    return new LocaltunnelProvider({
      host: settings.tunnelHost,
      stepTimeoutMs: this.options.timing?.stepTimeoutMs,
    });
  }

  private setTunnelUrl(url: string | undefined): void {
    if (url === this.tunnelUrl) return;
    this.tunnelUrl = url;
    this.options.onUrl();
  }
}
