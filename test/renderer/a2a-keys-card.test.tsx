// @vitest-environment happy-dom
/**
 * The A2A keys on the Access page: the list, issuing (the key shown once, with what the caller does with it)
 * and revoking (after a confirmation). The console is a scripted fetch; its real API has its own tests.
 */
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { A2AKeysCard } from '../../renderer/src/components/A2AKeysCard';
import type { AccessPolicy } from '../../src/protocol/console-api.js';
import type { A2AKeysResponse, A2AKeyView } from '../../src/protocol/console-api.js';
import { entry, fakeFetch, type Reply, type Route } from './fakes';

afterEach(cleanup);

const HOUR = 3600_000;
const SECRET = `abk_0123456789ab_${'Q'.repeat(43)}`;

function key(id: string, overrides: Partial<A2AKeyView> = {}): A2AKeyView {
  return {
    id,
    name: `Agent ${id}`,
    caller: `a2a-key:${id}`,
    createdAt: new Date(Date.now() - 48 * HOUR).toISOString(),
    limits: {},
    calls: 0,
    status: 'active',
    ...overrides,
  };
}

const RESEARCH = key('0123456789ab', {
  name: 'Research agent',
  calls: 1234,
  lastUsedAt: new Date(Date.now() - 5 * 60_000).toISOString(),
  expiresAt: new Date(Date.now() + 30 * 24 * HOUR).toISOString(),
  limits: { requestsPerMinute: 5, tokensPerDay: 20_000 },
  skills: ['research', 'code-runner'],
});
const OLD = key('aaaaaaaaaaaa', {
  name: 'Old partner',
  status: 'revoked',
  revokedAt: new Date().toISOString(),
});
const TRIAL = key('bbbbbbbbbbbb', { name: 'Trial', status: 'expired', expiresAt: new Date().toISOString() });

const listed = (keys: A2AKeyView[]): A2AKeysResponse => ({
  keys,
  defaults: { requestsPerMinute: 10, tokensPerDay: 100_000 },
});

function setup(routes: Record<string, Reply | Route>, policy: AccessPolicy = 'pairing') {
  const { fetch, calls } = fakeFetch(routes);
  const api = createApiClient({ token: 't', fetch });
  const view = render(<A2AKeysCard api={api} version={0} policy={policy} />);
  return {
    calls,
    api,
    view,
    rerender: (version: number) => view.rerender(<A2AKeysCard api={api} version={version} policy={policy} />),
  };
}

const row = (id: string) =>
  screen.getAllByTestId('a2a-key-row').find((r) => r.dataset.keyId === id) as HTMLElement;
const cells = (id: string) =>
  within(row(id))
    .getAllByRole('cell')
    .map((cell) => cell.textContent);

describe('A2A keys: the list', () => {
  it('shows each key: name, id and limits, skills, created, last used, calls, expiry; revoked and expired ones marked', async () => {
    setup({ 'GET /api/a2a/keys': { body: listed([RESEARCH, OLD, TRIAL]) } });
    await screen.findAllByTestId('a2a-key-row');
    expect(within(row(RESEARCH.id)).getByRole('rowheader').textContent).toBe(
      'Research agent 0123456789ab · 5 requests/min, 20,000 tokens/day',
    );
    const [skills, created, lastUsed, calls, expires, action] = cells(RESEARCH.id);
    // Scoped: exactly these skills; unscoped: every public and approved one.
    expect(skills).toBe('research, code-runner');
    expect(created).toMatch(/^2 d ago \(.+\)$/);
    expect(lastUsed).toMatch(/^5 min ago \(.+\)$/);
    expect(calls).toBe('1,234');
    expect(expires).toMatch(/^in 30 d \(.+\)$/);
    expect(action).toBe('Revoke…');
    expect(cells(OLD.id)).toEqual([
      'every public and approved skill',
      expect.any(String),
      'never',
      '0',
      'never',
      'revoked less than a minute ago',
    ]);
    expect(cells(TRIAL.id).at(-1)).toBe('expired');
    expect(screen.getByText('1 in use')).toBeTruthy();
    expect(within(row(OLD.id)).queryByRole('button')).toBeNull();
    expect(screen.getByTestId('a2a-keyless').textContent).toBe(
      'A2A callers without a key are refused, and told to ask you for one.',
    );
  });

  it('says what no key means under the open policy, and what to do when there is none', async () => {
    setup({ 'GET /api/a2a/keys': { body: listed([]) } }, 'open');
    expect((await screen.findByTestId('empty-state')).textContent).toContain('No A2A keys yet');
    expect(screen.getByTestId('a2a-keyless').textContent).toMatch(
      /^The policy is open: A2A callers without a key get in too/,
    );
  });

  it('says when a revoked key was last refused, from Traffic: its holder still uses it (issue 26, item 7)', async () => {
    const { fetch } = fakeFetch({ 'GET /api/a2a/keys': { body: listed([RESEARCH, OLD, TRIAL]) } });
    const api = createApiClient({ token: 't', fetch });
    const refusedAt = new Date(Date.now() - 2 * 60_000).toISOString();
    const traffic = [
      entry(3, { protocol: 'a2a', sender: `a2a-key:${RESEARCH.id}`, callerName: RESEARCH.name }),
      entry(2, { protocol: 'a2a', sender: `a2a-key:${OLD.id}`, keyStatus: 'revoked', time: refusedAt }),
      entry(1, {
        protocol: 'a2a',
        sender: `a2a-key:${OLD.id}`,
        keyStatus: 'revoked',
        time: '2025-01-01T00:00:00Z',
      }),
    ];
    render(<A2AKeysCard api={api} version={0} policy="pairing" traffic={traffic} />);
    await screen.findAllByTestId('a2a-key-row');
    const still = within(row(OLD.id)).getByTestId('a2a-key-still-used');
    expect(still.textContent).toMatch(/^Still used: refused 2 min ago \(.+\)$/);
    expect(within(row(RESEARCH.id)).queryByTestId('a2a-key-still-used')).toBeNull();
    expect(within(row(TRIAL.id)).queryByTestId('a2a-key-still-used')).toBeNull();
  });

  it('reloads when the access lists changed elsewhere (another window, a replica, the CLI)', async () => {
    let keys = [RESEARCH];
    const { rerender } = setup({ 'GET /api/a2a/keys': () => ({ body: listed(keys) }) });
    await screen.findAllByTestId('a2a-key-row');
    keys = [key('cccccccccccc', { name: 'From the CLI' }), RESEARCH];
    rerender(1);
    expect(await screen.findByText('From the CLI')).toBeTruthy();
  });
});

