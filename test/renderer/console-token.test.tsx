// @vitest-environment happy-dom
/**
 * Settings > Console access > New console token: after the confirmation the console replaces its token, and
 * this tab goes on with the new one (kept for the tab, used by every call and the event stream after).
 */
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { App } from '../../renderer/src/App';
import { TOKEN_STORAGE_KEY } from '../../renderer/src/api/token';
import { FakeEventSource, fakeFetch, settingsView, status } from './fakes';

const NEW_TOKEN = 'N'.repeat(43);

beforeEach(() => {
  FakeEventSource.instances = [];
  sessionStorage.clear();
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('New console token', () => {
  it('replaces the token after a confirmation, and this tab goes on with the new one', async () => {
    const { fetch, calls } = fakeFetch({
      'GET /api/status': { body: status() },
      'GET /api/traffic': { body: { entries: [], total: 0 } },
      'GET /api/settings': { body: settingsView({ rpm: 60, agentName: 'Agent Bridge' }) },
      'POST /api/console/token': { body: { token: NEW_TOKEN, file: '/data/console.json' } },
    });
    vi.stubGlobal('fetch', fetch);
    // This tab holds the old token (from its link) and shows Settings.
    sessionStorage.setItem(TOKEN_STORAGE_KEY, 'old-token');
    window.history.replaceState(null, '', '/#/settings');
    render(<App createEventSource={FakeEventSource.create} />);

    const card = await screen.findByTestId('console-token-card');
    fireEvent.click(within(card).getByRole('button', { name: 'New console token…' }));
    expect(calls.some((call) => call.path === '/api/console/token')).toBe(false);
    fireEvent.click(await screen.findByRole('button', { name: 'Replace token' }));

    expect(await screen.findByTestId('console-token-replaced')).toBeTruthy();
    const post = calls.find((call) => call.path === '/api/console/token');
    expect(post?.method).toBe('POST');
    expect(post?.headers.get('Authorization')).toBe('Bearer old-token');
    expect(sessionStorage.getItem(TOKEN_STORAGE_KEY)).toBe(NEW_TOKEN);
    // The console reloads with the new token: its calls and its event stream carry it.
    await waitFor(() => expect(calls.at(-1)?.headers.get('Authorization')).toBe(`Bearer ${NEW_TOKEN}`));
    expect(FakeEventSource.last.url).toContain(`token=${NEW_TOKEN}`);
    expect(window.location.href).not.toContain(NEW_TOKEN);
  });
});
