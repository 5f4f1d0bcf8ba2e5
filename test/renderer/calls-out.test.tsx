// @vitest-environment happy-dom
/** Calls out on the Access page: the outbound policy and the agents the operator's agent may call. */
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { CallsOutCard } from '../../renderer/src/components/CallsOutCard';
import { fakeFetch, settingsView } from './fakes';

afterEach(cleanup);

function show(initial: Record<string, unknown>) {
  let current = { outboundPerMinute: 30, outboundTimeoutMs: 45_000, ...initial };
  const { fetch, calls } = fakeFetch({
    'GET /api/settings': () => ({ body: settingsView(current) }),
    'PUT /api/settings': ({ body }) => {
      current = { ...current, ...(body as Record<string, unknown>) };
      return { body: { ...settingsView(current), applied: Object.keys(body as object) } };
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

  it('adds and removes agents on the list, and refuses what is not an agent id', async () => {
    const { calls } = show({ outbound: 'allowlist', outboundAllowed: ['agent://a.example'] });
    const card = await screen.findByTestId('calls-out');
    const input = await within(card).findByLabelText('Add an agent');
    fireEvent.change(input, { target: { value: 'https://b.example' } });
    await act(async () => fireEvent.click(within(card).getByRole('button', { name: 'Add' })));
    expect(within(card).getByTestId('field-error').textContent).toMatch(/agent:\/\//);
    expect(puts(calls)).toEqual([]);

    fireEvent.change(input, { target: { value: 'agent://b.example' } });
    await act(async () => fireEvent.click(within(card).getByRole('button', { name: 'Add' })));
    expect(puts(calls)).toEqual([{ outboundAllowed: ['agent://a.example', 'agent://b.example'] }]);
    const list = within(card).getByTestId('outbound-allowed');
    expect(
      within(list)
        .getAllByRole('listitem')
        .map((item) => item.dataset.agent),
    ).toEqual(['agent://a.example', 'agent://b.example']);
    const first = within(list).getAllByRole('listitem')[0] as HTMLElement;
    await act(async () => fireEvent.click(within(first).getByRole('button', { name: 'Remove' })));
    expect(puts(calls)[1]).toEqual({ outboundAllowed: ['agent://b.example'] });
  });
});
