// @vitest-environment happy-dom
/**
 * Calls out on the Access page: the outbound policy, the agents the operator's agent may call, and the
 * credentials kept for A2A agents (write-only).
 */
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { CallsOutCard } from '../../renderer/src/components/CallsOutCard';
import type { OutboundBudgetView, OutboundCredentialView } from '../../src/protocol/console-api.js';
import { fakeFetch, settingsView } from './fakes';

afterEach(cleanup);

const KEPT: OutboundCredentialView = {
  url: 'https://kept.example',
  scheme: 'apiKey',
  header: 'X-Api-Key',
  addedAt: '2026-01-02T03:04:05.000Z',
};

const BUDGETS: OutboundBudgetView = {
  day: '2026-05-04',
  resetsAt: '2026-05-05T00:00:00.000Z',
  callsPerDay: 100,
  tokensPerDay: 0,
  callees: [
    { callee: 'agent://loop.example', calls: 100, tokens: 52_000, spent: 'calls' },
    { callee: 'agent://weather.example', calls: 3, tokens: 410 },
  ],
};

function show(
  initial: Record<string, unknown>,
  credentials: OutboundCredentialView[] = [],
  budgets: OutboundBudgetView = { ...BUDGETS, callees: [] },
) {
  let current = { outboundPerMinute: 30, outboundTimeoutMs: 45_000, ...initial };
  let kept = credentials;
  const { fetch, calls } = fakeFetch({
    'GET /api/settings': () => ({ body: settingsView(current) }),
    'PUT /api/settings': ({ body }) => {
      current = { ...current, ...(body as Record<string, unknown>) };
      return { body: { ...settingsView(current), applied: Object.keys(body as object) } };
    },
    'GET /api/outbound/credentials': () => ({ body: { credentials: kept } }),
    'GET /api/outbound/budgets': () => ({ body: budgets }),
    'POST /api/outbound/credentials': ({ body }) => {
      const { url, scheme, header } = body as OutboundCredentialView;
      if (!url.startsWith('https://')) {
        const message = "The URL must be the agent's https base URL.";
        return { status: 400, body: { error: { message, fields: [{ field: 'url', message }] } } };
      }
      kept = [...kept, { url, scheme, ...(header ? { header } : {}), addedAt: KEPT.addedAt }];
      return { body: { credentials: kept } };
    },
    'POST /api/outbound/credentials/remove': ({ body }) => {
      kept = kept.filter((credential) => credential.url !== (body as { url: string }).url);
      return { body: { credentials: kept } };
    },
  });
  const onSaved = vi.fn(async () => undefined);
  render(<CallsOutCard api={createApiClient({ token: 't', fetch })} onSaved={onSaved} />);
  return { calls, onSaved };
}

const puts = (calls: ReturnType<typeof show>['calls']) =>
  calls.filter((call) => call.method === 'PUT').map((call) => call.body);

