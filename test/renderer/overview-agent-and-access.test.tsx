// @vitest-environment happy-dom
/**
 * The Overview's warnings about who callers reach on the gateway (host tools, a missing agent) and who may
 * call (the open policy, senders waiting for approval); fetch and the clipboard are doubles.
 */
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { Overview } from '../../renderer/src/pages/Overview';
import type { GatewayAgentView, StatusResponse } from '../../src/protocol/console-api.js';
import { consoleData, fakeFetch, gatewayAgent, SNIPPET, status } from './fakes';

const writeText = vi.fn(async (_text: string) => undefined);
beforeEach(() => {
  writeText.mockClear();
  Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
});
afterEach(cleanup);

const withAgent = (agent: Partial<GatewayAgentView>): StatusResponse => {
  const base = status();
  return status({ gateway: { ...base.gateway, agent: gatewayAgent(agent) } });
};

const EXPOSED: Partial<GatewayAgentView> = {
  id: 'main',
  model: 'openclaw/main',
  tools: {
    verdict: 'exposes-host-tools',
    tools: ['exec', 'read', 'write'],
    detail: 'agents.entries.main has no tools policy; tools.profile is "full"',
  },
};

function show(value: StatusResponse, routes: Parameters<typeof fakeFetch>[0] = {}) {
  const { fetch, calls } = fakeFetch(routes);
  const data = consoleData(value);
  render(<Overview api={createApiClient({ token: 't', fetch })} data={data} />);
  return { calls, data };
}

