// @vitest-environment happy-dom
/**
 * Traffic lists calls newest first by the time they started (issue 16: a call out is logged when it ends,
 * so it landed on top of calls that started after it). The reducer puts each arrival in its place, live, on
 * load and on resume; the table shows rows in that order.
 */
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TrafficDetails } from '../../renderer/src/components/TrafficDetails';
import { TrafficTable } from '../../renderer/src/pages/Traffic';
import { initialTrafficLog, trafficLogReducer, type TrafficLogState } from '../../renderer/src/traffic/log';
import { entry } from './fakes';

afterEach(cleanup);

const at = (second: number) => new Date(Date.UTC(2025, 0, 1, 12, 0, second)).toISOString();
// A call out that started at :01 and took 20 s: logged (id 4) after calls in that started at :02 and :03.
const inA = entry(2, { time: at(2) });
const inB = entry(3, { time: at(3) });
const slowOut = entry(4, {
  time: at(1),
  durationMs: 20_000,
  direction: 'out',
  callee: 'agent://far.example',
});
const ids = (state: TrafficLogState) => state.entries.map((e) => e.id);

describe('newest first by start time', () => {
  it('puts a call that arrives late in its place, live', () => {
    let state: TrafficLogState = { ...initialTrafficLog, loaded: true };
    state = trafficLogReducer(state, { type: 'received', entries: [inA, inB] });
    state = trafficLogReducer(state, { type: 'received', entries: [slowOut] });
    expect(ids(state)).toEqual([3, 2, 4]);
    // A later call still goes on top.
    state = trafficLogReducer(state, { type: 'received', entries: [entry(5, { time: at(9) })] });
    expect(ids(state)).toEqual([5, 3, 2, 4]);
  });

  it('orders a load (the console lists in the order calls ended) and what arrives while paused', () => {
    let state = trafficLogReducer(initialTrafficLog, {
      type: 'loaded',
      entries: [slowOut, inB, inA],
      total: 3,
    });
    expect(ids(state)).toEqual([3, 2, 4]);
    state = trafficLogReducer(state, { type: 'pause' });
    state = trafficLogReducer(state, {
      type: 'received',
      entries: [entry(6, { time: at(8) }), entry(7, { time: at(0), direction: 'out' })],
    });
    state = trafficLogReducer(state, { type: 'resume' });
    expect(ids(state)).toEqual([6, 3, 2, 4, 7]);
  });

  it('shows the rows in that order', () => {
    const state = trafficLogReducer(initialTrafficLog, {
      type: 'loaded',
      entries: [slowOut, inB, inA],
      total: 3,
    });
    render(
      <TrafficTable
        entries={state.entries}
        selectedIndex={-1}
        onSelectIndex={vi.fn()}
        fallbackHeight={400}
      />,
    );
    const rows = screen.getAllByTestId('traffic-row');
    expect(rows.map((row) => row.getAttribute('data-entry-id'))).toEqual(['3', '2', '4']);
  });
});

describe('the details pane', () => {
  it('says what was answered (the status) before the steps that passed', () => {
    render(
      <TrafficDetails
        entry={entry(9, {
          status: 502,
          code: 'AGENT_UNAVAILABLE',
          verdict: 'handler',
          diagnosis: 'gateway down',
          passed: ['size', 'shape', 'timestamp', 'signature'],
        })}
        onClose={vi.fn()}
      />,
    );
    const pane = screen.getByTestId('traffic-details');
    const headings = [...pane.querySelectorAll('h3')].map((h) => h.textContent);
    expect(headings.slice(0, 2)).toEqual(['Response', 'Checks']);
    const text = pane.textContent ?? '';
    expect(text.indexOf('502')).toBeLessThan(text.indexOf('gateway down'));
    expect(text.indexOf('gateway down')).toBeLessThan(
      text.indexOf('Body within the size limit (size)passed'),
    );
  });
});
