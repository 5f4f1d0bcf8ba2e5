// @vitest-environment happy-dom
/** The settings form sends only what changed, keeps secrets write-only and shows the console's field errors (fetch mocked). */
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { SettingsForm } from '../../renderer/src/pages/Settings';
import { changedSettings, EMPTY_SECRETS, toFormValues } from '../../renderer/src/settings/form';
import type { SettingsResponse } from '../../src/protocol/console-api.js';
import { fakeFetch, gatewayAgent, settingsSaved, settingsView, SNIPPET, status } from './fakes';

afterEach(cleanup);

const settings = {
  gatewayUrl: 'http://127.0.0.1:18789',
  gatewayModel: 'openclaw',
  gatewayAgent: 'public',
  gatewayTimeoutMs: 120000,
  callerInstructions: 'Be polite.',
  injectionScreen: 'flag',
  access: 'pairing',
  pendingExpiryHours: 24,
  tunnel: 'localtunnel',
  tunnelHost: 'https://localtunnel.me',
  subdomain: 'quiet-otter',
  tunnelUrlPattern: 'https://[A-Za-z0-9.-]+',
  agentName: 'Agent Bridge',
  agentDescription: 'A description',
  specializations: ['research'],
  chatTrust: 'public',
  allowedPeers: [],
  delegationMaxLifetimeSeconds: 86400,
  rpm: 60,
  perSender: 10,
  tokensPerDay: 100000,
  keepMessageContents: false,
  // Not edited by the form: must never be sent back.
  port: 8787,
};
const loaded: SettingsResponse = settingsView(settings);

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

  it('edits the calls-out policy: the policy, the allowed agents and the cap', () => {
    const withOutbound = { ...settings, outbound: 'any', outboundAllowed: [], outboundPerMinute: 30 };
    const before = toFormValues(withOutbound);
    const current = {
      ...before,
      outbound: 'allowlist',
      outboundAllowed: 'agent://friend.example\n',
      outboundPerMinute: '12',
    };
    expect(changedSettings(before, current, EMPTY_SECRETS).changes).toEqual({
      outbound: 'allowlist',
      outboundAllowed: ['agent://friend.example'],
      outboundPerMinute: 12,
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
      body: settingsSaved(
        settingsView({ ...settings, ...(body as object) }, { restartNeeded: ['subdomain'] }),
        ['rpm', 'gatewayToken'],
      ),
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
            { field: 'perSender', message: 'perSender: must be an integer between 1 and 1000000' },
            {
              field: 'gatewayTimeoutMs',
              message: 'gatewayTimeoutMs: must be an integer between 100 and 3600000 (milliseconds)',
            },
            {
              field: 'pendingExpiryHours',
              message: 'pendingExpiryHours: must be an integer between 1 and 720 (hours)',
            },
            { field: 'defaultChannel', message: 'defaultChannel: must be 1 to 64 letters' },
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
    // In the page's words (issue 26, item 9): the label it shows, seconds where it edits seconds, a unit once.
    expect(described?.textContent).toBe(
      'Requests per minute (all callers): must be an integer between 1 and 1000000',
    );
    const errorOf = (label: string) => {
      const ids = screen.getByLabelText(label).getAttribute('aria-describedby')?.split(' ') ?? [];
      return document.getElementById(ids.at(-1) ?? '')?.textContent;
    };
    expect(errorOf('Requests per minute per sender')).toBe(
      'Requests per minute per sender: must be an integer between 1 and 1000000',
    );
    expect(errorOf('Timeout (seconds)')).toBe('Timeout (seconds): must be between 0.1 and 3600 seconds');
    expect(errorOf('Request expiry (hours)')).toBe(
      'Request expiry (hours): must be an integer between 1 and 720',
    );
    // A field the form does not show is still reported.
    expect(within(errors).getByText('defaultChannel: must be 1 to 64 letters')).toBeTruthy();
  });

  it('catches a number that is not one without asking the console', async () => {
    const { calls } = setup({ body: {} });
    fireEvent.change(screen.getByLabelText('Timeout (seconds)'), { target: { value: 'soon' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    expect(
      await screen.findByText('Timeout (seconds) must be a number of seconds (at most 3 decimals)'),
    ).toBeTruthy();
    expect(calls).toHaveLength(0);
  });
});

describe('the settings of the gateway agent and of access', () => {
  const initial = toFormValues(settings);
  const section = (id: string) => document.querySelector(`[data-section="${id}"]`) as HTMLElement;
  const helpOf = (label: string) => {
    const control = screen.getByLabelText(label);
    const ids = control.getAttribute('aria-describedby')?.split(' ') ?? [];
    return ids.map((id) => document.getElementById(id)?.textContent ?? '').join(' ');
  };

  it('puts the agent, the model, the instructions and the screen under Gateway, the policy and expiry under Access', () => {
    const { fetch } = fakeFetch({});
    render(<SettingsForm api={createApiClient({ token: 't', fetch })} loaded={loaded} onSaved={vi.fn()} />);
    const gateway = within(section('gateway'));
    expect((gateway.getByLabelText('Agent for callers') as HTMLInputElement).value).toBe('public');
    expect(helpOf('Agent for callers')).toMatch(
      /The OpenClaw agent that strangers reach.*Keep it restricted/,
    );
    expect(helpOf('Model')).toMatch(
      /Leave empty for OpenClaw.*cannot check that the agent exists or which tools/,
    );
    const instructions = gateway.getByLabelText('Instructions about callers');
    expect(instructions.tagName).toBe('TEXTAREA');
    expect((instructions as HTMLTextAreaElement).value).toBe('Be polite.');
    expect(helpOf('Instructions about callers')).toMatch(/system message of every call/);
    const screenSelect = gateway.getByLabelText('Injection screen') as HTMLSelectElement;
    expect([...screenSelect.options].map((o) => o.value)).toEqual(['flag', 'refuse', 'off']);
    expect(screenSelect.value).toBe('flag');
    expect(helpOf('Injection screen')).toMatch(
      /easy to evade.*restricted agent for callers is the real defence/,
    );

    const access = within(section('access'));
    const policy = access.getByLabelText('Access policy') as HTMLSelectElement;
    expect([...policy.options].map((o) => o.value)).toEqual(['pairing', 'allowlist', 'open']);
    expect(policy.value).toBe('pairing');
    expect((access.getByLabelText('Request expiry (hours)') as HTMLInputElement).value).toBe('24');
  });

  it('sends the new settings typed; an emptied model goes back to not set', () => {
    const current = {
      ...initial,
      gatewayAgent: 'callers',
      gatewayModel: '',
      callerInstructions: ' Answer in French. ',
      injectionScreen: 'refuse',
      access: 'allowlist',
      pendingExpiryHours: '72',
    };
    expect(changedSettings(initial, current, EMPTY_SECRETS)).toEqual({
      changes: {
        gatewayAgent: 'callers',
        gatewayModel: null,
        callerInstructions: 'Answer in French.',
        injectionScreen: 'refuse',
        access: 'allowlist',
        pendingExpiryHours: 72,
      },
      errors: [],
    });
  });

  it('refuses an expiry out of range and instructions over 4000 characters, before sending', () => {
    for (const hours of ['0', '721']) {
      expect(changedSettings(initial, { ...initial, pendingExpiryHours: hours }, EMPTY_SECRETS)).toEqual({
        changes: {},
        errors: [
          { field: 'pendingExpiryHours', message: 'Request expiry (hours) must be between 1 and 720' },
        ],
      });
    }
    expect(
      changedSettings(initial, { ...initial, pendingExpiryHours: '720' }, EMPTY_SECRETS).changes,
    ).toEqual({ pendingExpiryHours: 720 });
    const long = 'x'.repeat(4001);
    expect(changedSettings(initial, { ...initial, callerInstructions: long }, EMPTY_SECRETS).errors).toEqual([
      {
        field: 'callerInstructions',
        message: 'Instructions about callers must be at most 4000 characters (it has 4001)',
      },
    ]);
    expect(
      changedSettings(initial, { ...initial, callerInstructions: 'x'.repeat(4000) }, EMPTY_SECRETS).errors,
    ).toEqual([]);
  });

  it('sends the longest delegation token lifetime as a number of seconds, within 60 s and 30 days', () => {
    const change = (seconds: string) =>
      changedSettings(initial, { ...initial, delegationMaxLifetimeSeconds: seconds }, EMPTY_SECRETS);
    expect(change('3600')).toEqual({ changes: { delegationMaxLifetimeSeconds: 3600 }, errors: [] });
    expect(change('59').errors).toEqual([
      {
        field: 'delegationMaxLifetimeSeconds',
        message: 'Longest delegation token (seconds) must be between 60 and 2592000',
      },
    ]);
  });

  it('counts the characters of the instructions as they are typed', () => {
    const { fetch } = fakeFetch({});
    render(<SettingsForm api={createApiClient({ token: 't', fetch })} loaded={loaded} onSaved={vi.fn()} />);
    const field = screen.getByLabelText('Instructions about callers');
    fireEvent.change(field, { target: { value: 'x'.repeat(4001) } });
    const count = field.parentElement?.querySelector('.char-count') as HTMLElement;
    expect(count.textContent).toBe('4001 of 4000 characters');
    expect(count.className).toContain('over');
  });

  it('shows the red host-tools warning in the Gateway section, with the snippet', () => {
    const { fetch } = fakeFetch({});
    const base = status();
    const exposed = status({
      gateway: {
        ...base.gateway,
        agent: gatewayAgent({
          id: 'main',
          tools: { verdict: 'exposes-host-tools', tools: ['exec', 'apply_patch'], detail: 'profile "full"' },
        }),
      },
    });
    render(
      <SettingsForm
        api={createApiClient({ token: 't', fetch })}
        loaded={loaded}
        onSaved={vi.fn()}
        status={exposed}
      />,
    );
    const warning = within(section('gateway')).getByTestId('host-tools-warning');
    expect(warning.className).toContain('error');
    expect(within(warning).getByText('exec')).toBeTruthy();
    expect(within(warning).getByText('apply_patch')).toBeTruthy();
    expect(within(warning).getByTestId('agent-snippet').textContent).toBe(SNIPPET);
    cleanup();
    render(
      <SettingsForm
        api={createApiClient({ token: 't', fetch })}
        loaded={loaded}
        onSaved={vi.fn()}
        status={status()}
      />,
    );
    expect(screen.queryByTestId('host-tools-warning')).toBeNull();
  });
});
