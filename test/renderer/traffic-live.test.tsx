// @vitest-environment happy-dom
/**
 * The live log: initial load, calls streamed in newest first, pause and resume, the bound of 10,000.
 * The fetch and EventSource are doubles: this tests the UI's logic; the real server is covered by Playwright.
 */
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { App } from '../../renderer/src/App';
import {
  initialTrafficLog,
  TRAFFIC_LIMIT,
  trafficLogReducer,
  type TrafficLogState,
} from '../../renderer/src/traffic/log';
import { entry, FakeEventSource, fakeFetch, status } from './fakes';

describe('trafficLogReducer', () => {
  const live = (ids: number[]): TrafficLogState => ({
    ...initialTrafficLog,
    loaded: true,
    entries: ids.map((id) => entry(id)),
  });
  const shown = (state: TrafficLogState) => state.entries.map((e) => e.id);

  it('prepends what arrives, newest first', () => {
    const state = trafficLogReducer(live([2, 1]), { type: 'received', entries: [entry(3), entry(4)] });
    expect(shown(state)).toEqual([4, 3, 2, 1]);
  });

  it('while paused, counts and keeps new entries aside, and shows them on resume', () => {
    let state = trafficLogReducer(live([2, 1]), { type: 'pause' });
    state = trafficLogReducer(state, { type: 'received', entries: [entry(3)] });
    state = trafficLogReducer(state, { type: 'received', entries: [entry(4), entry(5)] });
    expect(shown(state)).toEqual([2, 1]);
    expect(state.pendingCount).toBe(3);
    state = trafficLogReducer(state, { type: 'resume' });
    expect(shown(state)).toEqual([5, 4, 3, 2, 1]);
    expect(state.pendingCount).toBe(0);
  });

  it('keeps at most 10,000 entries, paused or not', () => {
    const flood = Array.from({ length: TRAFFIC_LIMIT + 500 }, (_, index) => entry(index + 1));
    let state = trafficLogReducer(live([]), { type: 'received', entries: flood });
    expect(state.entries).toHaveLength(TRAFFIC_LIMIT);
    expect(state.entries[0]?.id).toBe(TRAFFIC_LIMIT + 500);
    state = trafficLogReducer(state, { type: 'pause' });
    state = trafficLogReducer(state, { type: 'received', entries: flood });
    expect(state.pending).toHaveLength(TRAFFIC_LIMIT);
    expect(state.pendingCount).toBe(TRAFFIC_LIMIT + 500);
    state = trafficLogReducer(state, { type: 'resume' });
    expect(state.entries).toHaveLength(TRAFFIC_LIMIT);
  });

  it('after a reconnect, replaces the old run with the load plus what streamed in meanwhile', () => {
    let state = trafficLogReducer(live([41, 40]), { type: 'reset' });
    state = trafficLogReducer(state, { type: 'received', entries: [entry(3)] });
    // Until the load lands, the old run stays shown and the new run's entries wait (their ids restart).
    expect(shown(state)).toEqual([41, 40]);
    state = trafficLogReducer(state, { type: 'loaded', entries: [entry(2), entry(1)], total: 2 });
    expect(shown(state)).toEqual([3, 2, 1]);
    expect(state.resyncing).toBe(false);
  });

  it('after a reconnect while paused, keeps the paused view and replaces it on resume', () => {
    let state = trafficLogReducer(live([41, 40]), { type: 'pause' });
    state = trafficLogReducer(state, { type: 'reset' });
    state = trafficLogReducer(state, { type: 'received', entries: [entry(3)] });
    state = trafficLogReducer(state, { type: 'loaded', entries: [entry(2), entry(1)], total: 2 });
    expect(shown(state)).toEqual([41, 40]);
    expect(state.pendingCount).toBe(1);
    state = trafficLogReducer(state, { type: 'resume' });
    expect(shown(state)).toEqual([3, 2, 1]);
  });

  it('after the console restarts, shows the history it serves again, and calls numbered after it', () => {
    // Issue 26, item 8: the restarted console serves what its file kept, with the same ids; a call logged
    // meanwhile (id 9) streams in before the load lands.
    let state = trafficLogReducer(live([8, 7, 6, 5, 4, 3, 2, 1]), { type: 'reset' });
    state = trafficLogReducer(state, { type: 'received', entries: [entry(9)] });
    const history = [8, 7, 6, 5, 4, 3, 2, 1].map((id) => entry(id));
    state = trafficLogReducer(state, { type: 'loaded', entries: history, total: 8 });
    expect(shown(state)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1]);
  });

  it('merges a load with what streamed in meanwhile, without duplicates', () => {
    let state = trafficLogReducer(initialTrafficLog, { type: 'received', entries: [entry(10), entry(11)] });
    state = trafficLogReducer(state, { type: 'loaded', entries: [entry(10), entry(9), entry(8)], total: 3 });
    expect(shown(state)).toEqual([11, 10, 9, 8]);
    expect(state.loaded).toBe(true);
  });
});

