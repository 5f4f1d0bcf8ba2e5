// @vitest-environment happy-dom
/** Overview shows each state with its fix and runs the self-test; Keys confirms before rotating (fetch mocked). */
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import type { ConsoleData } from '../../renderer/src/hooks/useConsole';
import { Keys } from '../../renderer/src/pages/Keys';
import { Overview } from '../../renderer/src/pages/Overview';
import { initialTrafficLog } from '../../renderer/src/traffic/log';
import type { StatusResponse } from '../../src/protocol/console-api.js';
import { fakeFetch, status } from './fakes';

afterEach(cleanup);

const dataFor = (value: StatusResponse): ConsoleData => ({
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
});

describe('Overview', () => {
  it('shows the gateway diagnosis with its fix, the tunnel countdown and the registry error', () => {
    const nextTryAt = new Date(Date.now() + 30_000).toISOString();
    const value = status({
      gateway: {
        ...status().gateway,
        status: 'configured',
        url: 'http://127.0.0.1:18789',
        model: 'openclaw',
        live: true,
        problem: {
          kind: 'chat-endpoint-disabled',
          diagnosis: 'chat endpoint disabled',
          fix: 'set `gateway.http.endpoints.chatCompletions.enabled` to true and restart the gateway',
          at: new Date().toISOString(),
        },
      },
      tunnel: {
        provider: 'localtunnel',
        status: 'reconnecting',
        attempt: 2,
        nextTryAt,
        lastError: 'ECONNREFUSED',
      },
      registry: {
        status: 'unregistered',
        lastError: {
          message: 'registry unreachable',
          fix: 'check registryUrl',
          at: new Date().toISOString(),
        },
      },
      traffic: {
        perMinute: [
          { minute: '2025-01-01T12:00:00Z', accepted: 3, refused: 1 },
          { minute: '2025-01-01T12:01:00Z', accepted: 5, refused: 2 },
        ],
        accepted: 8,
        refused: 3,
      },
    });
    render(
      <Overview api={createApiClient({ token: 't', fetch: fakeFetch({}).fetch })} data={dataFor(value)} />,
    );

    const gateway = screen.getByTestId('gateway-state');
    expect(within(gateway).getByTestId('gateway-problem').textContent).toContain(
      'Fix: set gateway.http.endpoints.chatCompletions.enabled to true and restart the gateway',
    );
    expect(within(gateway).getByText('gateway.http.endpoints.chatCompletions.enabled').tagName).toBe('CODE');

    const tunnel = screen.getByTestId('tunnel-state');
    expect(within(tunnel).getByText('Reconnecting')).toBeTruthy();
    expect(within(tunnel).getByTestId('countdown').textContent).toMatch(/^in (30|29) s$/);
    expect(within(tunnel).getByText('ECONNREFUSED')).toBeTruthy();

    expect(within(screen.getByTestId('registry-state')).getByText('check registryUrl')).toBeTruthy();
    expect(screen.getByRole('img', { name: /2 minutes: 8 accepted, 3 refused/ })).toBeTruthy();
  });

  it('shows what to do when the tunnel server cannot be reached (issue 26), flags as code', () => {
    const value = status({
      tunnel: {
        provider: 'localtunnel',
        status: 'reconnecting',
        attempt: 5,
        nextTryAt: new Date(Date.now() + 60_000).toISOString(),
        lastError: 'tunnel server https://localtunnel.me is unreachable (ENOTFOUND)',
        hint: 'Check the network. Or go without localtunnel: `--tunnel none`, with `--public-url <its address>`.',
      },
    });
    render(
      <Overview api={createApiClient({ token: 't', fetch: fakeFetch({}).fetch })} data={dataFor(value)} />,
    );
    const notice = within(screen.getByTestId('tunnel-state')).getByTestId('tunnel-error');
    expect(within(notice).getByText('The tunnel server cannot be reached')).toBeTruthy();
    expect(notice.textContent).toContain('tunnel server https://localtunnel.me is unreachable (ENOTFOUND)');
    expect(notice.textContent).toContain(
      'Fix: Check the network. Or go without localtunnel: --tunnel none, with',
    );
    expect(within(notice).getByText('--tunnel none').tagName).toBe('CODE');
  });

  it('runs the self-test and shows each stage, the ones not run included', async () => {
    const { fetch, calls } = fakeFetch({
      'POST /api/selftest': {
        body: {
          ok: false,
          url: 'https://demo.example',
          totalMs: 40,
          stages: [
            { name: 'resolve', label: 'Public URL resolves', ok: true, detail: '127.0.0.1', ms: 1 },
            {
              name: 'card',
              label: 'Card fetched',
              ok: false,
              detail: 'card id does not match',
              fix: 'Stop and start the tunnel.',
              ms: 12,
            },
          ],
        },
      },
    });
    const data = dataFor(status());
    render(<Overview api={createApiClient({ token: 't', fetch })} data={data} />);
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Test' })));
    expect(calls[0]).toMatchObject({ method: 'POST', path: '/api/selftest' });
    const stages = await screen.findAllByTestId('selftest-stage');
    expect(stages.map((s) => `${s.dataset.stage}:${s.dataset.state}`)).toEqual([
      'resolve:pass',
      'card:fail',
      'signature:not-run',
      'gateway:not-run',
      'reply-signature:not-run',
    ]);
    expect(within(stages[1] as HTMLElement).getByText('card id does not match')).toBeTruthy();
    expect(within(stages[1] as HTMLElement).getByText('12 ms')).toBeTruthy();
    // What to do, beside the failed stage only.
    expect(screen.getAllByTestId('selftest-fix').map((fix) => fix.textContent)).toEqual([
      'Fix: Stop and start the tunnel.',
    ]);
    expect(within(stages[1] as HTMLElement).getByTestId('selftest-fix')).toBeTruthy();
    // The status follows: what the self-test's call did shows in the cards and the summary.
    await waitFor(() => expect(data.refreshStatus).toHaveBeenCalled());
  });
});

