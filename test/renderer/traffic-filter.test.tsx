// @vitest-environment happy-dom
/** The traffic filters (TrafficFilter semantics, applied in the browser) and the filter bar (UI logic only). */
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ConsoleData } from '../../renderer/src/hooks/useConsole';
import { createApiClient } from '../../renderer/src/api/client';
import { Traffic } from '../../renderer/src/pages/Traffic';
import { filterTraffic, isValidStatusFilter, trafficPredicate } from '../../renderer/src/traffic/filter';
import { initialTrafficLog } from '../../renderer/src/traffic/log';
import type { TrafficEntry } from '../../src/protocol/console-api.js';
import { consoleData, entry, fakeFetch, skillsView, skillView } from './fakes';

afterEach(cleanup);

const log: TrafficEntry[] = [
  entry(6, { sender: 'agent://b.example', skill: 'chat', verdict: 'accepted', status: 200 }),
  entry(5, {
    sender: 'agent://a.example',
    skill: 'chat',
    verdict: 'signature',
    code: 'AUTH_FAILED',
    status: 401,
    message: 'Signature mismatch',
  }),
  entry(4, {
    sender: 'agent://a.example',
    skill: 'translate',
    verdict: 'skill',
    code: 'SKILL_NOT_FOUND',
    status: 404,
  }),
  entry(3, {
    sender: 'agent://c.example',
    skill: 'chat',
    verdict: 'rate-limit',
    code: 'RATE_LIMITED',
    status: 429,
  }),
  entry(2, {
    sender: 'agent://a.example',
    skill: 'chat',
    verdict: 'handler',
    status: 503,
    diagnosis: 'chat endpoint disabled',
  }),
  entry(1, { sender: undefined, skill: undefined, verdict: 'shape', status: 400, traceId: undefined }),
];
const ids = (filter: Parameters<typeof filterTraffic>[1]) => filterTraffic(log, filter).map((e) => e.id);

describe('traffic filter', () => {
  it('lets everything through when empty (and returns the same array)', () => {
    expect(trafficPredicate({})).toBeNull();
    expect(filterTraffic(log, { sender: ' ', text: '' })).toBe(log);
  });

  it('matches sender and skill exactly', () => {
    expect(ids({ sender: 'agent://a.example' })).toEqual([5, 4, 2]);
    expect(ids({ sender: 'agent://a.exam' })).toEqual([]);
    expect(ids({ skill: 'translate' })).toEqual([4]);
  });

  it('takes accepted, refused (any step) or one step as the verdict', () => {
    expect(ids({ verdict: 'accepted' })).toEqual([6]);
    expect(ids({ verdict: 'refused' })).toEqual([5, 4, 3, 2, 1]);
    expect(ids({ verdict: 'rate-limit' })).toEqual([3]);
  });

  it('takes an HTTP status or a class', () => {
    expect(ids({ status: '401' })).toEqual([5]);
    expect(ids({ status: '4xx' })).toEqual([5, 4, 3, 1]);
    expect(ids({ status: '5XX' })).toEqual([2]);
    expect(isValidStatusFilter('4x')).toBe(false);
    expect(ids({ status: 'teapot' })).toEqual([]);
  });

  it('matches text case-insensitively against sender, skill, code, message, traceId and diagnosis', () => {
    expect(ids({ text: 'B.EXAMPLE' })).toEqual([6]);
    expect(ids({ text: 'signature mismatch' })).toEqual([5]);
    expect(ids({ text: 'skill_not' })).toEqual([4]);
    expect(ids({ text: 'trace-3' })).toEqual([3]);
    expect(ids({ text: 'ENDPOINT DISABLED' })).toEqual([2]);
    expect(ids({ text: 'translate' })).toEqual([4]);
  });

  it('combines fields with AND', () => {
    expect(ids({ sender: 'agent://a.example', verdict: 'refused', status: '4xx' })).toEqual([5, 4]);
  });
});

