/**
 * The console's live event stream (`GET /api/events`, SSE), kept open by itself: when the console goes away
 * (restart, sleep, network), it closes the EventSource, waits with exponential backoff, checks the console
 * is back and still accepts the token, and opens it again. A refused token ends it (the UI asks for a new
 * one) instead of retrying forever.
 */
import type { AccessEvent, StateEvent, TrafficEntry } from './contract';

export type ConnectionState =
  | { status: 'connecting' }
  | { status: 'live'; since: number }
  | { status: 'reconnecting'; attempt: number; nextTryAt: number; reason: string }
  | { status: 'closed' };

/** The few members of EventSource this module uses, so tests can pass a double. */
export interface EventSourceLike {
  onopen: ((event: Event) => void) | null;
  onerror: ((event: Event) => void) | null;
  addEventListener(type: string, listener: (event: MessageEvent<string>) => void): void;
  close(): void;
}

export type ProbeResult = 'ok' | 'unauthorized' | 'down';

export interface EventStreamOptions {
  url: string;
  onEnvelope: (entry: TrafficEntry) => void;
  onState: (event: StateEvent) => void;
  /** A new sender asks for approval (policy `pairing`). */
  onAccess?: (event: AccessEvent) => void;
  onConnection: (state: ConnectionState) => void;
  /** After every (re)open: the caller reloads what it may have missed. */
  onOpen?: () => void;
  /** The token was refused while reconnecting. */
  onUnauthorized?: () => void;
  /** Is the console back, and does it take our token? (`GET /api/status`) */
  probe: () => Promise<ProbeResult>;
  createEventSource?: (url: string) => EventSourceLike;
  initialDelayMs?: number;
  maxDelayMs?: number;
}

export interface EventStream {
  close(): void;
}

export function backoffDelay(attempt: number, initialMs = 500, maxMs = 10_000): number {
  return Math.min(maxMs, initialMs * 2 ** Math.max(0, attempt - 1));
}

export function connectEvents(options: EventStreamOptions): EventStream {
  const create = options.createEventSource ?? ((url: string) => new EventSource(url) as EventSourceLike);
  let source: EventSourceLike | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let attempt = 0;
  let closed = false;

  const open = () => {
    if (closed) return;
    if (attempt === 0) options.onConnection({ status: 'connecting' });
    const current = create(options.url);
    source = current;
    current.onopen = () => {
      if (closed || source !== current) return;
      attempt = 0;
      options.onConnection({ status: 'live', since: Date.now() });
      options.onOpen?.();
    };
    current.onerror = () => {
      if (closed || source !== current) return;
      // The browser would retry on its own, but not after a 401 and not with backoff: take over.
      current.close();
      source = null;
      retry('The console stopped answering.');
    };
    current.addEventListener('envelope', (event) => {
      const entry = parse<TrafficEntry>(event.data);
      if (entry) options.onEnvelope(entry);
    });
    current.addEventListener('state', (event) => {
      const state = parse<StateEvent>(event.data);
      if (state) options.onState(state);
    });
    current.addEventListener('access', (event) => {
      const access = parse<AccessEvent>(event.data);
      if (access) options.onAccess?.(access);
    });
  };

  const retry = (reason: string) => {
    attempt += 1;
    const delay = backoffDelay(attempt, options.initialDelayMs, options.maxDelayMs);
    options.onConnection({ status: 'reconnecting', attempt, nextTryAt: Date.now() + delay, reason });
    timer = setTimeout(() => void tryAgain(), delay);
  };

  const tryAgain = async () => {
    if (closed) return;
    let result: ProbeResult;
    try {
      result = await options.probe();
    } catch {
      result = 'down';
    }
    if (closed) return;
    if (result === 'unauthorized') {
      closed = true;
      options.onConnection({ status: 'closed' });
      options.onUnauthorized?.();
    } else if (result === 'down') {
      retry('The console is not answering yet.');
    } else {
      open();
    }
  };

  open();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      source?.close();
      source = null;
    },
  };
}

function parse<T>(data: string): T | null {
  try {
    return JSON.parse(data) as T;
  } catch {
    return null;
  }
}