describe('Calls out', () => {
  it('saves the outbound policy', async () => {
    const { calls, onSaved } = show({ outbound: 'any', outboundAllowed: [] });
    const card = await screen.findByTestId('calls-out');
    expect(
      await within(card).findByText(
        /At most 30 requests a minute \(each card fetch, call and task poll\), each call within 45 s/,
      ),
    ).toBeTruthy();
    fireEvent.click(within(screen.getByTestId('outbound-off')).getByRole('radio'));
    await act(async () => fireEvent.click(within(card).getByRole('button', { name: 'Save' })));
    expect(puts(calls)).toEqual([{ outbound: 'off' }]);
    expect(onSaved).toHaveBeenCalled();
    expect(within(card).getByTestId('outbound-off').textContent).toContain('current');
  });

  it('refuses or uses unsigned replies (agents built with the SDKs sign none), saved at once', async () => {
    const { calls } = show({ outbound: 'any', outboundAllowed: [] });
    const card = await screen.findByTestId('calls-out');
    const box = (await within(card).findByLabelText(
      'Refuse replies that carry no signature',
    )) as HTMLInputElement;
    expect(box.checked).toBe(false);
    expect(within(card).getByText(/used and marked unsigned/)).toBeTruthy();
    await act(async () => fireEvent.click(box));
    expect(puts(calls)).toEqual([{ outboundRequireSignedReplies: true }]);
    expect(((await within(card).findByTestId('outbound-require-signed')) as HTMLInputElement).checked).toBe(
      true,
    );
    expect(within(card).getByText(/every unsigned reply is refused/)).toBeTruthy();
  });

  it('adds and removes agents on the list (agent:// ids and A2A https URLs), and refuses anything else', async () => {
    const { calls } = show({ outbound: 'allowlist', outboundAllowed: ['agent://a.example'] });
    const card = await screen.findByTestId('calls-out');
    const input = await within(card).findByLabelText('Add an agent');
    for (const wrong of ['http://b.example', 'https://b.example/a2a', 'b.example']) {
      fireEvent.change(input, { target: { value: wrong } });
      await act(async () => fireEvent.click(within(card).getByRole('button', { name: 'Add' })));
      expect(within(card).getByTestId('field-error').textContent).toMatch(/agent:\/\/.*https:\/\//);
    }
    expect(puts(calls)).toEqual([]);
    fireEvent.change(input, { target: { value: 'https://a2a.example' } });
    await act(async () => fireEvent.click(within(card).getByRole('button', { name: 'Add' })));
    expect(puts(calls)).toEqual([{ outboundAllowed: ['agent://a.example', 'https://a2a.example'] }]);
    calls.splice(0);

    fireEvent.change(input, { target: { value: 'agent://b.example' } });
    await act(async () => fireEvent.click(within(card).getByRole('button', { name: 'Add' })));
    const all = ['agent://a.example', 'https://a2a.example', 'agent://b.example'];
    expect(puts(calls)).toEqual([{ outboundAllowed: all }]);
    const list = within(card).getByTestId('outbound-allowed');
    expect(
      within(list)
        .getAllByRole('listitem')
        .map((item) => item.dataset.agent),
    ).toEqual(all);
    const first = within(list).getAllByRole('listitem')[0] as HTMLElement;
    await act(async () => fireEvent.click(within(first).getByRole('button', { name: 'Remove' })));
    expect(puts(calls)[1]).toEqual({ outboundAllowed: all.slice(1) });
  });

  it('lists the credentials kept for A2A agents by URL and kind, never a value', async () => {
    show({ outbound: 'any', outboundAllowed: [] }, [KEPT]);
    const list = await screen.findByTestId('outbound-credentials');
    const item = within(list).getByRole('listitem');
    expect(item.dataset.url).toBe('https://kept.example');
    expect(item.textContent).toContain('API key in X-Api-Key');
  });

  it('keeps a credential write-only: sent once, the field emptied, the list updated; removes one', async () => {
    const { calls } = show({ outbound: 'any', outboundAllowed: [] });
    const section = await screen.findByTestId('outbound-credentials-section');
    expect(within(section).getByTestId('outbound-credentials-empty')).toBeTruthy();
    fireEvent.change(within(section).getByLabelText('Agent URL'), { target: { value: 'https://b.example' } });
    fireEvent.change(within(section).getByLabelText('Sent as'), { target: { value: 'apiKey' } });
    fireEvent.change(within(section).getByLabelText('Header'), { target: { value: 'X-Api-Key' } });
    const value = within(section).getByLabelText('Credential') as HTMLInputElement;
    expect(value.type).toBe('password');
    fireEvent.change(value, { target: { value: 'secret-value-123' } });
    await act(async () => fireEvent.click(within(section).getByRole('button', { name: 'Keep' })));
    expect(calls.filter((call) => call.method === 'POST').map((call) => call.body)).toEqual([
      { url: 'https://b.example', scheme: 'apiKey', header: 'X-Api-Key', value: 'secret-value-123' },
    ]);
    expect(value.value).toBe('');
    expect(section.textContent).not.toContain('secret-value-123');
    const item = within(within(section).getByTestId('outbound-credentials')).getByRole('listitem');
    expect(item.dataset.url).toBe('https://b.example');
    await act(async () => fireEvent.click(within(item).getByRole('button', { name: 'Remove' })));
    expect(calls.at(-1)).toMatchObject({
      method: 'POST',
      path: '/api/outbound/credentials/remove',
      body: { url: 'https://b.example' },
    });
    expect(within(section).getByTestId('outbound-credentials-empty')).toBeTruthy();
  });

  it("shows the console's refusal, and does not keep the value in the page", async () => {
    show({ outbound: 'any', outboundAllowed: [] });
    const section = await screen.findByTestId('outbound-credentials-section');
    fireEvent.change(within(section).getByLabelText('Agent URL'), { target: { value: 'http://b.example' } });
    const value = within(section).getByLabelText('Credential') as HTMLInputElement;
    fireEvent.change(value, { target: { value: 'secret-value-123' } });
    await act(async () => fireEvent.click(within(section).getByRole('button', { name: 'Keep' })));
    expect(within(section).getByTestId('credential-error').textContent).toMatch(/https base URL/);
    expect(value.value).toBe('');
  });

  it("shows today's calls and tokens per agent called, the budgets, and which agent's budget is spent", async () => {
    show({ outbound: 'any', outboundAllowed: [] }, [], BUDGETS);
    const budgets = await screen.findByTestId('outbound-budgets');
    expect(budgets.textContent).toMatch(
      /may get 100 calls and any number of tokens \(about four characters sent or read\) a day/,
    );
    const rows = within(budgets).getAllByRole('row').slice(1);
    expect(rows.map((row) => [row.dataset.callee, row.dataset.spent])).toEqual([
      ['agent://loop.example', 'calls'],
      ['agent://weather.example', ''],
    ]);
    expect(rows[0]!.textContent).toBe('agent://loop.example calls spent100 of 10052,000 (no limit)');
    expect(rows[1]!.textContent).toBe('agent://weather.example 3 of 100410 (no limit)');
  });

  it('says when the agent called nobody today', async () => {
    show({ outbound: 'any', outboundAllowed: [] });
    expect(await screen.findByTestId('outbound-budgets-empty')).toBeTruthy();
  });
});
