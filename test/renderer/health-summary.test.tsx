// @vitest-environment happy-dom
/**
 * Issue 26, item 15 on the Overview: one line at the top says whether it works, from the checks that ran
 * (reachable from outside, gateway answering, callers' agent restricted, approvals waiting), in the tray's
 * words; the Tunnel card's "Online" no longer stands alone beside a failing call.
 */
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { Overview } from '../../renderer/src/pages/Overview';
import type { StatusResponse } from '../../src/protocol/console-api.js';
import { consoleData, fakeFetch, status } from './fakes';

afterEach(cleanup);

const URL = 'https://quiet-otter.loca.lt';
const onlineAt = (reachability: Extract<StatusResponse['tunnel'], { status: 'online' }>['reachability']) =>
  ({
    provider: 'localtunnel',
    status: 'online',
    url: URL,
    since: '2026-12-07T10:00:00Z',
    reachability,
  }) as const;

function show(value: StatusResponse) {
  render(
    <Overview api={createApiClient({ token: 't', fetch: fakeFetch({}).fetch })} data={consoleData(value)} />,
  );
  return screen.getByTestId('health-summary');
}

const base = status();
const working = (change: Partial<StatusResponse> = {}) =>
  status({
    tunnel: onlineAt({ state: 'reachable', checkedAt: '2026-12-07T10:00:05Z' }),
    gateway: {
      ...base.gateway,
      live: true,
      condition: 'up',
      agent: { ...base.gateway.agent, check: 'present', tools: { verdict: 'restricted', detail: 'minimal' } },
    },
    ...change,
  });

const checks = (summary: HTMLElement) =>
  within(summary)
    .getAllByRole('listitem')
    .map((item) => `${item.dataset.check}:${item.dataset.state}`);

describe('the Overview’s first line', () => {
  it('says it works, and what was checked, when every check passed', () => {
    const summary = show(working());
    expect(summary.dataset.health).toBe('online');
    expect(within(summary).getByRole('status').textContent).toBe(
      `OnlineOnline at ${URL}: reachable from outside`,
    );
    expect(checks(summary)).toEqual(['reachable:ok', 'gateway:ok', 'agent:ok', 'approvals:ok']);
    expect(summary.textContent).toContain('Reachable from outside (yes)');
    // It comes first: before any banner or card.
    expect(document.querySelector('.page.overview > :not(h1)')).toBe(summary);
  });

  it('says what fails first when the tunnel is connected but calls through it fail', () => {
    const summary = show(
      working({
        tunnel: onlineAt({
          state: 'unreachable',
          checkedAt: '2026-12-07T10:00:05Z',
          problem: `${URL}/.well-known/agent.json answered HTTP 408`,
        }),
        access: { policy: 'pairing', pending: 2 },
      }),
    );
    expect(summary.dataset.health).toBe('degraded');
    expect(within(summary).getByRole('status').textContent).toBe(
      `DegradedNot reachable at ${URL}: ${URL}/.well-known/agent.json answered HTTP 408`,
    );
    expect(checks(summary)).toEqual(['reachable:problem', 'gateway:ok', 'agent:ok', 'approvals:attention']);
    expect(summary.textContent).toContain('2 senders wait for your approval');
  });

  it('says the gateway fails when the self-test’s call did', () => {
    const summary = show(
      working({
        gateway: {
          ...working().gateway,
          condition: 'failing',
          problem: {
            kind: 'endpoint-disabled',
            diagnosis: 'The gateway answered 404 to POST /v1/chat/completions.',
            fix: 'Enable it.',
            at: '2026-12-07T10:00:00Z',
          },
        },
      }),
    );
    expect(summary.dataset.health).toBe('degraded');
    expect(summary.textContent).toContain('The gateway answered 404 to POST /v1/chat/completions.');
    expect(checks(summary)).toEqual(['reachable:ok', 'gateway:problem', 'agent:ok', 'approvals:ok']);
  });
});
