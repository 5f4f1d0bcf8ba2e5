// @vitest-environment happy-dom
/**
 * Issue 26, item 11 in the console: "Check again" on a slow gateway shows that it is still checking and what
 * it waits for (the console answered 202), asks again, and ends with the result; it never ends in silence.
 */
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { CheckAgain } from '../../renderer/src/components/GatewayAgent';
import type { GatewayAgentView, GatewayCheckResponse } from '../../src/protocol/console-api.js';
import { status } from './fakes';

afterEach(cleanup);

const agent: GatewayAgentView = {
  id: 'public',
  model: 'openclaw/public',
  check: 'present',
  checkedAt: '2026-12-07T12:00:05.000Z',
  tools: { verdict: 'restricted', detail: 'minimal' },
  snippet: '',
};

function json(value: unknown, statusCode = 200): Response {
  return new Response(JSON.stringify(value), {
    status: statusCode,
    headers: { 'Content-Type': 'application/json' },
  });
}

describe('Check again', () => {
  it('shows "still checking" with what the probe waits for, asks again, then shows the result', async () => {
    const gateway = status().gateway;
    const since = new Date(Date.now() - 9000).toISOString();
    const still: GatewayCheckResponse = {
      agent: { ...agent, check: 'checking' },
      gateway,
      checking: { since, waitingFor: ['GET /health', 'GET /v1/models'] },
    };
    let finish: (response: Response) => void = () => undefined;
    const fetch = vi
      .fn<(input: RequestInfo | URL, init?: RequestInit) => Promise<Response>>()
      .mockResolvedValueOnce(json(still, 202))
      .mockReturnValueOnce(new Promise<Response>((resolve) => (finish = resolve)));
    const onChecked = vi.fn(async () => undefined);
    render(<CheckAgain api={createApiClient({ token: 't', fetch })} onChecked={onChecked} />);

    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Check again' })));
    const progress = await screen.findByTestId('still-checking');
    expect(progress.textContent).toMatch(
      /^Still checking \((9|10) s\): waiting for GET \/health and GET \/v1\/models\.$/,
    );
    expect(screen.getByRole('button', { name: 'Checking…' })).toBeTruthy();
    expect(fetch).toHaveBeenCalledTimes(2);
    expect(onChecked).not.toHaveBeenCalled();

    await act(async () => finish(json({ agent, gateway } satisfies GatewayCheckResponse)));
    expect(screen.queryByTestId('still-checking')).toBeNull();
    expect(screen.getByRole('status').textContent).toMatch(/: looks right now\.$/);
    expect(onChecked).toHaveBeenCalledTimes(1);
  });
});
