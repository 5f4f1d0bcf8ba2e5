// @vitest-environment happy-dom
/** The reconnect countdowns and the event stream's own reconnection with backoff (EventSource double, fake timers). */
import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConnectionBadge } from '../../renderer/src/components/ConnectionBadge';
import { Countdown } from '../../renderer/src/components/Countdown';
import { backoffDelay, connectEvents, type ConnectionState } from '../../renderer/src/api/events';
import { entry, FakeEventSource } from './fakes';

const T0 = Date.parse('2025-01-01T12:00:00Z');

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  FakeEventSource.instances = [];
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

describe('Countdown', () => {
  it('counts down every second to nextTryAt, then says it is due', () => {
    render(<Countdown to={new Date(T0 + 65_000).toISOString()} doneText="any moment now" />);
    const countdown = screen.getByTestId('countdown');
    expect(countdown.textContent).toBe('in 1 min 5 s');
    act(() => vi.advanceTimersByTime(6_000));
    expect(countdown.textContent).toBe('in 59 s');
    act(() => vi.advanceTimersByTime(59_000));
    expect(countdown.textContent).toBe('any moment now');
  });

  it('shows the stream reconnecting with its own countdown', () => {
    render(
      <ConnectionBadge
        state={{ status: 'reconnecting', attempt: 2, nextTryAt: T0 + 4_000, reason: 'gone' }}
      />,
    );
    expect(screen.getByTestId('connection-state').textContent).toBe('Reconnecting… next try in 4 s');
    act(() => vi.advanceTimersByTime(1_000));
    expect(screen.getByTestId('connection-state').textContent).toBe('Reconnecting… next try in 3 s');
  });
});

describe('connectEvents', () => {
  it('backs off exponentially, capped', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((attempt) => backoffDelay(attempt))).toEqual([
      500, 1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
  });

  it('reconnects by itself after the console goes away, with backoff, and resyncs on reopen', async () => {
    const states: ConnectionState[] = [];
    const onOpen = vi.fn();
    const onEnvelope = vi.fn();
    let up = false;
    const probe = vi.fn(async () => (up ? ('ok' as const) : ('down' as const)));
    const stream = connectEvents({
      url: '/api/events?token=t',
      createEventSource: FakeEventSource.create,
      onConnection: (state) => states.push(state),
      onEnvelope,
      onState: vi.fn(),
      onOpen,
      probe,
    });
    FakeEventSource.last.open();
    expect(states.at(-1)?.status).toBe('live');
    FakeEventSource.last.emit('envelope', entry(1));
    expect(onEnvelope).toHaveBeenCalledWith(entry(1));

    // The console restarts.
    const first = FakeEventSource.last;
    first.fail();
    expect(first.closed).toBe(true);
    expect(states.at(-1)).toMatchObject({ status: 'reconnecting', attempt: 1, nextTryAt: T0 + 500 });
    await vi.advanceTimersByTimeAsync(500);
    expect(probe).toHaveBeenCalledTimes(1);
    expect(states.at(-1)).toMatchObject({ status: 'reconnecting', attempt: 2, nextTryAt: T0 + 500 + 1000 });
    expect(FakeEventSource.instances).toHaveLength(1);

    up = true;
    await vi.advanceTimersByTimeAsync(1000);
    expect(FakeEventSource.instances).toHaveLength(2);
    FakeEventSource.last.open();
    expect(states.at(-1)?.status).toBe('live');
    expect(onOpen).toHaveBeenCalledTimes(2);

    // Backoff starts over after a good connection.
    FakeEventSource.last.fail();
    expect(states.at(-1)).toMatchObject({ status: 'reconnecting', attempt: 1 });
    stream.close();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(FakeEventSource.instances).toHaveLength(2);
  });

  it('stops and reports it when the console no longer takes the token', async () => {
    const onUnauthorized = vi.fn();
    const states: ConnectionState[] = [];
    connectEvents({
      url: '/api/events?token=old',
      createEventSource: FakeEventSource.create,
      onConnection: (state) => states.push(state),
      onEnvelope: vi.fn(),
      onState: vi.fn(),
      onUnauthorized,
      probe: async () => 'unauthorized',
    });
    FakeEventSource.last.fail();
    await vi.advanceTimersByTimeAsync(500);
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
    expect(states.at(-1)?.status).toBe('closed');
    await vi.advanceTimersByTimeAsync(30_000);
    expect(FakeEventSource.instances).toHaveLength(1);
  });
});
