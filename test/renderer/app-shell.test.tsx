// @vitest-environment happy-dom
/**
 * The shell around the pages: the header's name, the Access tab's count, and the live reload of the access
 * lists when the console says they changed (fetch and EventSource doubles).
 */
import { act, cleanup, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { App } from '../../renderer/src/App';
import type { StatusResponse } from '../../src/protocol/console-api.js';
import {
  accessView,
  FakeEventSource,
  fakeFetch,
  pendingSender,
  skillsView,
  skillView,
  status,
} from './fakes';

beforeEach(() => {
  FakeEventSource.instances = [];
  sessionStorage.setItem('agent-bridge.console-token', 'secret-token');
});
afterEach(() => {
  cleanup();
  sessionStorage.clear();
  vi.unstubAllGlobals();
});

const named = (name: string): StatusResponse => {
  const base = status();
  return status({ agent: { ...base.agent, card: { ...base.agent.card, name } } });
};

async function open(page: string, routes: Parameters<typeof fakeFetch>[0]) {
  window.history.replaceState(null, '', `/#/${page}`);
  const { fetch, calls } = fakeFetch({
    'GET /api/traffic': { body: { entries: [], total: 0 } },
    ...routes,
  });
  vi.stubGlobal('fetch', fetch);
  render(<App createEventSource={FakeEventSource.create} />);
  await act(async () => FakeEventSource.last.open());
  return calls;
}

describe('the header', () => {
  it('shows only the brand while the card keeps the default name', async () => {
    await open('overview', { 'GET /api/status': { body: named('Agent Bridge') } });
    await screen.findByTestId('gateway-state');
    const header = document.querySelector('.topbar') as HTMLElement;
    expect(header.textContent).toBe('Agent BridgeLive');
    expect(within(header).getAllByText('Agent Bridge')).toHaveLength(1);
    expect(screen.queryByTestId('brand-agent')).toBeNull();
  });

  it("shows the card's name beside the brand when the operator chose one", async () => {
    await open('overview', { 'GET /api/status': { body: named('Ravi’s research assistant') } });
    expect((await screen.findByTestId('brand-agent')).textContent).toBe('Ravi’s research assistant');
  });
});

describe('the Access tab', () => {
  it('sits between Skills and Keys and counts the senders waiting', async () => {
    await open('overview', {
      'GET /api/status': { body: status({ access: { policy: 'pairing', pending: 2 } }) },
    });
    await screen.findByTestId('gateway-state');
    const tabs = within(screen.getByRole('navigation', { name: 'Pages' }))
      .getAllByRole('link')
      .map((link) => link.textContent);
    expect(tabs).toEqual(['Overview', 'Traffic', 'Skills', 'Access (2)', 'Keys', 'Registry', 'Settings']);
    expect(screen.getByRole('link', { name: 'Access (2)' }).getAttribute('href')).toBe('#/access');
  });

  it('shows no count when no one waits', async () => {
    await open('overview', { 'GET /api/status': { body: status() } });
    await screen.findByTestId('gateway-state');
    expect(screen.getByTestId('nav-access').textContent).toBe('Access');
  });

  it('reloads the lists when a state event of kind access arrives, and on a new sender', async () => {
    let pending = [pendingSender('agent://first.example')];
    const calls = await open('access', {
      'GET /api/status': { body: status() },
      'GET /api/access': () => ({ body: accessView({ pending }) }),
    });
    expect(await screen.findAllByTestId('pending-row')).toHaveLength(1);
    const loads = () => calls.filter((c) => c.path === '/api/access').length;
    const before = loads();

    pending = [...pending, pendingSender('agent://second.example')];
    await act(async () => FakeEventSource.last.emit('state', { kind: 'access' }));
    expect(await screen.findAllByTestId('pending-row')).toHaveLength(2);
    expect(loads()).toBe(before + 1);

    // Other kinds of change leave the lists alone.
    await act(async () => FakeEventSource.last.emit('state', { kind: 'keys' }));
    expect(loads()).toBe(before + 1);

    pending = [...pending, pendingSender('agent://third.example')];
    await act(async () => FakeEventSource.last.emit('access', { kind: 'new-sender', pending: pending[2] }));
    expect(await screen.findAllByTestId('pending-row')).toHaveLength(3);
    expect(loads()).toBe(before + 2);
  });
});

describe('the Skills tab', () => {
  it('opens the Skills page at #/skills, and reloads it when a state event of kind skills, settings or gateway arrives', async () => {
    let skills = [skillView('research')];
    const calls = await open('skills', {
      'GET /api/status': { body: status() },
      'GET /api/skills': () => ({ body: skillsView(skills) }),
    });
    expect(screen.getByRole('link', { name: 'Skills' }).getAttribute('href')).toBe('#/skills');
    expect(screen.getByTestId('nav-skills').getAttribute('aria-current')).toBe('page');
    expect(await screen.findAllByTestId('skill-card')).toHaveLength(2);
    const loads = () => calls.filter((c) => c.path === '/api/skills').length;
    const before = loads();

    skills = [...skills, skillView('summary')];
    await act(async () => FakeEventSource.last.emit('state', { kind: 'skills' }));
    await waitFor(() => expect(screen.getAllByTestId('skill-card')).toHaveLength(3));
    expect(loads()).toBe(before + 1);

    // Not every change is one of the skills'.
    await act(async () => FakeEventSource.last.emit('state', { kind: 'keys' }));
    await act(async () => FakeEventSource.last.emit('state', { kind: 'tunnel' }));
    expect(loads()).toBe(before + 1);
    for (const kind of ['settings', 'gateway']) {
      await act(async () => FakeEventSource.last.emit('state', { kind }));
    }
    await waitFor(() => expect(loads()).toBe(before + 3));
  });
});
