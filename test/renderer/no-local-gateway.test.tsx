// @vitest-environment happy-dom
/**
 * Getting started on a machine with no OpenClaw gateway (an installed app, no terminal): the step links to
 * OpenClaw's install page and offers a remote gateway's address and token, saved as the gateway settings.
 */
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { OPENCLAW_INSTALL_URL, remoteGatewayProblem, setupSteps } from '../../renderer/src/lib/setup';
import { Overview } from '../../renderer/src/pages/Overview';
import type { StatusResponse } from '../../src/protocol/console-api.js';
import { consoleData, fakeFetch, settingsSaved, settingsView, status } from './fakes';

afterEach(cleanup);

const at = new Date().toISOString();
/** Nothing configured and no ~/.openclaw/openclaw.json: the default loopback address, no token. */
const nothingHere = status({
  gateway: {
    ...status().gateway,
    status: 'missing GATEWAY_TOKEN',
    condition: 'not-configured',
    url: 'http://127.0.0.1:18789',
    live: undefined,
    problem: { kind: 'not-configured', diagnosis: 'The gateway is not configured.', fix: 'Set it.', at },
  },
});
const withGateway = (gateway: Partial<StatusResponse['gateway']>): StatusResponse =>
  status({
    gateway: { ...status().gateway, status: 'configured', condition: 'down', live: false, ...gateway },
  });

