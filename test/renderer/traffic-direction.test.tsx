// @vitest-environment happy-dom
/**
 * Calls in and calls out in Traffic: the direction filter (the semantics of GET /api/traffic?direction=), the
 * direction badge on each row, and the details of a call out (its stages, whether the reply verified).
 */
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { TrafficDetails } from '../../renderer/src/components/TrafficDetails';
import { Traffic } from '../../renderer/src/pages/Traffic';
import { filterTraffic } from '../../renderer/src/traffic/filter';
import { initialTrafficLog } from '../../renderer/src/traffic/log';
import { outboundSteps } from '../../renderer/src/traffic/outbound';
import type { TrafficEntry } from '../../src/protocol/console-api.js';
import { consoleData, entry, fakeFetch } from './fakes';

afterEach(cleanup);

const OWN = 'agent://demo.example';
const out = (id: number, overrides: Partial<TrafficEntry> = {}) =>
  entry(id, {
    direction: 'out',
    sender: OWN,
    callee: 'agent://weather.example',
    skill: 'forecast',
    endpoint: '/agent/message',
    replyVerified: true,
    ...overrides,
  });

const log: TrafficEntry[] = [
  out(5),
  entry(4, { direction: 'in', sender: 'agent://a.example' }),
  out(3, { verdict: 'access', status: 403, replyVerified: undefined, message: 'outbound: off' }),
  // Entries from before directions existed are calls in.
  entry(2, { sender: 'agent://b.example' }),
  out(1, { verdict: 'handler', status: 200, replyVerified: false, message: 'did not verify' }),
];

function showTraffic() {
  const { fetch } = fakeFetch({});
  const data = consoleData(null, {
    traffic: { ...initialTrafficLog, entries: log, loaded: true, total: log.length },
  });
  render(<Traffic api={createApiClient({ token: 't', fetch })} data={data} />);
}

const rowIds = () => screen.getAllByTestId('traffic-row').map((row) => row.dataset.entryId);

describe('direction', () => {
  it('filters in (entries without a direction included) and out', () => {
    expect(filterTraffic(log, { direction: 'out' }).map((e) => e.id)).toEqual([5, 3, 1]);
    expect(filterTraffic(log, { direction: 'in' }).map((e) => e.id)).toEqual([4, 2]);
    expect(filterTraffic(log, { direction: '' })).toBe(log);
    // Text search finds a call out by the agent it called.
    expect(filterTraffic(log, { text: 'WEATHER' }).map((e) => e.id)).toEqual([5, 3, 1]);
  });

  it('shows a direction badge on every row, the callee for calls out, and filters by direction', async () => {
    showTraffic();
    expect(rowIds()).toEqual(['5', '4', '3', '2', '1']);
    const badges = screen.getAllByTestId('direction-badge').map((badge) => badge.dataset.direction);
    expect(badges).toEqual(['out', 'in', 'out', 'in', 'out']);
    const first = screen.getAllByTestId('traffic-row')[0] as HTMLElement;
    expect(first.dataset.direction).toBe('out');
    expect(within(first).getByTestId('traffic-agent').textContent).toBe('agent://weather.example');
    expect(within(first).queryByText(OWN)).toBeNull();

    fireEvent.change(screen.getByLabelText('Direction'), { target: { value: 'out' } });
    expect((await screen.findAllByTestId('traffic-row')).map((row) => row.dataset.entryId)).toEqual([
      '5',
      '3',
      '1',
    ]);
    expect(screen.getByTestId('traffic-count').textContent).toContain('3 of 5 envelopes');
    fireEvent.change(screen.getByLabelText('Direction'), { target: { value: 'in' } });
    expect((await screen.findAllByTestId('traffic-row')).map((row) => row.dataset.entryId)).toEqual([
      '4',
      '2',
    ]);
    fireEvent.click(screen.getAllByRole('button', { name: 'Clear filters' })[0] as HTMLElement);
    expect(await screen.findAllByTestId('traffic-row')).toHaveLength(5);
  });
});

describe('the details of a call out', () => {
  it('names the agent called and says the reply verified, with the outbound stages', () => {
    render(<TrafficDetails entry={log[0] as TrafficEntry} onClose={() => undefined} />);
    const details = screen.getByTestId('traffic-details');
    expect(details.dataset.direction).toBe('out');
    expect(screen.getByRole('heading', { name: 'Call out' })).toBeTruthy();
    expect(screen.getByTestId('reply-verified').dataset.verified).toBe('true');
    expect(screen.getByText('agent://weather.example')).toBeTruthy();
    const steps = screen
      .getAllByTestId('verification-step')
      .map((s) => `${s.dataset.step}:${s.dataset.state}`);
    expect(steps).toEqual(['policy:pass', 'cap:pass', 'answer:pass', 'reply:pass']);
  });

  it('places a refusal where it happened: here (policy, cap) or at the other agent, or at its signature', () => {
    const states = (e: TrafficEntry) => outboundSteps(e).map((s) => `${s.id}:${s.state}`);
    expect(states(log[2] as TrafficEntry)).toEqual([
      'policy:fail',
      'cap:not-run',
      'answer:not-run',
      'reply:not-run',
    ]);
    expect(states(out(9, { verdict: 'rate-limit', status: 429, replyVerified: undefined }))).toEqual([
      'policy:pass',
      'cap:fail',
      'answer:not-run',
      'reply:not-run',
    ]);
    // The other agent's own rate limit (a signed refusal with its code) is its answer, not our cap.
    expect(states(out(8, { verdict: 'rate-limit', code: 'RATE_LIMITED', status: 429 }))).toEqual([
      'policy:pass',
      'cap:pass',
      'answer:fail',
      'reply:pass',
    ]);
    expect(states(log[4] as TrafficEntry)).toEqual(['policy:pass', 'cap:pass', 'answer:pass', 'reply:fail']);
    render(<TrafficDetails entry={log[4] as TrafficEntry} onClose={() => undefined} />);
    expect(screen.getByTestId('reply-verified').textContent).toMatch(/did NOT verify/);
  });
});