describe('Overview: the agent callers reach', () => {
  it('shows the agent, its check and restricted tools when all is well, without warnings', () => {
    show(withAgent({}));
    const gateway = screen.getByTestId('gateway-state');
    expect(within(gateway).getByTestId('gateway-agent').textContent).toBe('public');
    expect(within(gateway).getByText('openclaw/public')).toBeTruthy();
    expect(within(gateway).getByTestId('agent-check').textContent).toMatch(/^found on the gateway/);
    expect(within(gateway).getByTestId('agent-tools').textContent).toBe('restricted');
    expect(within(gateway).getByText('Reachable')).toBeTruthy();
    expect(screen.queryByTestId('host-tools-warning')).toBeNull();
    expect(screen.queryByTestId('agent-missing')).toBeNull();
  });

  it('warns in red that callers are refused because of host tools, names them, and copies the snippet', async () => {
    show(withAgent({ ...EXPOSED, acceptance: { state: 'needed' } }));
    const gateway = screen.getByTestId('gateway-state');
    const warning = within(gateway).getByTestId('host-tools-warning');
    expect(warning.className).toContain('error');
    expect(warning.getAttribute('role')).toBe('alert');
    expect(warning.textContent).toContain('Callers are refused: agent “main” can reach this machine');
    expect(warning.textContent).toContain('Until you decide, every call is refused');
    for (const tool of ['exec', 'read', 'write'])
      expect(within(warning).getByText(tool).tagName).toBe('CODE');
    expect(warning.textContent).toContain('agents.entries.main has no tools policy; tools.profile is "full"');
    expect(within(gateway).getByText('Exposes host tools')).toBeTruthy();

    const snippet = within(warning).getByTestId('agent-snippet');
    expect(snippet.tagName).toBe('PRE');
    expect(snippet.textContent).toBe(SNIPPET);
    await act(async () =>
      fireEvent.click(within(warning).getByRole('button', { name: 'Copy the agent config' })),
    );
    expect(writeText).toHaveBeenCalledWith(SNIPPET);
  });

  it('checks the agent again on request and refreshes the status', async () => {
    const { calls, data } = show(withAgent(EXPOSED), {
      'POST /api/gateway/check': {
        body: { agent: gatewayAgent({ ...EXPOSED, checkedAt: '2025-01-01T12:00:00Z' }) },
      },
    });
    const warning = screen.getByTestId('host-tools-warning');
    await act(async () => fireEvent.click(within(warning).getByRole('button', { name: 'Check again' })));
    expect(calls).toEqual([expect.objectContaining({ method: 'POST', path: '/api/gateway/check' })]);
    expect(data.refreshStatus).toHaveBeenCalled();
    expect(within(warning).getByRole('status').textContent).toMatch(/it still exposes host tools\.$/);
  });

  it('says a missing agent means nothing is forwarded, with the gateway’s agents and the snippet', () => {
    show(withAgent({ check: 'missing', available: ['main', 'ops'] }));
    const missing = screen.getByTestId('agent-missing');
    expect(missing.className).toContain('error');
    expect(missing.textContent).toContain('The gateway has no agent “public”: nothing is forwarded');
    expect(missing.textContent).toContain('it lists: main, ops');
    expect(within(missing).getByTestId('agent-snippet').textContent).toBe(SNIPPET);
    expect(within(missing).getByRole('button', { name: 'Copy the agent config' })).toBeTruthy();
    expect(within(missing).getByRole('button', { name: 'Check again' })).toBeTruthy();
    expect(within(screen.getByTestId('gateway-state')).getByText('Agent missing')).toBeTruthy();
  });

  it('shows why the agent could not be checked in a muted line, not as an alarm', () => {
    show(withAgent({ check: 'unknown', detail: 'GET /v1/models answered HTTP 404' }));
    const line = screen.getByTestId('agent-unknown');
    expect(line.className).toContain('muted');
    expect(line.textContent).toBe('Could not check the agent: GET /v1/models answered HTTP 404.');
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('says what an explicit model loses', () => {
    show(
      withAgent({
        id: undefined,
        model: 'gpt-4o',
        check: 'skipped',
        tools: { verdict: 'unknown', detail: 'explicit model' },
      }),
    );
    expect(screen.getByTestId('agent-check').textContent).toBe('not checked (explicit model)');
    expect(screen.getByTestId('agent-skipped').textContent).toMatch(
      /explicit model \(gpt-4o\) is set, so the bridge cannot check that the agent exists or which tools/,
    );
  });
});

describe('Overview: accepting an agent that exposes host tools (issue 15 finding 9)', () => {
  const needed = withAgent({ ...EXPOSED, acceptance: { state: 'needed' } });

  it('asks first, naming the tools, then accepts exactly that agent with exactly those tools', async () => {
    const { calls, data } = show(needed, {
      'POST /api/gateway/accept': { body: { agent: gatewayAgent(EXPOSED), gateway: needed.gateway } },
    });
    const warning = screen.getByTestId('host-tools-warning');
    await act(async () => fireEvent.click(within(warning).getByTestId('accept-exposed-agent')));
    // Nothing is sent before the operator confirms in the dialog, which names the risk and the tools.
    expect(calls).toEqual([]);
    const dialog = screen.getByRole('dialog');
    expect(dialog.textContent).toContain('Let callers reach agent “main” with host tools?');
    for (const tool of ['exec', 'read', 'write']) expect(within(dialog).getByText(tool).tagName).toBe('CODE');
    expect(dialog.textContent).toContain(
      'if the agent is offered other tools later, callers are refused again',
    );
    await act(async () =>
      fireEvent.click(within(dialog).getByRole('button', { name: 'Accept and serve callers' })),
    );
    expect(calls).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/api/gateway/accept',
        body: { agent: 'main', tools: ['exec', 'read', 'write'] },
      }),
    ]);
    expect(data.refreshStatus).toHaveBeenCalled();
  });

  it('says why nothing was accepted when the tools changed meanwhile (409)', async () => {
    show(needed, {
      'POST /api/gateway/accept': {
        status: 409,
        body: { error: { message: 'Callers would not reach agent "main" with exactly those tools now.' } },
      },
    });
    await act(async () => fireEvent.click(screen.getByTestId('accept-exposed-agent')));
    const dialog = screen.getByRole('dialog');
    await act(async () =>
      fireEvent.click(within(dialog).getByRole('button', { name: 'Accept and serve callers' })),
    );
    expect(within(dialog).getByTestId('error-notice').textContent).toContain('Nothing was accepted');
  });

  it('once accepted: a standing warning with the date, and a way to refuse callers again', async () => {
    const accepted = withAgent({ ...EXPOSED, acceptance: { state: 'accepted', at: '2025-01-02T10:00:00Z' } });
    const { calls } = show(accepted, {
      'POST /api/gateway/withdraw': { body: { agent: gatewayAgent(EXPOSED), gateway: accepted.gateway } },
    });
    const warning = screen.getByTestId('host-tools-warning');
    expect(warning.className).toContain('warning');
    expect(warning.textContent).toContain('Callers reach this machine through agent “main”: you accepted it');
    expect(screen.queryByTestId('accept-exposed-agent')).toBeNull();
    expect(
      within(screen.getByTestId('gateway-state')).getByText('Exposes host tools (accepted)'),
    ).toBeTruthy();
    await act(async () => fireEvent.click(within(warning).getByTestId('withdraw-exposed-agent')));
    expect(calls).toEqual([expect.objectContaining({ method: 'POST', path: '/api/gateway/withdraw' })]);
  });

  it('after a change of tools: refused again, saying what was accepted before', () => {
    show(
      withAgent({
        ...EXPOSED,
        acceptance: { state: 'changed', tools: ['read'], at: '2025-01-02T10:00:00Z' },
      }),
    );
    const warning = screen.getByTestId('host-tools-warning');
    expect(warning.className).toContain('error');
    expect(screen.getByTestId('acceptance-changed').textContent).toMatch(
      /You accepted it on .+ with read; its tools have changed since, so callers are refused again\./,
    );
    expect(within(warning).getByTestId('accept-exposed-agent')).toBeTruthy();
  });

  it('a config OpenClaw has not loaded: callers are refused, with the command that says why', () => {
    const notLoaded = 'the file has "public", which the gateway does not run';
    show(
      withAgent({
        tools: {
          verdict: 'unknown',
          detail: `OpenClaw has not loaded its config file (${notLoaded}).`,
          notLoaded,
        },
      }),
    );
    const notice = screen.getByTestId('config-not-loaded');
    expect(notice.className).toContain('error');
    expect(notice.textContent).toContain(notLoaded);
    expect(notice.textContent).toContain('openclaw config validate');
    expect(screen.queryByTestId('tools-unknown')).toBeNull();
    expect(within(screen.getByTestId('gateway-state')).getByText('Config not loaded')).toBeTruthy();
  });
});