describe('when the Getting started step offers a gateway elsewhere', () => {
  it('offers it when no gateway was found on this machine', () => {
    expect(setupSteps(nothingHere)[0]).toMatchObject({ id: 'gateway', done: false, offer: 'remote-gateway' });
    expect(
      setupSteps(status({ gateway: { ...nothingHere.gateway, status: 'missing GATEWAY_URL', url: '' } }))[0]
        ?.offer,
    ).toBe('remote-gateway');
  });

  it('offers it when nothing answers at a loopback address, not for a remote gateway or another problem', () => {
    const unreachable = (url: string) =>
      withGateway({
        url,
        problem: { kind: 'unreachable', diagnosis: 'Could not reach.', fix: 'Start it.', at },
      });
    expect(setupSteps(unreachable('http://127.0.0.1:18789'))[0]?.offer).toBe('remote-gateway');
    expect(setupSteps(unreachable('http://localhost:18789'))[0]?.offer).toBe('remote-gateway');
    expect(setupSteps(withGateway({ url: 'http://127.0.0.1:18789', problem: undefined }))[0]?.offer).toBe(
      'remote-gateway',
    );
    // A gateway elsewhere that does not answer: its own fix, not "install OpenClaw".
    expect(setupSteps(unreachable('https://gateway.example.com'))[0]?.offer).toBeUndefined();
    // A gateway here that answers with a problem (its token, its chat endpoint) is there: fix it.
    const refused = withGateway({
      url: 'http://127.0.0.1:18789',
      live: true,
      condition: 'token-wrong',
      problem: { kind: 'unauthorized', diagnosis: 'Token refused.', fix: 'Copy it.', at },
    });
    expect(setupSteps(refused)[0]?.offer).toBeUndefined();
    expect(setupSteps(status())[0]?.offer).toBeUndefined();
  });

  it('checks the address and token before sending them', () => {
    expect(remoteGatewayProblem('gateway.example.com', 't')).toMatch(/http:\/\/ or https:\/\/ URL/);
    expect(remoteGatewayProblem('ftp://gateway.example.com', 't')).toMatch(/http:\/\/ or https:\/\/ URL/);
    expect(remoteGatewayProblem('https://gateway.example.com', '  ')).toMatch(/^Enter the gateway's token/);
    expect(remoteGatewayProblem(' https://gateway.example.com ', 'secret')).toBeUndefined();
  });
});

describe('the Overview with no gateway on this machine', () => {
  const renderOverview = (routes: Parameters<typeof fakeFetch>[0] = {}) => {
    const { fetch, calls } = fakeFetch({ 'GET /api/mcp': { status: 404, body: {} }, ...routes });
    const api = createApiClient({ token: 'tok', fetch });
    const data = consoleData(nothingHere);
    render(<Overview api={api} data={data} />);
    const step = screen
      .getAllByTestId('setup-step')
      .find((element) => element.getAttribute('data-step') === 'gateway')!;
    return { step, calls, data };
  };

  it("links to OpenClaw's install page and saves a remote gateway's address and token", async () => {
    const saved = settingsSaved(
      settingsView(
        { gatewayUrl: 'https://gateway.example.com' },
        { secrets: { gatewayToken: { set: true }, bearerTokens: { count: 0 } } },
      ),
      ['gatewayUrl', 'gatewayToken'],
    );
    const { step, calls, data } = renderOverview({ 'PUT /api/settings': { body: saved } });
    const offer = within(step).getByTestId('no-local-gateway');
    const install = within(offer).getByRole('link', { name: 'Install OpenClaw' });
    expect(install.getAttribute('href')).toBe(OPENCLAW_INSTALL_URL);
    expect(install.getAttribute('target')).toBe('_blank');

    const token = within(offer).getByLabelText('Gateway token');
    expect(token.getAttribute('type')).toBe('password');
    fireEvent.change(within(offer).getByLabelText('Gateway address'), {
      target: { value: 'https://gateway.example.com' },
    });
    fireEvent.change(token, { target: { value: 'gw-secret' } });
    await act(async () => {
      fireEvent.click(within(offer).getByRole('button', { name: 'Connect' }));
    });

    expect(calls.filter((call) => call.method === 'PUT')).toEqual([
      expect.objectContaining({
        path: '/api/settings',
        body: { gatewayUrl: 'https://gateway.example.com', gatewayToken: 'gw-secret' },
      }),
    ]);
    // Write-only: the token field is emptied, and the status is read again.
    expect((token as HTMLInputElement).value).toBe('');
    expect(within(offer).getByTestId('remote-gateway-saved').textContent).toBe(
      'Saved: the bridge now checks the gateway at https://gateway.example.com.',
    );
    expect(data.refreshStatus).toHaveBeenCalled();
  });

  it('says what to fix, before sending and after the console refuses', async () => {
    const refused = {
      status: 400,
      body: {
        error: {
          code: 'INVALID_SETTINGS',
          message: 'Invalid settings; nothing was saved: gatewayUrl: must be an http:// or https:// URL.',
          fix: 'Correct the fields listed and save again.',
          fields: [{ field: 'gatewayUrl', message: 'gatewayUrl: must be an http:// or https:// URL' }],
        },
      },
    };
    const { step, calls } = renderOverview({ 'PUT /api/settings': refused });
    const offer = within(step).getByTestId('no-local-gateway');
    fireEvent.change(within(offer).getByLabelText('Gateway address'), {
      target: { value: 'https://gw.example.com' },
    });
    await act(async () => {
      fireEvent.click(within(offer).getByRole('button', { name: 'Connect' }));
    });
    expect(within(offer).getByTestId('field-error').textContent).toMatch(/^Enter the gateway's token/);
    expect(calls.filter((call) => call.method === 'PUT')).toEqual([]);

    fireEvent.change(within(offer).getByLabelText('Gateway token'), { target: { value: 'gw-secret' } });
    await act(async () => {
      fireEvent.click(within(offer).getByRole('button', { name: 'Connect' }));
    });
    expect(within(offer).getByTestId('field-error').textContent).toBe(
      'Invalid settings; nothing was saved: gatewayUrl: must be an http:// or https:// URL. Correct the fields listed and save again.',
    );
    expect(within(offer).queryByTestId('remote-gateway-saved')).toBeNull();
  });

  it('is gone once the gateway here answers', () => {
    const { fetch } = fakeFetch({ 'GET /api/mcp': { status: 404, body: {} } });
    render(<Overview api={createApiClient({ token: 'tok', fetch })} data={consoleData(status())} />);
    expect(screen.queryByTestId('no-local-gateway')).toBeNull();
  });
});