describe('the filter bar', () => {
  it('narrows the rows shown and says how many match', async () => {
    const { fetch } = fakeFetch({});
    const data: ConsoleData = {
      status: null,
      statusError: null,
      refreshStatus: vi.fn(async () => undefined),
      connection: { status: 'live', since: 0 },
      traffic: { ...initialTrafficLog, entries: log, loaded: true, total: log.length },
      trafficError: null,
      pause: vi.fn(),
      resume: vi.fn(),
      accessVersion: 0,
      skillsVersion: 0,
    };
    render(<Traffic api={createApiClient({ token: 't', fetch })} data={data} />);
    expect(screen.getAllByTestId('traffic-row')).toHaveLength(6);

    fireEvent.change(screen.getByLabelText('Verdict'), { target: { value: 'refused' } });
    fireEvent.change(screen.getByLabelText('Sender'), { target: { value: 'agent://a.example' } });
    expect((await screen.findAllByTestId('traffic-row')).map((row) => row.dataset.entryId)).toEqual([
      '5',
      '4',
      '2',
    ]);
    expect(screen.getByTestId('traffic-count').textContent).toContain('3 of 6 calls');

    fireEvent.change(screen.getByLabelText('Search'), { target: { value: 'nothing like this' } });
    expect(await screen.findByText('No calls match these filters')).toBeTruthy();
    fireEvent.click(screen.getAllByRole('button', { name: 'Clear filters' })[0] as HTMLElement);
    expect(await screen.findAllByTestId('traffic-row')).toHaveLength(6);
  });

  it('flags a status filter it cannot use', () => {
    const { fetch } = fakeFetch({});
    const data = {
      status: null,
      statusError: null,
      refreshStatus: vi.fn(async () => undefined),
      connection: { status: 'live', since: 0 },
      traffic: { ...initialTrafficLog, entries: log, loaded: true },
      trafficError: null,
      pause: vi.fn(),
      resume: vi.fn(),
      accessVersion: 0,
      skillsVersion: 0,
    } satisfies ConsoleData;
    render(<Traffic api={createApiClient({ token: 't', fetch })} data={data} />);
    fireEvent.change(screen.getByLabelText('Status'), { target: { value: '4x' } });
    expect(screen.getByLabelText('Status').getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByText('A code like 401 or a class like 4xx')).toBeTruthy();
  });

  it('shows the skill of every call, offers the published skills first (then the ones callers named), and narrows on one', async () => {
    const calls = [
      entry(9, {
        protocol: 'a2a',
        endpoint: '/a2a/skills/research/jsonrpc',
        skill: 'research',
        sender: 'a2a-key:k1',
      }),
      // An A2A read runs no skill.
      entry(8, { protocol: 'a2a', endpoint: '/a2a/jsonrpc', skill: undefined, sender: 'a2a-key:k1' }),
      // A caller's unsigned text that is no skill id: shown in its row, never suggested.
      entry(7, { verdict: 'shape', status: 400, skill: 'x'.repeat(500) }),
      ...log,
    ];
    const { fetch } = fakeFetch({
      'GET /api/skills': { body: skillsView([skillView('research'), skillView('ops')]) },
    });
    const data = consoleData(null, {
      traffic: { ...initialTrafficLog, entries: calls, loaded: true, total: calls.length },
    });
    render(<Traffic api={createApiClient({ token: 't', fetch })} data={data} />);
    const skillCells = () =>
      screen.getAllByTestId('traffic-row').map((row) => within(row).getAllByRole('gridcell')[3]?.textContent);
    expect(skillCells()).toEqual([
      'research',
      '—',
      'x'.repeat(500),
      'chat',
      'chat',
      'translate',
      'chat',
      'chat',
      '—',
    ]);
    const input = screen.getByLabelText('Skill');
    const options = () =>
      [...document.querySelectorAll(`#${CSS.escape(input.getAttribute('list')!)} option`)].map(
        (option) => (option as HTMLOptionElement).value,
      );
    await waitFor(() => expect(options()).toEqual(['chat', 'research', 'ops', 'translate']));
    fireEvent.change(input, { target: { value: 'research' } });
    await waitFor(() =>
      expect(screen.getAllByTestId('traffic-row').map((row) => row.dataset.entryId)).toEqual(['9']),
    );
  });
});