describe('Overview: the gateway state is one word from the server (issue 16 item 3)', () => {
  const withGateway = (gateway: Partial<StatusResponse['gateway']>): StatusResponse => {
    const base = status();
    return status({ gateway: { ...base.gateway, ...gateway } });
  };
  const problem = {
    kind: 'unreachable',
    diagnosis: 'Could not reach the gateway.',
    fix: 'Start it.',
    at: 't',
  };

  it.each([
    ['down', 'Unreachable', 'not answering'],
    ['token-wrong', 'Token refused', 'refusing the token'],
    ['failing', 'Problem', 'chat calls failing'],
  ] as const)('%s: the badge, the state line and the red problem', (condition, badge, words) => {
    show(withGateway({ condition, live: condition !== 'down', problem }));
    const gateway = screen.getByTestId('gateway-state');
    expect(within(gateway).getByText(badge)).toBeTruthy();
    expect(within(gateway).getByTestId('gateway-condition').textContent).toMatch(
      new RegExp(`^${words} since`),
    );
    expect(within(gateway).getByTestId('gateway-problem').textContent).toContain(
      'Could not reach the gateway.',
    );
    expect(
      within(screen.getByTestId('getting-started')).getByText(/Could not reach the gateway\. Start it\./),
    ).toBeTruthy();
  });

  it('up after a check: no red box and the step done, though the last call had failed', () => {
    show(withGateway({ condition: 'up', live: true, lastCallOk: false }));
    const gateway = screen.getByTestId('gateway-state');
    expect(within(gateway).getByText('Reachable')).toBeTruthy();
    expect(within(gateway).queryByTestId('gateway-problem')).toBeNull();
    expect(within(gateway).getByText('failed')).toBeTruthy(); // the last chat call, said plainly
    const step = screen.getAllByTestId('setup-step').find((li) => li.dataset.step === 'gateway');
    expect(step?.dataset.state).toBe('done');
  });
});

describe('Overview: access', () => {
  it('links to the Access page when senders wait, naming the newest', () => {
    show(
      status({
        access: {
          policy: 'pairing',
          pending: 2,
          newest: {
            sender: 'agent://research.example.org',
            name: 'Research Helper',
            code: 'K7Q-4PX',
            firstAt: new Date(Date.now() - 5 * 60_000).toISOString(),
          },
        },
      }),
    );
    const notice = screen.getByTestId('pending-notice');
    expect(notice.textContent).toContain('2 senders wait for your approval');
    expect(notice.textContent).toContain(
      '“Research Helper” (self-declared name), agent://research.example.org',
    );
    expect(notice.textContent).toContain('request K7Q-4PX, asked 5 min ago');
    expect(within(notice).getByRole('link', { name: 'Review on the Access page' }).getAttribute('href')).toBe(
      '#/access',
    );
  });

  it('shows no pending notice when no one waits', () => {
    show(status());
    expect(screen.queryByTestId('pending-notice')).toBeNull();
  });

  it('keeps a standing warning while access is open', () => {
    show(status({ access: { policy: 'open', pending: 0 } }));
    const warning = screen.getByTestId('open-warning');
    expect(warning.className).toContain('error');
    expect(warning.textContent).toContain('anyone who can sign an envelope reaches your gateway agent');
    expect(within(warning).getByRole('link').getAttribute('href')).toBe('#/access');
    cleanup();
    show(status({ access: { policy: 'allowlist', pending: 0 } }));
    expect(screen.queryByTestId('open-warning')).toBeNull();
  });
});

describe('Overview: shared state on Redis', () => {
  it('says first that callers are refused while Redis does not answer, and why', () => {
    const problem =
      'Redis at redis://127.0.0.1:6379/0 does not answer (connect ECONNREFUSED): calls are refused with 503 until it does. Start Redis; the agent reconnects by itself.';
    show(status({ state: { backend: 'redis', up: false, problem } }));
    const notice = screen.getByTestId('state-down');
    expect(notice.textContent).toContain('Callers are refused');
    expect(notice.textContent).toContain(problem);
  });

  it('shows nothing about it while Redis or the data dir answers', () => {
    show(status({ state: { backend: 'redis', up: true } }));
    expect(screen.queryByTestId('state-down')).toBeNull();
    cleanup();
    show(status());
    expect(screen.queryByTestId('state-down')).toBeNull();
  });
});

describe('Overview: a demo run', () => {
  it('shows how to try the demo, not how to publish a stand-in', () => {
    const value = status({ demo: true, registry: { status: 'unregistered' } });
    show(value);
    const guide = screen.getByTestId('getting-started');
    expect(within(guide).getByText('Trying the demo')).toBeTruthy();
    expect(guide.textContent).toContain(`npx agent-bridge call --demo ${value.agent.id} "Hello"`);
    expect(guide.textContent).not.toMatch(/Register on the Registry page/);
  });
});
