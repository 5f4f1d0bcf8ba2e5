import { agentIdForUrl } from '../../src/protocol/index.js';
import { type NewestKnock, type NewestSender, type ShellState } from './shell-state.js';
import { updateNotice, type UpdateNotice } from './updates.js';
import type { ConsolePage } from './window-options.js';

export type NoticeKind =
  | 'gateway-down'
  | 'gateway-up'
  | 'url-changed'
  | 'tunnel-stuck'
  | 'registration-failed'
  | 'new-sender'
  | 'new-knock'
  | UpdateNotice['kind'];

export interface Notice {
  kind: NoticeKind;
  title: string;
  body: string;
  /** The console page a click opens; the window's current page when undefined. */
  page?: ConsolePage;
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
      title: gatewayTitle(problem?.kind),
      body: problem
        ? `${problem.diagnosis} ${problem.fix}`
        : 'The gateway is not answering: start it and check its URL.',
    });
  }
  if (wasDown && !isDown)
    notices.push({ kind: 'gateway-up', title: 'Gateway back', body: 'The gateway answers again.' });

  // From the core's record of the change, so a change at start (the address the last run had was not
  // given again) is told too, not only one while running.
  const change = after.addressChange;
  if (change && change.at !== before.addressChange?.at) {
    const [was, now] = [agentIdForUrl(change.previous), agentIdForUrl(change.url)];
    const registry = after.registry.status === 'unregistered' ? '' : ' Its registry entry follows by itself.';
    notices.push({
      kind: 'url-changed',
      title: "Your agent's address changed",
      body: `Its id is now ${now} (was ${was}): agents that approved the old id must approve the new one again.${registry}`,
      page: 'overview',
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
  if (after.access.newest && newSenderArrived(before.access, after.access))
    notices.push(newSenderNotice(after.access.newest, after.access.pending));
  const knocks = after.access.knocks;
  if (knocks?.newest && newKnockArrived(before.access.knocks, knocks))
    notices.push(newKnockNotice(knocks.newest, knocks.waiting));
  const update = before.update && after.update ? updateNotice(before.update, after.update) : undefined;
  if (update) notices.push(update);
  return notices;
}

/**
 * A sender joined the pending list: the newest is newer than before (another sender, or the same one asking
 * again after its request expired), or the list grew. The newest turning into an older one is an approval
 * or a denial of the newest, not news.
 */
function newSenderArrived(before: ShellState['access'], after: ShellState['access']): boolean {
  if (after.pending > before.pending) return true;
  const now = after.newest;
  const then = before.newest;
  if (!now) return false;
  if (!then) return true;
  return Date.parse(now.firstAt) > Date.parse(then.firstAt);
}

function newSenderNotice(newest: NewestSender, pending: number): Notice {
  const others = pending - 1;
  return {
    kind: 'new-sender',
    title: 'New sender asks to talk to your agent',
    body:
      `${describeSender(newest)}. It waits for your approval in the Access page.` +
      (others > 0 ? ` ${others} other${others === 1 ? '' : 's'} wait${others === 1 ? 's' : ''} too.` : ''),
    page: 'access',
  };
}

/**
 * An A2A caller without a key knocked (knock.ts): the newest knock is newer than before, or more wait. A
 * flood of knocks past the list's bounds changes neither, so it is never told.
 */
function newKnockArrived(
  before: ShellState['access']['knocks'],
  after: NonNullable<ShellState['access']['knocks']>,
) {
  if (after.waiting > (before?.waiting ?? 0)) return true;
  const now = after.newest;
  const then = before?.newest;
  if (!now) return false;
  if (!then) return true;
  return Date.parse(now.firstAt) > Date.parse(then.firstAt);
}

function newKnockNotice(newest: NewestKnock, waiting: number): Notice {
  const others = waiting - 1;
  return {
    kind: 'new-knock',
    title: 'An A2A agent without a key asks to talk to your agent',
    body:
      `${describeKnock(newest)}. It waits for your approval in the Access page.` +
      (others > 0 ? ` ${others} other${others === 1 ? '' : 's'} wait${others === 1 ? 's' : ''} too.` : ''),
    page: 'access',
  };
}

/**
 * What a held-back notice of `kind` says once its cooldown is over, from the state then; undefined when there
 * is nothing left to say (e.g. the operator already approved or denied every waiting sender).
 */
export function summaryFor(kind: NoticeKind, state: ShellState): Notice | undefined {
  if (kind === 'new-knock') return knockSummary(state);
  const { pending, newest } = state.access;
  if (kind !== 'new-sender' || pending === 0 || !newest) return undefined;
  if (pending === 1) {
    return {
      kind,
      title: 'A sender waits for your approval',
      body: `${describeSender(newest)}. Approve or deny it in the Access page.`,
      page: 'access',
    };
  }
  return {
    kind,
    title: `${pending} senders wait for your approval`,
    body: `The newest: ${describeSender(newest)}. Approve or deny them in the Access page.`,
    page: 'access',
  };
}

function knockSummary(state: ShellState): Notice | undefined {
  const knocks = state.access.knocks;
  if (!knocks?.newest || knocks.waiting === 0) return undefined;
  const body = `${knocks.waiting === 1 ? '' : 'The newest: '}${describeKnock(knocks.newest)}. Approve or deny in the Access page.`;
  return {
    kind: 'new-knock',
    title:
      knocks.waiting === 1
        ? 'An A2A agent without a key waits for your approval'
        : `${knocks.waiting} A2A agents without a key wait for your approval`,
    body,
    page: 'access',
  };
}

/** Where it called from first (what the bridge saw); the name only as what the caller calls itself. */
function describeKnock(knock: NewestKnock): string {
  const name = knock.name === undefined ? '' : displayName(knock.name);
  return `From ${displayName(knock.address)}${name ? ` (calls itself "${name}")` : ''}, knock ${knock.code}`;
}

/** The verified id first; the name only as what the sender calls itself. */
function describeSender(sender: NewestSender): string {
  const name = sender.name === undefined ? '' : displayName(sender.name);
  return `${sender.sender}${name ? ` (calls itself "${name}")` : ''}, code ${sender.code}`;
}

// A card's name is text the caller chose (unverified): no control characters or markup (some Linux
// notification servers render <b>, <a>), and short, so it cannot pose as a message from the app.
const MAX_NAME = 40;
function displayName(name: string): string {
  const plain = name
    .replace(/[\p{Cc}\p{Cf}<>&"]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return plain.length > MAX_NAME ? `${plain.slice(0, MAX_NAME - 1)}…` : plain;
}

/** The notice's title names the kind of trouble; its body carries the diagnosis and the fix. */
function gatewayTitle(kind: string | undefined): string {
  switch (kind) {
    case undefined:
    case 'unreachable':
    case 'timeout':
      return 'Gateway down';
    case 'unauthorized':
    case 'rate-limited':
      return "Gateway refuses the bridge's token";
    case 'agent-missing':
    case 'agent-unknown':
      return 'No agent for callers on the gateway';
    default:
      return 'Gateway problem';
  }
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

/** Kinds whose suppressed notices are held and summed up later (`release`) instead of dropped: each waits. */
const HELD_KINDS: ReadonlySet<NoticeKind> = new Set(['new-sender', 'new-knock']);

/**
 * Keeps a flapping network from spamming the desktop: each kind waits out its cooldown, and a global window
 * caps the total. A suppressed `gateway-up` is dropped with its `gateway-down`, so the operator is never
 * told "back" without having been told "down". A suppressed `new-sender` is held instead: each sender waits
 * for the operator, so once the cooldown is over one summary says how many still wait.
 */
export class NotificationLimiter {
  private readonly lastByKind = new Map<NoticeKind, number>();
  private recent: number[] = [];
  private downShown = false;
  private readonly held = new Set<NoticeKind>();
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
      if (!this.allowed(notice.kind, now)) {
        if (HELD_KINDS.has(notice.kind)) this.held.add(notice.kind);
        continue;
      }
      this.recent.push(now);
      this.lastByKind.set(notice.kind, now);
      this.held.delete(notice.kind);
      if (notice.kind === 'gateway-down') this.downShown = true;
      if (notice.kind === 'gateway-up') this.downShown = false;
      shown.push(notice);
    }
    return shown;
  }

  /** When a held notice may be shown (its cooldown over and room in the window); undefined if none is held. */
  nextReleaseAt(): number | undefined {
    if (this.held.size === 0) return undefined;
    const full = this.recent.length >= this.burst;
    const windowFreeAt = full ? this.recent[this.recent.length - this.burst]! + this.windowMs : 0;
    let earliest = Infinity;
    for (const kind of this.held)
      earliest = Math.min(earliest, (this.lastByKind.get(kind) ?? 0) + this.perKindMs);
    return Math.max(earliest, windowFreeAt);
  }

  /**
   * The held notices that are due, each rebuilt by `summarise` from the state now (undefined: nothing left to
   * say, and it is no longer held).
   */
  release(now: number, summarise: (kind: NoticeKind) => Notice | undefined): Notice[] {
    const due: Notice[] = [];
    for (const kind of [...this.held]) {
      if (!this.allowed(kind, now)) continue;
      const summary = summarise(kind);
      if (summary) due.push(summary);
      else this.held.delete(kind);
    }
    return this.admit(due, now);
  }

  private allowed(kind: NoticeKind, now: number): boolean {
    const last = this.lastByKind.get(kind);
    if (last !== undefined && now - last < this.perKindMs) return false;
    this.recent = this.recent.filter((time) => now - time < this.windowMs);
    return this.recent.length < this.burst;
  }
}
