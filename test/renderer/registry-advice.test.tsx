// @vitest-environment happy-dom
/**
 * Issue 26, item 9: a registration refused because the public URL did not reach this agent gives advice that
 * follows what the tunnel's check measured since, never "wait until the tunnel is online" beside a Tunnel
 * card that says it is reachable; the registry's own refusals keep the registrar's fix.
 */
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import type { ConsoleData } from '../../renderer/src/hooks/useConsole';
import { setupSteps } from '../../renderer/src/lib/setup';
import { Overview } from '../../renderer/src/pages/Overview';
import { Registry } from '../../renderer/src/pages/Registry';
import { initialTrafficLog } from '../../renderer/src/traffic/log';
import type { ProblemView, StatusResponse } from '../../src/protocol/console-api.js';
import { fakeFetch, status } from './fakes';

afterEach(cleanup);

const URL = 'https://quiet-otter.loca.lt';
const FAILED_AT = '2026-12-07T10:00:00.000Z';
const unreachable: ProblemView = {
  message: `Not registered: ${URL} does not reach this agent (${URL}/.well-known/agent.json answered HTTP 504 from the tunnel server: it could not reach this agent), so the registry could not read its card.`,
  fix: "The tunnel's connection to this machine is down or busy; then register again.",
  at: FAILED_AT,
  cause: 'unreachable',
};
const online = (
  reachability?: NonNullable<Extract<StatusResponse['tunnel'], { status: 'online' }>['reachability']>,
) =>
  ({
    provider: 'localtunnel',
    status: 'online',
    url: URL,
    since: FAILED_AT,
    ...(reachability ? { reachability } : {}),
  }) as const;

function dataFor(value: StatusResponse): ConsoleData {
  return {
    status: value,
    statusError: null,
    refreshStatus: vi.fn(async () => undefined),
    connection: { status: 'live', since: 0 },
    traffic: initialTrafficLog,
    trafficError: null,
    pause: vi.fn(),
    resume: vi.fn(),
    accessVersion: 0,
    skillsVersion: 0,
  };
}

function registryFixShown(tunnel: StatusResponse['tunnel'], lastError: ProblemView = unreachable): string {
  const value = status({ tunnel, registry: { status: 'unregistered', lastError } });
  render(
    <Registry api={createApiClient({ token: 't', fetch: fakeFetch({}).fetch })} data={dataFor(value)} />,
  );
  const notice = screen.getByTestId('registry-error');
  const text = notice.querySelector('.notice-fix')?.textContent ?? '';
  cleanup();
  return text;
}

describe('the Registry page’s advice after an unreachable address', () => {
  it('says to register again once the tunnel’s check found the agent after the failure', () => {
    const fix = registryFixShown(online({ state: 'reachable', checkedAt: '2026-12-07T10:01:00.000Z' }));
    expect(fix).toMatch(
      /^Fix: The public address reaches this agent now \(checked at .+\): register again\.$/,
    );
    expect(fix).not.toMatch(/online/i);
  });

  it('passes on what the tunnel’s check still finds, with its fix', () => {
    const problem = `${URL}/.well-known/agent.json answered HTTP 408 (Request Timeout): a server on the way stopped waiting. Run the check again`;
    const fix = registryFixShown(
      online({ state: 'unreachable', checkedAt: '2026-12-07T10:02:00.000Z', problem }),
    );
    expect(fix).toBe(`Fix: Still not reachable: ${problem}. Then register again.`);
  });

  it('keeps the registration’s own finding when it is newer than the tunnel’s check', () => {
    const fix = registryFixShown(online({ state: 'reachable', checkedAt: '2026-12-07T09:59:00.000Z' }));
    expect(fix).toBe(`Fix: ${unreachable.fix}`);
  });

  it('follows a tunnel that is checking, reconnecting or off', () => {
    expect(registryFixShown(online({ state: 'checking' }))).toMatch(/checking its address now/);
    expect(
      registryFixShown({
        provider: 'localtunnel',
        status: 'reconnecting',
        attempt: 2,
        nextTryAt: FAILED_AT,
        lastError: 'ECONNREFUSED',
      }),
    ).toMatch(/The tunnel is connecting: register again once the Tunnel card says Reachable/);
    expect(registryFixShown({ provider: 'localtunnel', status: 'off' })).toMatch(/^Fix: Start the tunnel/);
  });

  it('keeps the registrar’s fix for the registry’s own refusal, and for an address set by hand', () => {
    const refused: ProblemView = {
      message: 'The registry answered 409.',
      fix: 'Rotate back.',
      at: FAILED_AT,
    };
    expect(registryFixShown(online({ state: 'reachable', checkedAt: FAILED_AT }), refused)).toBe(
      'Fix: Rotate back.',
    );
    expect(registryFixShown({ provider: 'none', status: 'off' })).toBe(`Fix: ${unreachable.fix}`);
  });

  it('the Overview’s Registry card and Getting started say the same', () => {
    const value = status({
      tunnel: online({ state: 'reachable', checkedAt: '2026-12-07T10:01:00.000Z' }),
      registry: { status: 'unregistered', lastError: unreachable },
    });
    render(
      <Overview api={createApiClient({ token: 't', fetch: fakeFetch({}).fetch })} data={dataFor(value)} />,
    );
    const card = within(screen.getByTestId('registry-state')).getByTestId('registry-error');
    expect(card.textContent).toMatch(/reaches this agent now .*: register again\./);
    expect(setupSteps(value).find((step) => step.id === 'registry')?.next).toMatch(
      /reaches this agent now .*: register again\./,
    );
  });
});

describe('Getting started: a public address', () => {
  it('is not done while calls through the address fail, and says why', () => {
    const step = setupSteps(
      status({
        tunnel: online({ state: 'unreachable', checkedAt: FAILED_AT, problem: 'it answered HTTP 504' }),
      }),
    ).find((one) => one.id === 'tunnel');
    expect(step).toMatchObject({
      done: false,
      next: 'The address does not reach this agent: it answered HTTP 504.',
    });
  });
});
