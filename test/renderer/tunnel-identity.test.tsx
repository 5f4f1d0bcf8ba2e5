// @vitest-environment happy-dom
/**
 * Issue 16, item 5 in the console: the Overview says when the agent's address (its id) changed, what that
 * breaks and what follows, until dismissed; Settings offers stable-address presets of the command tunnel,
 * whose fields it checks and sends to POST /api/tunnel/preset (never a command line of its own).
 */
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import type { ConsoleData } from '../../renderer/src/hooks/useConsole';
import { Overview } from '../../renderer/src/pages/Overview';
import { SettingsForm } from '../../renderer/src/pages/Settings';
import { initialTrafficLog } from '../../renderer/src/traffic/log';
import type { StatusResponse } from '../../src/protocol/console-api.js';
import { renderPreset } from '../../src/tunnel/presets.js';
import { fakeFetch, settingsSaved, settingsView, status } from './fakes';

afterEach(cleanup);

const change = {
  previous: 'https://brave-lynx.loca.lt',
  url: 'https://quiet-otter.loca.lt',
  at: '2026-11-26T10:00:00.000Z',
  note: 'asked for "brave-lynx" again (this agent\'s address before) but the server handed out https://quiet-otter.loca.lt (taken by someone else meanwhile, or the server forgot it)',
};

function showOverview(value: StatusResponse) {
  const { fetch, calls } = fakeFetch({ 'POST /api/tunnel/address-change/dismiss': { body: {} } });
  const refreshStatus = vi.fn(async () => undefined);
  const data: ConsoleData = {
    status: value,
    statusError: null,
    refreshStatus,
    connection: { status: 'live', since: 0 },
    traffic: initialTrafficLog,
    trafficError: null,
    pause: vi.fn(),
    resume: vi.fn(),
    accessVersion: 0,
    skillsVersion: 0,
  };
  render(<Overview api={createApiClient({ token: 't', fetch })} data={data} />);
  return { calls, refreshStatus };
}

const online = {
  provider: 'localtunnel',
  status: 'online',
  url: change.url,
  since: change.at,
} as const;

describe('the Overview banner', () => {
  it('names the old and the new id, what breaks, that the registry follows, and how to keep one address', async () => {
    const { calls, refreshStatus } = showOverview(
      status({
        tunnel: { ...online, addressChange: change },
        registry: {
          status: 'registered',
          record: {
            registry: 'https://samvad.dev',
            url: change.url,
            id: 'agent://quiet-otter.loca.lt',
            name: 'n',
            registeredAt: change.at,
          },
        },
      }),
    );
    const banner = screen.getByTestId('address-change');
    expect(banner.textContent).toContain('agent://brave-lynx.loca.lt is now agent://quiet-otter.loca.lt');
    expect(banner.textContent).toContain(`Why: ${change.note}.`);
    expect(within(banner).getByTestId('address-change-breaks').textContent).toBe(
      'What breaks: agents that approved agent://brave-lynx.loca.lt do not know agent://quiet-otter.loca.lt: they must approve it again, so tell them the new id. Links to the old address stop working.',
    );
    expect(within(banner).getByTestId('address-change-registry').textContent).toMatch(
      /^Your registry entry follows by itself/,
    );
    expect(within(banner).getByRole('link', { name: 'Choose a stable address' }).getAttribute('href')).toBe(
      '#/settings',
    );

    fireEvent.click(within(banner).getByRole('button', { name: 'Dismiss' }));
    await waitFor(() => expect(refreshStatus).toHaveBeenCalled());
    expect(calls.map((c) => `${c.method} ${c.path}`)).toContain('POST /api/tunnel/address-change/dismiss');
  });

  it('after several changes, names the address just before this one, how many there were and the one known before them', () => {
    const chain = {
      previous: 'https://quiet-otter.loca.lt',
      url: 'https://calm-heron.loca.lt',
      at: '2026-11-26T11:00:00.000Z',
      changes: 3,
      known: 'https://brave-lynx.loca.lt',
    };
    showOverview(status({ tunnel: { ...online, url: chain.url, addressChange: chain } }));
    const banner = screen.getByTestId('address-change');
    expect(banner.textContent).toContain('agent://quiet-otter.loca.lt is now agent://calm-heron.loca.lt');
    expect(banner.textContent).not.toContain('agent://brave-lynx.loca.lt is now');
    expect(within(banner).getByTestId('address-change-count').textContent).toBe(
      'It changed 3 times since you last dismissed this notice; before these changes it was agent://brave-lynx.loca.lt.',
    );
    expect(within(banner).getByTestId('address-change-breaks').textContent).toBe(
      'What breaks: agents that approved agent://quiet-otter.loca.lt or agent://brave-lynx.loca.lt do not know agent://calm-heron.loca.lt: they must approve it again, so tell them the new id. Links to the old address stop working.',
    );
  });

  it('says there is nothing to update when the agent is not registered, and is absent without a change', () => {
    showOverview(status({ tunnel: { ...online, addressChange: change } }));
    expect(screen.queryByTestId('address-change-count')).toBeNull();
    expect(screen.getByTestId('address-change-registry').textContent).toBe(
      'You are not registered: nothing to update in the registry.',
    );
    cleanup();
    showOverview(status({ tunnel: online }));
    expect(screen.queryByTestId('address-change')).toBeNull();
  });
});