describe('Keys', () => {
  const keys = status({
    keys: [
      { kid: 'k1', publicKey: 'PUBLICKEY1=', createdAt: '2025-01-01T00:00:00Z', active: true, signing: true },
    ],
  });

  it('asks before rotating, says what happens to callers, and closes on Escape', async () => {
    const { fetch, calls } = fakeFetch({ 'POST /api/keys/rotate': { body: { kid: 'k2' } } });
    const data = dataFor(keys);
    render(<Keys api={createApiClient({ token: 't', fetch })} data={data} />);
    fireEvent.click(screen.getByRole('button', { name: 'Rotate key…' }));
    const dialog = screen.getByRole('dialog', { name: 'Rotate the signing key?' });
    expect(dialog.textContent).toContain('keeps verifying for one card TTL (5 min)');
    expect(document.activeElement).toBe(within(dialog).getByRole('button', { name: 'Rotate' }));

    fireEvent.keyDown(dialog, { key: 'Escape' });
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(calls).toHaveLength(0);

    fireEvent.click(screen.getByRole('button', { name: 'Rotate key…' }));
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Rotate' })));
    expect(calls[0]).toMatchObject({ method: 'POST', path: '/api/keys/rotate' });
    expect(data.refreshStatus).toHaveBeenCalled();
    expect(await screen.findByTestId('keys-result')).toBeTruthy();
  });

  it('warns that revoking the signing key rotates first', () => {
    render(<Keys api={createApiClient({ token: 't', fetch: fakeFetch({}).fetch })} data={dataFor(keys)} />);
    fireEvent.click(screen.getByRole('button', { name: 'Revoke key k1' }));
    const dialog = screen.getByRole('dialog', { name: 'Revoke key k1?' });
    expect(dialog.textContent).toContain('Signatures made with this key fail immediately');
    expect(dialog.textContent).toContain('This is the signing key, so a new key is created first');
  });
});
