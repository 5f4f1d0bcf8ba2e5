// @vitest-environment happy-dom
/** The console token: from the URL fragment to sessionStorage, erased from the address bar; the way in when missing or refused. */
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { App } from '../../renderer/src/App';
import { parseTokenInput, takeToken, tokenFromHash, TOKEN_STORAGE_KEY } from '../../renderer/src/api/token';
import { FakeEventSource, fakeFetch, status } from './fakes';

describe('token from the address bar', () => {
  it('reads #token=...', () => {
    expect(tokenFromHash('#token=abc123')).toBe('abc123');
    expect(tokenFromHash('#token=a%2Bb')).toBe('a+b');
    expect(tokenFromHash('#/traffic')).toBeNull();
    expect(tokenFromHash('#token=')).toBeNull();
    expect(tokenFromHash('')).toBeNull();
  });

  it('takes a pasted token or the whole console URL', () => {
    expect(parseTokenInput('  abc  ')).toBe('abc');
    expect(parseTokenInput('http://127.0.0.1:8788/#token=xyz')).toBe('xyz');
    expect(parseTokenInput('token=xyz')).toBe('xyz');
    expect(parseTokenInput('   ')).toBeNull();
  });

  it('stores the token and erases it from the URL without a new history entry', () => {
    const stored = new Map<string, string>();
    const replaceState = vi.fn();
    const token = takeToken({
      location: { hash: '#token=s3cret', pathname: '/', search: '?x=1' },
      history: { replaceState, state: null },
      sessionStorage: {
        getItem: (key) => stored.get(key) ?? null,
        setItem: (key, value) => void stored.set(key, value),
        removeItem: (key) => void stored.delete(key),
      },
    });
    expect(token).toBe('s3cret');
    expect(stored.get(TOKEN_STORAGE_KEY)).toBe('s3cret');
    expect(replaceState).toHaveBeenCalledWith(null, '', '/?x=1');
  });

  it('falls back to the token stored for this tab, and survives disabled storage', () => {
    const env = (getItem: () => string | null) => ({
      location: { hash: '', pathname: '/', search: '' },
      history: { replaceState: vi.fn(), state: null },
      sessionStorage: { getItem, setItem: vi.fn(), removeItem: vi.fn() },
    });
    expect(takeToken(env(() => 'kept'))).toBe('kept');
    expect(
      takeToken(
        env(() => {
          throw new Error('SecurityError');
        }),
      ),
    ).toBeNull();
  });
});

describe('getting in', () => {
  beforeEach(() => {
    FakeEventSource.instances = [];
    sessionStorage.clear();
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
  });

  it('opens the console from #token=..., erases it from the address bar and uses it', async () => {
    const { fetch, calls } = fakeFetch({
      'GET /api/status': { body: status() },
      'GET /api/traffic': { body: { entries: [], total: 0 } },
    });
    vi.stubGlobal('fetch', fetch);
    window.history.replaceState(null, '', '/#token=from-url');
    render(<App createEventSource={FakeEventSource.create} />);
    expect(window.location.hash).toBe('');
    expect(window.location.href).not.toContain('from-url');
    expect(sessionStorage.getItem(TOKEN_STORAGE_KEY)).toBe('from-url');
    expect(await screen.findByTestId('gateway-state')).toBeTruthy();
    expect(calls[0]?.headers.get('Authorization')).toBe('Bearer from-url');
  });

  it('without a token, explains where to find it and takes a pasted one', async () => {
    const { fetch } = fakeFetch({
      'GET /api/status': { body: status() },
      'GET /api/traffic': { body: { entries: [], total: 0 } },
    });
    vi.stubGlobal('fetch', fetch);
    window.history.replaceState(null, '', '/');
    render(<App createEventSource={FakeEventSource.create} />);
    const screenText = screen.getByTestId('token-screen').textContent ?? '';
    expect(screenText).toContain('npm run serve');
    expect(screenText).toContain('console.json');
    expect(fetch).not.toHaveBeenCalled();

    fireEvent.change(screen.getByLabelText('Console token or URL'), {
      target: { value: 'http://127.0.0.1:8788/#token=pasted' },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Open console' }));
    expect(await screen.findByTestId('gateway-state')).toBeTruthy();
    expect(sessionStorage.getItem(TOKEN_STORAGE_KEY)).toBe('pasted');
  });

  it('says the token was refused (401) and forgets it', async () => {
    const { fetch } = fakeFetch({
      'GET /api/status': { status: 401, body: { error: { message: 'wrong token' } } },
      'GET /api/traffic': { status: 401, body: { error: { message: 'wrong token' } } },
    });
    vi.stubGlobal('fetch', fetch);
    window.history.replaceState(null, '', '/#token=stale');
    render(<App createEventSource={FakeEventSource.create} />);
    const title = await screen.findByText('The console refused this token.');
    // What to do, as one reads it: a space after the flag (JSX drops a line break after an element).
    expect(title.parentElement?.textContent).toContain(
      'It may have been replaced (Settings: New console token, or --new-console-token at start): open the console with its current link.',
    );
    expect(sessionStorage.getItem(TOKEN_STORAGE_KEY)).toBeNull();
    // The stream is closed by the effect that follows the refusal's render: on a busy machine, a moment later.
    await waitFor(() => expect(FakeEventSource.last.closed).toBe(true));
  });

  it('takes a new #token=... opened while the page is open', async () => {
    const { fetch } = fakeFetch({
      'GET /api/status': { body: status() },
      'GET /api/traffic': { body: { entries: [], total: 0 } },
    });
    vi.stubGlobal('fetch', fetch);
    window.history.replaceState(null, '', '/');
    render(<App createEventSource={FakeEventSource.create} />);
    await act(async () => {
      window.history.replaceState(null, '', '/#token=later');
      window.dispatchEvent(new HashChangeEvent('hashchange'));
    });
    expect(await screen.findByTestId('gateway-state')).toBeTruthy();
    expect(window.location.hash).toBe('');
  });
});
