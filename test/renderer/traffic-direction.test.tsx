// @vitest-environment happy-dom
/**
 * Calls in and calls out in Traffic: the direction filter (the semantics of GET /api/traffic?direction=), the
 * direction badge on each row, and the details of a call out (its stages, its reply's signature: verified,
 * unsigned or failed).
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
    replySignature: 'verified',
    ...overrides,
  });

const log: TrafficEntry[] = [
  out(5),
  entry(4, { direction: 'in', sender: 'agent://a.example' }),
  out(3, { verdict: 'access', status: 403, replySignature: undefined, message: 'outbound: off' }),
  // Entries from before directions existed are calls in.
  entry(2, { sender: 'agent://b.example' }),
  out(1, { verdict: 'handler', status: 200, replySignature: 'failed', message: 'did not verify' }),
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
    expect(screen.getByTestId('traffic-count').textContent).toContain('3 of 5 calls');
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
    expect(screen.getByTestId('reply-signature').dataset.signature).toBe('verified');
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
    expect(states(out(9, { verdict: 'rate-limit', status: 429, replySignature: undefined }))).toEqual([
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
    expect(screen.getByTestId('reply-signature').textContent).toMatch(/did NOT verify/);
  });

  it('shows an unsigned reply (an SDK-built agent) beside verified and failed: used with a caution, or refused by the setting', () => {
    const unsigned = out(7, { replySignature: 'unsigned' });
    const steps = outboundSteps(unsigned);
    expect(steps.map((s) => `${s.id}:${s.state}`)).toEqual([
      'policy:pass',
      'cap:pass',
      'answer:pass',
      'reply:warn',
    ]);
    expect(steps[3]?.label).toMatch(/unsigned: this agent’s software does not sign replies/);
    expect(steps[3]?.detail).toMatch(/refuse unsigned replies/);
    render(<TrafficDetails entry={unsigned} onClose={() => undefined} />);
    const field = screen.getByTestId('reply-signature');
    expect(field.dataset.signature).toBe('unsigned');
    expect(field.textContent).toMatch(/^unsigned: this agent’s software does not sign replies/);
    const reply = screen.getAllByTestId('verification-step').find((s) => s.dataset.step === 'reply');
    expect(reply?.dataset.state).toBe('warn');
    expect(reply?.textContent).toMatch(/accepted, unchecked/);
    cleanup();

    // An unsigned refusal from the other agent (its code) is its answer; refused here, it fails at the reply.
    const theirs = out(6, {
      replySignature: 'unsigned',
      verdict: 'input',
      code: 'SCHEMA_INVALID',
      status: 400,
    });
    expect(outboundSteps(theirs).map((s) => s.state)).toEqual(['pass', 'pass', 'fail', 'warn']);
    const refused = out(5, {
      replySignature: 'unsigned',
      verdict: 'handler',
      status: 502,
      message:
        'The reply carries no signature ... (setting outboundRequireSignedReplies), so it was discarded.',
    });
    const states = outboundSteps(refused);
    expect(states.map((s) => s.state)).toEqual(['pass', 'pass', 'pass', 'fail']);
    expect(states[3]?.detail).toMatch(/outboundRequireSignedReplies/);
  });
});
