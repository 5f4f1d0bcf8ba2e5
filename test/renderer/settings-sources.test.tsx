// @vitest-environment happy-dom
/**
 * Settings shows every value in use and where it comes from (issue 16: the gateway URL field was empty with a
 * placeholder while the bridge used the address in openclaw.json), secrets only as set and from where, and
 * every timeout in seconds (sent to the console in the milliseconds it keeps).
 */
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { SettingsForm } from '../../renderer/src/pages/Settings';
import { SECTIONS } from '../../renderer/src/settings/form';
import type { SettingsResponse } from '../../src/protocol/console-api.js';
import { fakeFetch, settingsSaved, settingsView } from './fakes';

afterEach(cleanup);

const OPENCLAW = '/home/you/.openclaw/openclaw.json';
const settings = {
  gatewayAgent: 'public',
  gatewayTimeoutMs: 120000,
  outboundTimeoutMs: 45000,
  rpm: 100,
  perSender: 10,
  agentName: 'Agent Bridge',
};
const loaded: SettingsResponse = settingsView(settings, {
  sources: {
    gatewayUrl: { source: 'openclaw.json', from: OPENCLAW, value: 'http://127.0.0.1:18789' },
    gatewayToken: { source: 'openclaw.json', from: OPENCLAW },
    gatewayModel: { source: 'default', value: 'openclaw/public' },
    gatewayAgent: { source: 'env', from: 'GATEWAY_AGENT' },
    gatewayTimeoutMs: { source: 'default' },
    outboundTimeoutMs: { source: 'settings' },
    rpm: { source: 'flag', from: '--rpm' },
    perSender: { source: 'settings', overridesAtStart: '--per-sender' },
    agentName: { source: 'default' },
  },
  secrets: { gatewayToken: { set: true }, bearerTokens: { count: 0 } },
});

function renderForm(view: SettingsResponse = loaded) {
  const { fetch, calls } = fakeFetch({
    'PUT /api/settings': ({ body }) => ({
      body: settingsSaved(settingsView({ ...settings, ...(body as object) }, { sources: view.sources }), []),
    }),
  });
  render(<SettingsForm api={createApiClient({ token: 't', fetch })} loaded={view} onSaved={vi.fn()} />);
  return calls;
}

/** The field's "where it comes from" line. */
function sourceOf(label: string): string {
  const field = screen.getByLabelText(label).closest('[data-field]') as HTMLElement;
  return within(field).getByTestId('setting-source').textContent ?? '';
}

describe('where each value comes from', () => {
  it('shows the gateway URL in use from openclaw.json, though the setting is empty', () => {
    renderForm();
    const url = screen.getByLabelText('Gateway URL') as HTMLInputElement;
    expect(url.value).toBe('');
    expect(url.placeholder).toBe('http://127.0.0.1:18789');
    expect(sourceOf('Gateway URL')).toBe(
      `In use: http://127.0.0.1:18789, from OpenClaw’s config (${OPENCLAW}).`,
    );
    // Announced with the field.
    const described = url.getAttribute('aria-describedby')?.split(' ') ?? [];
    expect(described.map((id) => document.getElementById(id)?.textContent).join(' ')).toContain(
      'In use: http://127.0.0.1:18789',
    );
  });

  it('says set (from openclaw.json) for the token, never its value', () => {
    renderForm();
    expect(screen.getByTestId('gateway-token-state').textContent).toBe('set (from openclaw.json)');
  });

  it('names the flag, the variable, settings.json or the default; the derived model', () => {
    renderForm();
    expect(sourceOf('Requests per minute (all callers)')).toBe('Set at start by --rpm.');
    expect(sourceOf('Agent for callers')).toBe('Set at start by GATEWAY_AGENT.');
    expect(sourceOf('Longest call out (seconds)')).toBe('Saved in settings.json.');
    expect(sourceOf('Name')).toBe('Default.');
    expect(sourceOf('Model')).toBe('In use: openclaw/public, default.');
    expect(sourceOf('Requests per minute per sender')).toBe(
      'Saved in settings.json; at the next start --per-sender (given at start) applies again.',
    );
  });

  it('gives every field its source line when the console names one', () => {
    const every = Object.fromEntries(
      SECTIONS.flatMap((section) => section.fields).map((field) => [
        field.name,
        { source: 'default' as const },
      ]),
    );
    renderForm({ ...loaded, sources: every });
    const fields = document.querySelectorAll('[data-field]:not(.secret)');
    expect(fields.length).toBe(Object.keys(every).length);
    for (const field of fields)
      expect(within(field as HTMLElement).getByTestId('setting-source')).toBeTruthy();
  });
});

describe('timeouts in seconds', () => {
  it('shows both timeouts in seconds and sends milliseconds', async () => {
    const calls = renderForm();
    const gateway = screen.getByLabelText('Timeout (seconds)') as HTMLInputElement;
    const outbound = screen.getByLabelText('Longest call out (seconds)') as HTMLInputElement;
    expect([gateway.value, outbound.value]).toEqual(['120', '45']);
    fireEvent.change(gateway, { target: { value: '90' } });
    fireEvent.change(outbound, { target: { value: '2.5' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByTestId('settings-saved')).toBeTruthy();
    expect(calls[0]?.body).toEqual({ gatewayTimeoutMs: 90000, outboundTimeoutMs: 2500 });
    expect((screen.getByLabelText('Longest call out (seconds)') as HTMLInputElement).value).toBe('2.5');
  });

  it('checks the range in seconds before sending', async () => {
    const calls = renderForm();
    fireEvent.change(screen.getByLabelText('Longest call out (seconds)'), { target: { value: '601' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByText('Longest call out (seconds) must be between 1 and 600')).toBeTruthy();
    expect(calls).toHaveLength(0);
  });

  it('labels every timeout the operator sees in seconds', () => {
    const timeouts = SECTIONS.flatMap((section) => section.fields).filter((field) =>
      /Timeout|Ms$|Seconds$/.test(field.name),
    );
    expect(timeouts.map((field) => field.name).sort()).toEqual([
      'delegationMaxLifetimeSeconds',
      'gatewayTimeoutMs',
      'outboundTimeoutMs',
      'shutdownGraceSeconds',
    ]);
    for (const field of timeouts) expect(field.label).toMatch(/\(seconds\)$/);
  });
});