describe('the Settings presets', () => {
  const settings = { tunnel: 'localtunnel', tunnelHost: 'https://localtunnel.me', tunnelUrlPattern: 'x' };

  function showSettings() {
    const applied = renderPreset('cloudflared-named', {
      tunnel: 'agent-bridge',
      hostname: 'agent.example.com',
    });
    const after = {
      ...settings,
      tunnel: 'command',
      tunnelCommand: applied.command,
      tunnelUrlPattern: applied.urlPattern,
    };
    const { fetch, calls } = fakeFetch({
      'POST /api/tunnel/preset': {
        body: settingsSaved(settingsView(after), ['tunnel', 'tunnelCommand', 'tunnelUrlPattern']),
      },
    });
    const onSaved = vi.fn(async () => undefined);
    render(
      <SettingsForm
        api={createApiClient({ token: 't', fetch })}
        loaded={settingsView(settings)}
        onSaved={onSaved}
      />,
    );
    return { calls, onSaved, applied };
  }

  it('shows each preset with what it needs and its command line, its fields filled in as typed', () => {
    showSettings();
    const presets = screen.getByTestId('tunnel-presets');
    const select = within(presets).getByLabelText('Preset');
    expect(
      within(select)
        .getAllByRole('option')
        .map((o) => o.textContent),
    ).toEqual([
      'Choose a provider…',
      'Tailscale Funnel',
      'Cloudflare named tunnel',
      'ngrok with a reserved domain',
    ]);
    fireEvent.change(select, { target: { value: 'tailscale-funnel' } });
    expect(screen.getByTestId('tunnel-preset-needs').textContent).toMatch(/Tailscale 1\.52 or later/);
    expect(screen.getByTestId('tunnel-preset-command').textContent).toBe(
      'tailscale funnel --https=8443 {port}',
    );
    fireEvent.change(select, { target: { value: 'ngrok-domain' } });
    fireEvent.change(screen.getByLabelText('Reserved domain'), {
      target: { value: 'quiet-otter.ngrok.app' },
    });
    expect(screen.getByTestId('tunnel-preset-command').textContent).toBe(
      'ngrok http 127.0.0.1:{port} --url https://quiet-otter.ngrok.app --log stdout --log-format logfmt',
    );
  });

  it('checks the fields before sending; sends the preset and its values, and the form takes the new tunnel', async () => {
    const { calls, onSaved, applied } = showSettings();
    fireEvent.change(screen.getByLabelText('Preset'), { target: { value: 'cloudflared-named' } });
    fireEvent.change(screen.getByLabelText('Tunnel name'), { target: { value: 'agent-bridge' } });
    fireEvent.change(screen.getByLabelText('Host name'), {
      target: { value: 'agent.example.com; rm -rf ~' },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Use Cloudflare named tunnel' }));
    expect(screen.getByTestId('tunnel-preset').textContent).toContain('Host name: like agent.example.com');
    expect(calls.filter((c) => c.path === '/api/tunnel/preset')).toEqual([]);

    fireEvent.change(screen.getByLabelText('Host name'), { target: { value: 'agent.example.com' } });
    fireEvent.click(screen.getByRole('button', { name: 'Use Cloudflare named tunnel' }));
    await screen.findByTestId('tunnel-preset-applied');
    expect(calls.find((c) => c.path === '/api/tunnel/preset')?.body).toEqual({
      id: 'cloudflared-named',
      values: { tunnel: 'agent-bridge', hostname: 'agent.example.com' },
    });
    expect(onSaved).toHaveBeenCalled();
    const command = document.querySelector('[data-field="tunnelCommand"] input') as HTMLInputElement;
    expect(command.value).toBe(applied.command);
    // Applied, not pending: the settings form has nothing left to save.
    expect(screen.getByTestId('save-bar').textContent).toContain('No changes');
  });
});
