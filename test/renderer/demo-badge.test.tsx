// @vitest-environment happy-dom
/** A demo run says so in the header of every page; a real run shows nothing of it (fetch and EventSource doubles). */
import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { App } from '../../renderer/src/App';
import type { StatusResponse } from '../../src/protocol/console-api.js';
import { FakeEventSource, fakeFetch, status } from './fakes';

beforeEach(() => {
  FakeEventSource.instances = [];
  sessionStorage.setItem('agent-bridge.console-token', 'secret-token');
});
afterEach(() => {
  cleanup();
  sessionStorage.clear();
  vi.unstubAllGlobals();
});

async function open(page: string, body: StatusResponse) {
  window.history.replaceState(null, '', `/#/${page}`);
  const { fetch } = fakeFetch({
    'GET /api/status': { body },
    'GET /api/traffic': { body: { entries: [], total: 0 } },
  });
  vi.stubGlobal('fetch', fetch);
  render(<App createEventSource={FakeEventSource.create} />);
  await act(async () => FakeEventSource.last.open());
}

describe('the demo badge', () => {
  it.each(['overview', 'traffic'])('is in the header on the %s page while a demo runs', async (page) => {
    await open(page, status({ demo: true }));
    const badge = await screen.findByTestId('demo-badge');
    expect(badge.closest('.topbar')).not.toBeNull();
    expect(badge.textContent).toBe('Demoa stand-in gateway answers: no model is behind the replies');
  });

  it('is not there when the agent bridges a real gateway', async () => {
    await open('overview', status());
    await screen.findByTestId('gateway-state');
    expect(screen.queryByTestId('demo-badge')).toBeNull();
  });
});
