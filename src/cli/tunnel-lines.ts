// What `serve` prints about the tunnel as its state changes.
import type { TunnelState } from '../tunnel/state.js';

/**
 * The tunnel's lines, one state after another. A failure that repeats (offline, every try fails alike) is
 * said once with what to do, then again only when its reason changes or the tunnel is back: offline, the
 * same line came 33 times in 10 minutes (issue 26). The console's Tunnel card shows each try as it comes.
 */
export class TunnelLines {
  /** The reason said last while the tunnel retries; undefined once it is online, off or failed. */
  private said: string | undefined;

  next(state: TunnelState): string[] {
    if (state.status === 'reconnecting') return this.retrying(state);
    // The try of a failure already said is silent: how it ends is what is said.
    if (state.status === 'connecting' && this.said !== undefined) return [];
    this.said = undefined;
    return [describeTunnel(state)];
  }

  private retrying(state: Extract<TunnelState, { status: 'reconnecting' }>): string[] {
    if (state.lastError === this.said) return [];
    this.said = state.lastError;
    const seconds = Math.max(0, Math.round((Date.parse(state.nextTryAt) - Date.now()) / 1000));
    return [
      `Tunnel: ${state.lastError}; reconnecting in ${seconds} s (attempt ${state.attempt}), then again by ` +
        'itself (said here again when the reason changes or the tunnel is back)',
      ...(state.hint ? [`  Fix: ${state.hint}`] : []),
    ];
  }
}

function describeTunnel(state: Exclude<TunnelState, { status: 'reconnecting' }>): string {
  switch (state.status) {
    case 'off':
      return 'Tunnel: off';
    case 'connecting':
      return `Tunnel: connecting (attempt ${state.attempt})...`;
    case 'online': {
      const reach = state.reachability;
      // The URL stands alone (a space after it), so it can be copied or matched out of the line.
      if (reach?.state === 'reachable') return `Tunnel: online at ${state.url} (reachable from outside)`;
      if (reach?.state === 'unreachable')
        return `Tunnel: online at ${state.url} but a call through it failed: ${reach.problem ?? 'no answer'}; checking again`;
      return `Tunnel: online at ${state.url}${reach ? ' (checking that callers reach this agent through it)' : ''}`;
    }
    case 'failed':
      return `Tunnel: failed: ${state.reason}`;
  }
}