describe('A2A keys: issuing one', () => {
  it('sends the name, expiry and limits, then shows the key once with how it is used; Done forgets it', async () => {
    const issued = key('dddddddddddd', { name: 'Weather agent', limits: { requestsPerMinute: 5 } });
    const { calls } = setup({
      'GET /api/a2a/keys': { body: listed([RESEARCH]) },
      'POST /api/a2a/keys': {
        status: 201,
        body: { ...listed([issued, RESEARCH]), key: issued, secret: SECRET },
      },
    });
    await screen.findAllByTestId('a2a-key-row');
    expect(screen.getByLabelText('Requests per minute').getAttribute('placeholder')).toBe('default: 10');
    expect(screen.getByLabelText('Tokens per day').getAttribute('placeholder')).toBe('default: 100,000');
    fireEvent.change(screen.getByLabelText('Name of the agent it is for'), {
      target: { value: '  Weather agent ' },
    });
    fireEvent.change(screen.getByLabelText('Expires'), { target: { value: '30' } });
    fireEvent.change(screen.getByLabelText('Requests per minute'), { target: { value: '5' } });
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Issue key' })));

    const sent = calls.find((call) => call.method === 'POST');
    expect(sent?.path).toBe('/api/a2a/keys');
    const body = sent?.body as { name: string; expiresAt: string; limits: object };
    expect(body.name).toBe('Weather agent');
    expect(body.limits).toEqual({ requestsPerMinute: 5 });
    expect(Date.parse(body.expiresAt) - Date.now()).toBeGreaterThan(30 * 24 * HOUR - 60_000);
    expect(Object.keys(body).sort()).toEqual(['expiresAt', 'limits', 'name']);

    const panel = screen.getByTestId('issued-key');
    expect(within(panel).getByTestId('issued-secret').textContent).toBe(SECRET);
    expect(panel.textContent).toContain('Copy it now: it will not be shown again.');
    expect(panel.textContent).toContain(`Authorization: Bearer ${SECRET}`);
    expect(within(panel).getByRole('button', { name: 'Copy the key' })).toBeTruthy();
    expect(within(panel).getByRole('button', { name: 'Copy the header' })).toBeTruthy();
    // Focus goes to the key, so a screen reader announces it.
    expect(document.activeElement?.textContent).toBe('The key for “Weather agent”');
    expect(screen.getAllByTestId('a2a-key-row').map((r) => r.dataset.keyId)).toEqual([
      issued.id,
      RESEARCH.id,
    ]);
    expect((screen.getByLabelText('Name of the agent it is for') as HTMLInputElement).value).toBe('');

    fireEvent.click(within(panel).getByRole('button', { name: 'Done: hide the key' }));
    expect(screen.queryByTestId('issued-key')).toBeNull();
    expect(document.body.textContent).not.toContain(SECRET);
  });

  it('sends no request without a name, and shows the console’s words under the field at fault', async () => {
    const { calls } = setup({
      'GET /api/a2a/keys': { body: listed([]) },
      'POST /api/a2a/keys': {
        status: 400,
        body: {
          error: {
            message:
              'The key was not issued: limits.tokensPerDay must be a whole number from 1 to 1,000,000,000.',
            fix: 'Correct the fields named and issue again.',
            fields: [
              { field: 'limits.tokensPerDay', message: 'must be a whole number from 1 to 1,000,000,000' },
            ],
          },
        },
      },
    });
    await screen.findByTestId('empty-state');
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Issue key' })));
    expect(calls.filter((call) => call.method === 'POST')).toEqual([]);
    const name = screen.getByLabelText('Name of the agent it is for');
    expect(name.getAttribute('aria-invalid')).toBe('true');
    expect(document.getElementById(name.getAttribute('aria-describedby') ?? '')?.textContent).toBe(
      'Name the agent the key is for.',
    );

    fireEvent.change(name, { target: { value: 'Greedy' } });
    fireEvent.change(screen.getByLabelText('Tokens per day'), { target: { value: '0' } });
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Issue key' })));
    const tokens = screen.getByLabelText('Tokens per day');
    expect(tokens.getAttribute('aria-invalid')).toBe('true');
    expect(document.getElementById(tokens.getAttribute('aria-describedby') ?? '')?.textContent).toBe(
      'must be a whole number from 1 to 1,000,000,000',
    );
    expect(screen.queryByTestId('issued-key')).toBeNull();
  });

  it('says why when the console refuses for another reason (Redis down)', async () => {
    setup({
      'GET /api/a2a/keys': { body: listed([]) },
      'POST /api/a2a/keys': {
        status: 503,
        body: {
          error: { message: 'Not issued: Redis does not answer.', fix: 'Try again once Redis answers.' },
        },
      },
    });
    await screen.findByTestId('empty-state');
    fireEvent.change(screen.getByLabelText('Name of the agent it is for'), { target: { value: 'Partner' } });
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Issue key' })));
    const notice = screen.getByRole('alert');
    expect(notice.textContent).toBe(
      'No key issuedNot issued: Redis does not answer.Fix: Try again once Redis answers.',
    );
    // What was typed stays, to try again.
    expect((screen.getByLabelText('Name of the agent it is for') as HTMLInputElement).value).toBe('Partner');
  });
});