describe('the Traffic page, live', () => {
  beforeEach(() => {
    FakeEventSource.instances = [];
    window.history.replaceState(null, '', '/#/traffic');
    sessionStorage.setItem('agent-bridge.console-token', 'secret-token');
  });
  afterEach(() => {
    cleanup();
    sessionStorage.clear();
    vi.unstubAllGlobals();
  });

  const start = async () => {
    const { fetch, calls } = fakeFetch({
      'GET /api/status': { body: status() },
      'GET /api/traffic': { body: { entries: [entry(2), entry(1)], total: 2 } },
    });
    vi.stubGlobal('fetch', fetch);
    render(<App createEventSource={FakeEventSource.create} />);
    await act(async () => FakeEventSource.last.open());
    await screen.findAllByTestId('traffic-row');
    return calls;
  };
  const rows = () => screen.getAllByTestId('traffic-row').map((row) => Number(row.dataset.entryId));
  const stream = async (...ids: number[]) => {
    await act(async () => {
      for (const id of ids) FakeEventSource.last.emit('envelope', entry(id));
      await new Promise((resolve) => setTimeout(resolve, 150));
    });
  };

  it('loads the log with the token, then shows streamed envelopes newest first', async () => {
    const calls = await start();
    expect(FakeEventSource.last.url).toBe('/api/events?token=secret-token');
    expect(calls.find((c) => c.path === '/api/traffic')?.headers.get('Authorization')).toBe(
      'Bearer secret-token',
    );
    expect(rows()).toEqual([2, 1]);
    await stream(3, 4);
    expect(rows()).toEqual([4, 3, 2, 1]);
  });

  it('pauses (new envelopes counted, not shown) and resumes', async () => {
    await start();
    fireEvent.click(screen.getByRole('button', { name: 'Pause' }));
    await stream(3, 4, 5);
    expect(rows()).toEqual([2, 1]);
    expect(screen.getByTestId('paused-count').textContent).toContain('Paused: 3 new');
    fireEvent.click(screen.getByRole('button', { name: 'Resume (3 new)' }));
    expect(rows()).toEqual([5, 4, 3, 2, 1]);
    expect(screen.queryByTestId('paused-count')).toBeNull();
    expect(screen.getByRole('button', { name: 'Pause' }).getAttribute('aria-pressed')).toBe('false');
  });

  it('says what to do when there are no envelopes yet', async () => {
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        'GET /api/status': { body: status() },
        'GET /api/traffic': { body: { entries: [], total: 0 } },
      }).fetch,
    );
    render(<App createEventSource={FakeEventSource.create} />);
    await act(async () => FakeEventSource.last.open());
    expect(await screen.findByText('No calls yet')).toBeTruthy();
    expect(screen.getByTestId('empty-state').textContent).toContain('https://demo.example/agent/message');
  });

  it('shows the details of the row clicked', async () => {
    await start();
    fireEvent.click(screen.getAllByTestId('traffic-row')[1] as HTMLElement);
    expect(screen.getByTestId('traffic-details').dataset.entryId).toBe('1');
    fireEvent.click(screen.getByRole('button', { name: 'Close details' }));
    expect(screen.queryByTestId('traffic-details')).toBeNull();
  });
});
