import { publicUrlOf, type ShellState } from './shell-state.js';

export type NoticeKind =
  'gateway-down' | 'gateway-up' | 'url-changed' | 'tunnel-stuck' | 'registration-failed';

export interface Notice {
  kind: NoticeKind;
  title: string;
  body: string;
}

/** Reconnect attempts before the operator hears that the tunnel cannot reconnect. */
export const STUCK_AFTER_ATTEMPTS = 4;

/** The notices a change of state deserves, before rate limiting. */
export function noticesFor(before: ShellState, after: ShellState): Notice[] {
  const notices: Notice[] = [];
  const wasDown = gatewayDown(before);
  const isDown = gatewayDown(after);
  if (!wasDown && isDown) {
    const problem = after.gateway.problem;
    notices.push({
      kind: 'gateway-down',
      title: 'Gateway down',
      body: problem
        ? `${problem.diagnosis} ${problem.fix}`
        : 'The gateway is not answering: start it and check its URL.',
    });
  }
  if (wasDown && !isDown)
    notices.push({ kind: 'gateway-up', title: 'Gateway back', body: 'The gateway answers again.' });

  const urlBefore = publicUrlOf(before);
  const urlAfter = publicUrlOf(after);
  if (urlBefore && urlAfter && urlBefore !== urlAfter) {
    notices.push({
      kind: 'url-changed',
      title: 'Public URL changed',
      body: `The agent is now at ${urlAfter}.`,
    });
  }
  const attempts = (state: ShellState) => (state.tunnel.status === 'reconnecting' ? state.tunnel.attempt : 0);
  if (
    attempts(before) < STUCK_AFTER_ATTEMPTS &&
    attempts(after) >= STUCK_AFTER_ATTEMPTS &&
    after.tunnel.status === 'reconnecting'
  ) {
    notices.push({
      kind: 'tunnel-stuck',
      title: 'Tunnel cannot reconnect',
      body: `${after.tunnel.lastError}. Still trying.`,
    });
  }
  const failure = (state: ShellState) =>
    state.registry.status === 'registering' ? undefined : state.registry.lastError;
  const failed = failure(after);
  if (failed && failed.at !== failure(before)?.at) {
    notices.push({
      kind: 'registration-failed',
      title: 'Registration failed',
      body: `${failed.message} ${failed.fix}`,
    });
  }
  return notices;
}

function gatewayDown(state: ShellState): boolean {
  return (
    state.gateway.status === 'configured' &&
    (state.gateway.live === false || state.gateway.problem !== undefined)
  );
}

export interface RateLimitOptions {
  /** The same kind of notice at most once per this long. */
  perKindMs?: number;
  /** And at most `burst` notices of any kind per `windowMs`. */
  burst?: number;
  windowMs?: number;
}

/**
 * Keeps a flapping network from spamming the desktop: each kind waits out its cooldown, and a global window
 * caps the total. A suppressed `gateway-up` is dropped with its `gateway-down`, so the operator is never
 * told "back" without having been told "down".
 */
export class NotificationLimiter {
  private readonly lastByKind = new Map<NoticeKind, number>();
  private recent: number[] = [];
  private downShown = false;
  private readonly perKindMs: number;
  private readonly burst: number;
  private readonly windowMs: number;

  constructor(options: RateLimitOptions = {}) {
    this.perKindMs = options.perKindMs ?? 5 * 60_000;
    this.burst = options.burst ?? 3;
    this.windowMs = options.windowMs ?? 60_000;
  }

  /** Which of `notices` to show now. */
  admit(notices: Notice[], now: number): Notice[] {
    const shown: Notice[] = [];
    for (const notice of notices) {
      if (notice.kind === 'gateway-up' && !this.downShown) continue;
      const last = this.lastByKind.get(notice.kind);
      if (last !== undefined && now - last < this.perKindMs) continue;
      this.recent = this.recent.filter((time) => now - time < this.windowMs);
      if (this.recent.length >= this.burst) continue;
      this.recent.push(now);
      this.lastByKind.set(notice.kind, now);
      if (notice.kind === 'gateway-down') this.downShown = true;
      if (notice.kind === 'gateway-up') this.downShown = false;
      shown.push(notice);
    }
    return shown;
  }
}