describe('A2A keys: revoking one', () => {
  it('asks first (Cancel sends nothing), then revokes and shows the key as revoked', async () => {
    const revoked = { ...RESEARCH, status: 'revoked' as const, revokedAt: new Date().toISOString() };
    const { calls } = setup({
      'GET /api/a2a/keys': { body: listed([RESEARCH]) },
      'POST /api/a2a/keys/0123456789ab/revoke': { body: { ...listed([revoked]), key: revoked } },
    });
    await screen.findAllByTestId('a2a-key-row');
    const button = screen.getByRole('button', { name: 'Revoke the key for Research agent (0123456789ab)' });
    fireEvent.click(button);
    let dialog = screen.getByRole('dialog', { name: 'Revoke the key for “Research agent”?' });
    expect(dialog.textContent).toContain('refused from the next one on, at every replica within a second');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(calls.filter((call) => call.method === 'POST')).toEqual([]);

    fireEvent.click(button);
    dialog = screen.getByRole('dialog', { name: 'Revoke the key for “Research agent”?' });
    await act(async () => fireEvent.click(within(dialog).getByRole('button', { name: 'Revoke key' })));
    expect(calls.filter((call) => call.method === 'POST').map((call) => call.path)).toEqual([
      '/api/a2a/keys/0123456789ab/revoke',
    ]);
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(row(RESEARCH.id).dataset.status).toBe('revoked');
    expect(screen.getByTestId('a2a-key-result').textContent).toBe(
      'Revoked the key for “Research agent” (0123456789ab): its requests are refused from now on.',
    );
  });

  it('keeps the dialog open with the reason when the console refuses', async () => {
    setup({
      'GET /api/a2a/keys': { body: listed([RESEARCH]) },
      'POST /api/a2a/keys/0123456789ab/revoke': {
        status: 503,
        body: {
          error: { message: 'Not revoked: Redis does not answer.', fix: 'Try again once Redis answers.' },
        },
      },
    });
    await screen.findAllByTestId('a2a-key-row');
    fireEvent.click(screen.getByRole('button', { name: /^Revoke the key for Research agent/ }));
    const dialog = screen.getByRole('dialog');
    await act(async () => fireEvent.click(within(dialog).getByRole('button', { name: 'Revoke key' })));
    expect(within(dialog).getByRole('alert').textContent).toContain('Not revoked: Redis does not answer.');
    expect(row(RESEARCH.id).dataset.status).toBe('active');
  });
});
