// @vitest-environment happy-dom
/**
 * Issue 26, item 13: Settings shows the values in effect that the settings API sends (registry URL, public
 * URL, card lifetime, unsigned calls, task retention, shutdown grace, the ports), editable where the console
 * may change them, saying "restart needed" for what is read at start and where a flag set the value; and the
 * Registry page says which registry it will use before registering.
 */
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { Registry } from '../../renderer/src/pages/Registry';
import { SettingsForm } from '../../renderer/src/pages/Settings';
import type { SettingsResponse } from '../../src/protocol/console-api.js';
import { consoleData, fakeFetch, settingsSaved, settingsView, status } from './fakes';

afterEach(cleanup);

const settings = {
  registryUrl: 'https://registry.example',
  publicUrl: 'https://agent.example.com',
  cardTTL: 300,
  allowUnsigned: true,
  taskRetentionHours: 24,
  shutdownGraceSeconds: 10,
  port: 8787,
  host: '127.0.0.1',
  consolePort: 8788,
  redisUrl: 'redis://:***@10.0.0.5:6379/0',
  keysFile: '/srv/agent/keys.json',
  metricsNoAuth: false,
};
const loaded: SettingsResponse = settingsView(settings, {
  sources: {
    ...settingsView(settings).sources,
    port: { source: 'flag', from: '--port' },
    consolePort: { source: 'settings' },
  },
  restartNeeded: ['consolePort'],
  readOnly: ['tunnelCommand', 'tunnelUrlPattern', 'metricsNoAuth', 'redisUrl', 'keysFile'],
});

function renderForm(view: SettingsResponse = loaded) {
  const { fetch, calls } = fakeFetch({
    'PUT /api/settings': ({ body }) => ({
      body: settingsSaved(settingsView({ ...settings, ...(body as object) }), Object.keys(body as object)),
    }),
  });
  render(<SettingsForm api={createApiClient({ token: 't', fetch })} loaded={view} onSaved={vi.fn()} />);
  return calls;
}

const field = (label: string) => screen.getByLabelText(label).closest('[data-field]') as HTMLElement;
const value = (label: string) => (screen.getByLabelText(label) as HTMLInputElement).value;

describe('Settings shows the values in effect', () => {
  it('each value the API sends, in its section', () => {
    renderForm();
    expect(value('Registry URL')).toBe('https://registry.example');
    expect(value('Public URL')).toBe('https://agent.example.com');
    expect(value('Card lifetime (seconds)')).toBe('300');
    expect((screen.getByLabelText('Accept unsigned calls') as HTMLInputElement).checked).toBe(true);
    expect(value('Keep finished tasks (hours)')).toBe('24');
    expect(value('Shutdown grace (seconds)')).toBe('10');
    expect(value('Agent port')).toBe('8787');
    expect(value('Agent listens on')).toBe('127.0.0.1');
    expect(value('Console port')).toBe('8788');
    const section = (id: string) => document.querySelector(`[data-section="${id}"]`) as HTMLElement;
    expect(within(section('registry')).getByLabelText('Registry URL')).toBeTruthy();
    expect(within(section('tunnel')).getByLabelText('Public URL')).toBeTruthy();
    expect(within(section('machine')).getByLabelText('Console port')).toBeTruthy();
  });

  it('says what is read at start, what waits for a restart, and what a flag set', () => {
    renderForm();
    expect(within(field('Agent port')).getByTestId('restart-hint').textContent).toBe(
      'Read at start: a change applies after a restart.',
    );
    expect(within(field('Agent port')).getByTestId('setting-source').textContent).toMatch(
      /^Set at start by --port/,
    );
    const consolePort = within(field('Console port')).getByTestId('restart-hint');
    expect(consolePort.dataset.pending).toBe('true');
    expect(consolePort.textContent).toMatch(/^Restart needed: saved, but the running agent still uses/);
    // Described by it, so a screen reader says it with the field.
    const described = screen.getByLabelText('Console port').getAttribute('aria-describedby') ?? '';
    expect(described.split(' ')).toContain(consolePort.id);
    expect(within(field('Registry URL')).queryByTestId('restart-hint')).toBeNull();
  });

  it('shows what only the machine sets as read-only, with its flag', () => {
    renderForm();
    for (const [label, flag] of [
      ['Shared state (Redis)', '--redis-url'],
      ['Key file', '--keys-file'],
      ['Metrics without the console token', '--metrics-no-auth'],
    ] as const) {
      expect(field(label).dataset.readOnly).toBe('true');
      expect(within(field(label)).getByTestId('read-only-hint').textContent).toContain(`Set with ${flag}`);
    }
    expect(value('Shared state (Redis)')).toBe('redis://:***@10.0.0.5:6379/0');
    expect(value('Metrics without the console token')).toBe('Off');
  });

  it('sends what the console may change', async () => {
    const calls = renderForm();
    fireEvent.change(screen.getByLabelText('Card lifetime (seconds)'), { target: { value: '600' } });
    fireEvent.change(screen.getByLabelText('Registry URL'), { target: { value: 'https://other.example' } });
    fireEvent.click(screen.getByLabelText('Accept unsigned calls'));
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByTestId('settings-saved')).toBeTruthy();
    expect(calls[0]?.body).toEqual({
      cardTTL: 600,
      registryUrl: 'https://other.example',
      allowUnsigned: false,
    });
  });
});

describe('the Registry page', () => {
  it('says which registry it will use before registering, and where to change it', () => {
    const value = status({
      registry: { status: 'unregistered', registryUrl: 'https://registry.example' },
    });
    render(
      <Registry
        api={createApiClient({ token: 't', fetch: fakeFetch({}).fetch })}
        data={consoleData(value)}
      />,
    );
    const target = screen.getByTestId('registry-target');
    expect(target.textContent).toContain('Registryhttps://registry.example');
    expect(
      within(target).getByRole('link', { name: 'change in Settings → Registry' }).getAttribute('href'),
    ).toBe('#/settings/registry');
    expect(screen.getByRole('button', { name: 'Register' })).toBeTruthy();
  });

  it('says when the setting names another registry than the one it is listed at', () => {
    const value = status({
      registry: {
        status: 'registered',
        registryUrl: 'https://other.example',
        record: {
          registry: 'https://registry.example',
          url: 'https://demo.example',
          id: 'agent://demo.example',
          name: 'Demo',
          registeredAt: '2026-12-07T10:00:00.000Z',
        },
      },
    });
    render(
      <Registry
        api={createApiClient({ token: 't', fetch: fakeFetch({}).fetch })}
        data={consoleData(value)}
      />,
    );
    expect(screen.getByTestId('registry-moved').textContent).toContain(
      'Listed at https://registry.example; Re-register lists it at https://other.example.',
    );
  });
});
