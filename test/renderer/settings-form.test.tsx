// @vitest-environment happy-dom
/** The settings form sends only what changed, keeps secrets write-only and shows the console's field errors (fetch mocked). */
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { SettingsForm } from '../../renderer/src/pages/Settings';
import { changedSettings, EMPTY_SECRETS, toFormValues } from '../../renderer/src/settings/form';
import type { SettingsResponse } from '../../src/protocol/console-api.js';
import { fakeFetch } from './fakes';

afterEach(cleanup);

const settings = {
  gatewayUrl: 'http://127.0.0.1:18789',
  gatewayModel: 'openclaw',
  gatewayTimeoutMs: 120000,
  tunnel: 'localtunnel',
  tunnelHost: 'https://localtunnel.me',
  subdomain: 'quiet-otter',
  tunnelUrlPattern: 'https://[A-Za-z0-9.-]+',
  agentName: 'Agent Bridge',
  agentDescription: 'A description',
  specializations: ['research'],
  chatTrust: 'public',
  allowedPeers: [],
  rpm: 60,
  perSender: 10,
  tokensPerDay: 100000,
  keepMessageContents: false,
  // Not edited by the form: must never be sent back.
  port: 8787,
};
const loaded: SettingsResponse = {
  settings,
  secrets: { gatewayToken: { set: true }, bearerTokens: { count: 2 } },
  restartNeeded: [],
};

describe('changedSettings', () => {
  const initial = toFormValues(settings);

  it('is empty when nothing changed, whitespace and list spacing included', () => {
    const same = { ...initial, agentName: ' Agent Bridge ', specializations: '\nresearch\n\n' };
    expect(changedSettings(initial, same, EMPTY_SECRETS)).toEqual({ changes: {}, errors: [] });
  });

  it('types what changed: numbers, lists, booleans, text; an emptied optional setting becomes null', () => {
    const current = {
      ...initial,
      rpm: '120',
      allowedPeers: 'agent://a.example\n agent://b.example ',
      keepMessageContents: true,
      gatewayModel: 'other',
      subdomain: '',
    };
    expect(changedSettings(initial, current, EMPTY_SECRETS).changes).toEqual({
      rpm: 120,
      allowedPeers: ['agent://a.example', 'agent://b.example'],
      keepMessageContents: true,
      gatewayModel: 'other',
      subdomain: null,
    });
  });

  it('sends secrets only when typed', () => {
    expect(
      changedSettings(initial, initial, { gatewayToken: ' new ', bearerTokens: 'one-token\n' }).changes,
    ).toEqual({
      gatewayToken: 'new',
      bearerTokens: ['one-token'],
    });
  });

  it('refuses a number that is not one, before sending', () => {
    expect(changedSettings(initial, { ...initial, perSender: '1.5' }, EMPTY_SECRETS).errors).toEqual([
      { field: 'perSender', message: 'Requests per minute per sender must be a whole number' },
    ]);
  });
});

describe('SettingsForm', () => {
  const setup = (reply: Parameters<typeof fakeFetch>[0]['PUT /api/settings']) => {
    const { fetch, calls } = fakeFetch({ 'PUT /api/settings': reply });
    const onSaved = vi.fn(async () => undefined);
    render(<SettingsForm api={createApiClient({ token: 't', fetch })} loaded={loaded} onSaved={onSaved} />);
    return { calls, onSaved };
  };

  it('shows secrets only as set / not set, never a value', () => {
    setup({ body: {} });
    expect(screen.getByTestId('gateway-token-state').textContent).toBe('set');
    expect(screen.getByTestId('bearer-token-count').textContent).toBe('2 set');
    expect((screen.getByLabelText('New gateway token') as HTMLInputElement).value).toBe('');
    expect(screen.getByRole('button', { name: 'Save changes' })).toHaveProperty('disabled', true);
  });

  it('sends only the changed fields and says what applied and what needs a restart', async () => {
    const { calls, onSaved } = setup(({ body }) => ({
      body: {
        settings: { ...settings, ...(body as object) },
        secrets: { gatewayToken: { set: true }, bearerTokens: { count: 2 } },
        restartNeeded: ['subdomain'],
        applied: ['rpm', 'gatewayToken'],
      },
    }));
    fireEvent.change(screen.getByLabelText('Requests per minute (all callers)'), { target: { value: '90' } });
    fireEvent.change(screen.getByLabelText('Subdomain'), { target: { value: 'brave-otter' } });
    fireEvent.change(screen.getByLabelText('New gateway token'), { target: { value: 'tok-123' } });
    expect(screen.getByText('3 unsaved changes')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));

    const saved = await screen.findByTestId('settings-saved');
    expect(calls).toHaveLength(1);
    expect(calls[0]?.method).toBe('PUT');
    expect(calls[0]?.body).toEqual({ rpm: 90, subdomain: 'brave-otter', gatewayToken: 'tok-123' });
    expect(saved.textContent).toContain('Applied now: Requests per minute (all callers), Gateway token.');
    expect(saved.textContent).toContain('After a restart: Subdomain.');
    expect(screen.getByTestId('restart-banner').textContent).toContain(
      'Restart the agent to apply: Subdomain.',
    );
    expect((screen.getByLabelText('New gateway token') as HTMLInputElement).value).toBe('');
    expect(onSaved).toHaveBeenCalled();
  });

  it("shows the console's per-field errors next to their fields", async () => {
    setup({
      status: 400,
      body: {
        error: {
          message: 'Invalid settings',
          fields: [
            { field: 'rpm', message: 'rpm: must be an integer between 1 and 1000000' },
            { field: 'registryUrl', message: 'registryUrl: must be an http:// or https:// URL' },
          ],
        },
      },
    });
    fireEvent.change(screen.getByLabelText('Requests per minute (all callers)'), { target: { value: '0' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));

    const errors = await screen.findByTestId('settings-errors');
    const rpm = screen.getByLabelText('Requests per minute (all callers)');
    expect(rpm.getAttribute('aria-invalid')).toBe('true');
    const described = document.getElementById(rpm.getAttribute('aria-describedby')?.split(' ').pop() ?? '');
    expect(described?.textContent).toBe('rpm: must be an integer between 1 and 1000000');
    // A field the form does not show is still reported.
    expect(within(errors).getByText('registryUrl: must be an http:// or https:// URL')).toBeTruthy();
  });

  it('catches a number that is not one without asking the console', async () => {
    const { calls } = setup({ body: {} });
    fireEvent.change(screen.getByLabelText('Timeout (ms)'), { target: { value: 'soon' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByText('Timeout (ms) must be a whole number')).toBeTruthy();
    expect(calls).toHaveLength(0);
  });
});
