// @vitest-environment happy-dom
/**
 * The MCP server on the Overview: the Getting started step with the exact command (its token fetched only
 * on request), the card's listing state, and a new token only after a confirmation.
 */
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { setupComplete, setupSteps } from '../../renderer/src/lib/setup';
import { Overview } from '../../renderer/src/pages/Overview';
import type { McpResponse, StatusResponse } from '../../src/protocol/console-api.js';
import { consoleData, fakeFetch, status } from './fakes';

const writeText = vi.fn(async (_text: string) => undefined);
beforeEach(() => {
  writeText.mockClear();
  Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
});
afterEach(cleanup);

const URL_ = 'http://127.0.0.1:8788/mcp';
const view = (token: string): McpResponse => ({
  url: URL_,
  token,
  file: '/data/mcp.json',
  serverName: 'agent-bridge',
  command: `openclaw mcp add agent-bridge --url ${URL_} --transport streamable-http --header 'Authorization=Bearer ${token}'`,
  updateCommand: `openclaw mcp set agent-bridge '{"url":"${URL_}","headers":{"Authorization":"Bearer ${token}"}}'`,
});
const withMcp = (mcp: Partial<StatusResponse['mcp']>): StatusResponse => {
  const base = status({
    registry: {
      status: 'registered',
      record: { registry: 'r', url: 'u', id: 'i', name: 'n', registeredAt: 't' },
    },
  });
  return { ...base, mcp: { ...base.mcp, ...mcp } };
};

function show(value: StatusResponse, routes: Parameters<typeof fakeFetch>[0] = {}) {
  const { fetch, calls } = fakeFetch(routes);
  const data = consoleData(value);
  render(<Overview api={createApiClient({ token: 't', fetch })} data={data} />);
  return { calls, data };
}

describe('Getting started: let your agent call other agents', () => {
  it('is done once the gateway lists the server, or when calls out are off', () => {
    const step = (mcp: Partial<StatusResponse['mcp']>) =>
      setupSteps(withMcp(mcp)).find((s) => s.id === 'mcp');
    expect(step({ listedInGatewayConfig: true })?.done).toBe(true);
    expect(step({ listedInGatewayConfig: false, outbound: 'off' })?.done).toBe(true);
    expect(step({ listedInGatewayConfig: false })).toMatchObject({ done: false, command: 'mcp-add' });
    expect(step({ listedInGatewayConfig: true, gatewayConfigProblem: 'old token.' })).toMatchObject({
      done: false,
      command: 'mcp-update',
    });
    expect(
      step({
        listedInGatewayConfig: true,
        movedFrom: 'http://127.0.0.1:8788/mcp',
        url: 'http://127.0.0.1:9999/mcp',
      }),
    ).toMatchObject({ done: false, command: 'mcp-update' });
    // A config the bridge cannot read: the step stays, but the guide does not wait for it.
    const unknown = withMcp({ listedInGatewayConfig: undefined });
    expect(setupSteps(unknown).find((s) => s.id === 'mcp')).toMatchObject({ done: false, optional: true });
    expect(setupComplete(setupSteps(unknown))).toBe(true);
    expect(setupComplete(setupSteps(withMcp({ listedInGatewayConfig: false })))).toBe(false);
  });

  it('shows the exact openclaw command with its token only when asked, and copies it', async () => {
    const { calls } = show(withMcp({ listedInGatewayConfig: false }), {
      'GET /api/mcp': { body: view('tok-1') },
    });
    const step = (await screen.findAllByTestId('setup-step')).find(
      (s) => s.dataset.step === 'mcp',
    ) as HTMLElement;
    expect(step.dataset.state).toBe('todo');
    expect(within(step).getByText('Let your agent call other agents')).toBeTruthy();
    // The token is not fetched until the operator asks for it.
    expect(calls.filter((c) => c.path === '/api/mcp')).toHaveLength(0);
    await act(async () => fireEvent.click(within(step).getByTestId('mcp-reveal')));
    const command = within(step).getByTestId('setup-mcp-command');
    expect(command.textContent).toBe(view('tok-1').command);
    await act(async () => fireEvent.click(within(step).getByRole('button', { name: /^Copy: / })));
    expect(writeText).toHaveBeenCalledWith(view('tok-1').command);
  });
});

describe('the MCP card', () => {
  it('shows the URL, whether the gateway lists it, and the tool policy for callers; never the token unasked', () => {
    show(withMcp({ listedInGatewayConfig: true }));
    const card = screen.getByTestId('mcp-card');
    expect(within(card).getByTestId('mcp-url').textContent).toBe(URL_);
    expect(within(card).getByTestId('mcp-state').dataset.listed).toBe('true');
    expect(within(card).getByTestId('mcp-policy-snippet').textContent).toContain('agent-bridge__*');
    expect(within(card).queryByTestId('mcp-token')).toBeNull();
  });

  it('says the address moved when the console port was busy', () => {
    show(withMcp({ url: 'http://127.0.0.1:40000/mcp', movedFrom: URL_ }));
    expect(screen.getByTestId('mcp-moved').textContent).toMatch(/not http:\/\/127\.0\.0\.1:8788\/mcp/);
  });

  it('makes a new token only after a confirmation, then shows the command that updates the gateway', async () => {
    const { calls, data } = show(withMcp({ listedInGatewayConfig: true }), {
      'GET /api/mcp': { body: view('tok-1') },
      'POST /api/mcp/token': { body: view('tok-2') },
    });
    const card = screen.getByTestId('mcp-card');
    await act(async () => fireEvent.click(within(card).getByTestId('mcp-regenerate')));
    expect(calls.filter((c) => c.method === 'POST')).toHaveLength(0);
    const dialog = screen.getByRole('dialog');
    expect(dialog.textContent).toMatch(/cannot call other agents until you update the gateway/);
    await act(async () => fireEvent.click(within(dialog).getByRole('button', { name: 'Make a new token' })));
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.path)).toEqual(['/api/mcp/token']);
    expect(within(card).getByTestId('mcp-regenerated')).toBeTruthy();
    expect(within(card).getByTestId('mcp-token').textContent).toBe('tok-2');
    expect(within(card).getByTestId('mcp-update-command').textContent).toBe(view('tok-2').updateCommand);
    expect(data.refreshStatus).toHaveBeenCalled();
  });
});

describe('the MCP card: checking what the gateway gets', () => {
  it('names the probe command that lists the tools (`--json`; without it OpenClaw prints only a count)', () => {
    show(withMcp({ listedInGatewayConfig: true }));
    const card = screen.getByTestId('mcp-card');
    expect(within(card).getByTestId('mcp-probe-command').textContent).toBe(
      'openclaw mcp probe agent-bridge --json',
    );
    expect(card.textContent).toContain('without --json it prints only a count');
    cleanup();
    show(withMcp({ outbound: 'off' }));
    expect(screen.queryByTestId('mcp-probe-command')).toBeNull();
  });
});
