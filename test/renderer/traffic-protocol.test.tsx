// @vitest-environment happy-dom
/**
 * SAMVAD and A2A calls in Traffic: the protocol column (entries from before protocols were logged are
 * SAMVAD's), the protocol filter (the semantics of GET /api/traffic?protocol=), applied to envelopes that
 * arrive live too.
 */
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { Traffic } from '../../renderer/src/pages/Traffic';
import { filterTraffic } from '../../renderer/src/traffic/filter';
import { initialTrafficLog } from '../../renderer/src/traffic/log';
import type { TrafficEntry } from '../../src/protocol/console-api.js';
import { consoleData, entry, fakeFetch } from './fakes';

afterEach(cleanup);

const a2a = (id: number): TrafficEntry =>
  entry(id, {
    protocol: 'a2a',
    sender: 'a2a-key:k1',
    callerName: 'Research bot',
    a2a: { method: 'SendMessage', version: '1.0', transport: 'jsonrpc', taskState: 'completed' },
  });

const log: TrafficEntry[] = [a2a(4), entry(3, { protocol: 'samvad' }), a2a(2), entry(1)];

const { fetch } = fakeFetch({});
const api = createApiClient({ token: 't', fetch });
const dataWith = (entries: TrafficEntry[]) =>
  consoleData(null, { traffic: { ...initialTrafficLog, entries, loaded: true, total: entries.length } });
const rowIds = () => screen.getAllByTestId('traffic-row').map((row) => row.dataset.entryId);

describe('protocol', () => {
  it('filters samvad (entries without a protocol included) and a2a', () => {
    expect(filterTraffic(log, { protocol: 'a2a' }).map((e) => e.id)).toEqual([4, 2]);
    expect(filterTraffic(log, { protocol: 'samvad' }).map((e) => e.id)).toEqual([3, 1]);
    expect(filterTraffic(log, { protocol: '' })).toBe(log);
  });

  it('shows a protocol badge on every row and filters by protocol, live envelopes too', async () => {
    const { rerender } = render(<Traffic api={api} data={dataWith(log)} />);
    expect(screen.getByRole('columnheader', { name: 'Protocol' })).toBeTruthy();
    const badges = screen.getAllByTestId('protocol-badge');
    expect(badges.map((badge) => badge.dataset.protocol)).toEqual(['a2a', 'samvad', 'a2a', 'samvad']);
    expect(badges.map((badge) => badge.textContent)).toEqual(['A2A', 'SAMVAD', 'A2A', 'SAMVAD']);

    fireEvent.change(screen.getByLabelText('Protocol'), { target: { value: 'a2a' } });
    expect((await screen.findAllByTestId('traffic-row')).map((row) => row.dataset.entryId)).toEqual([
      '4',
      '2',
    ]);
    expect(screen.getByTestId('traffic-count').textContent).toContain('2 of 4 calls');

    // Two envelopes stream in, one of each protocol: only the A2A one joins the filtered list.
    rerender(<Traffic api={api} data={dataWith([a2a(6), entry(5), ...log])} />);
    expect(rowIds()).toEqual(['6', '4', '2']);

    fireEvent.change(screen.getByLabelText('Protocol'), { target: { value: 'samvad' } });
    expect(rowIds()).toEqual(['5', '3', '1']);
    fireEvent.change(screen.getByLabelText('Protocol'), { target: { value: '' } });
    expect(rowIds()).toEqual(['6', '5', '4', '3', '2', '1']);
  });

  it("shows an A2A call's method, wire, task state and caller key's name in its details", () => {
    render(<Traffic api={api} data={dataWith(log)} />);
    fireEvent.click(screen.getAllByTestId('traffic-row')[0] as HTMLElement);
    expect(screen.getByTestId('a2a-method').textContent).toBe('SendMessage');
    expect(screen.getByTestId('a2a-wire').textContent).toBe('v1.0, JSON-RPC');
    expect(screen.getByTestId('a2a-task-state').textContent).toBe('completed');
    expect(screen.getByTestId('caller-name').textContent).toContain('Research bot');
  });
});

describe('A2A keys by name (issue 26, item 7)', () => {
  const revoked = entry(9, {
    protocol: 'a2a',
    endpoint: '/a2a/jsonrpc',
    sender: 'a2a-key:0a1b2c3d4e5f',
    callerName: 'Old research bot',
    keyStatus: 'revoked',
    verdict: 'access',
    code: 'AUTH_FAILED',
    status: 401,
    message: "This A2A key was revoked by this agent's operator: ask the operator for a new one.",
    signatureForm: 'none',
    skill: undefined,
    passed: [],
    a2a: { version: '1.0', transport: 'jsonrpc', failedAt: 'key' },
  });

  it("names the key in the row, its id after the name, and marks it revoked; a SAMVAD caller's claimed name is not shown", () => {
    render(
      <Traffic api={api} data={dataWith([revoked, a2a(8), entry(7, { callerName: 'I am your bank' })])} />,
    );
    const [first, second, third] = screen.getAllByTestId('traffic-row');
    expect(first!.querySelector('[data-testid="traffic-agent"]')?.textContent).toBe(
      'Old research bot a2a-key:0a1b2c3d4e5f',
    );
    expect(first!.querySelector('[data-testid="traffic-key-status"]')?.textContent).toBe('revoked');
    expect(second!.querySelector('[data-testid="traffic-agent"]')?.textContent).toBe(
      'Research bot a2a-key:k1',
    );
    expect(second!.querySelector('[data-testid="traffic-key-status"]')).toBeNull();
    expect(third!.textContent).not.toContain('I am your bank');
  });

  it('says an A2A call refused without a valid key had none, not that its caller is "unknown"', () => {
    const keyless = entry(10, {
      protocol: 'a2a',
      sender: undefined,
      verdict: 'access',
      status: 401,
      passed: [],
      a2a: { version: '1.0', transport: 'jsonrpc', failedAt: 'key' },
    });
    render(<Traffic api={api} data={dataWith([keyless])} />);
    expect(screen.getByTestId('traffic-row').textContent).toContain('no valid key');
    fireEvent.click(screen.getByTestId('traffic-row'));
    expect(screen.getByTestId('traffic-details').textContent).toContain('Senderno valid key');
  });

  it('says in the details which key it was, that it is revoked, and that the key step refused it', () => {
    render(<Traffic api={api} data={dataWith([revoked])} />);
    fireEvent.click(screen.getByTestId('traffic-row'));
    const details = screen.getByTestId('traffic-details');
    expect(details.textContent).toContain('a2a-key:0a1b2c3d4e5f');
    expect(screen.getByTestId('caller-name').textContent).toContain('Old research bot');
    expect(screen.getByTestId('key-status').dataset.status).toBe('revoked');
    const steps = screen
      .getAllByTestId('verification-step')
      .map((step) => `${step.dataset.step}:${step.dataset.state}`);
    expect(steps[0]).toBe('key:fail');
    expect(details.textContent).not.toMatch(/Signature verifies|Timestamp fresh/);
  });
});
