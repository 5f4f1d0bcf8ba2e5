// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import type { StatusResponse } from '../../renderer/src/api/contract';
import { isLoopbackHost, isPublicHttpsUrl } from '../../renderer/src/lib/address';
import { setupSteps } from '../../renderer/src/lib/setup';
import { gatewayAgent, status } from './fakes';

// The first-run guide's logic: which steps are done and what the operator should do next.
const base = status({
  registry: {
    status: 'registered',
    record: { registry: 'r', url: 'u', id: 'i', name: 'n', registeredAt: 't' },
  },
});
const withChange = (change: Partial<StatusResponse>): StatusResponse => ({ ...base, ...change });
const withAgent = (agent: Partial<StatusResponse['gateway']['agent']>): StatusResponse =>
  withChange({ gateway: { ...base.gateway, agent: gatewayAgent(agent) } });
const noTunnelAt = (url: string): StatusResponse =>
  withChange({ tunnel: { status: 'off', provider: 'none' }, agent: { ...base.agent, url } });
const states = (status: StatusResponse) =>
  setupSteps(status).map((s) => `${s.id}:${s.done ? 'done' : 'todo'}`);

describe('getting started', () => {
  it('is complete when the gateway answers, the tunnel is online, the agent is registered and the gateway lists the MCP server', () => {
    expect(states(base)).toEqual(['gateway:done', 'tunnel:done', 'registry:done', 'mcp:done']);
  });

  it('in a demo, asks for no public address or registration, and says how to call the demo agent', () => {
    const demo = setupSteps(withChange({ demo: true, registry: { status: 'unregistered' } }));
    expect(demo.every((step) => step.optional === true)).toBe(true);
    expect(demo.find((step) => step.id === 'tunnel')?.next).toContain(
      `npx agent-bridge call --demo ${base.agent.id} "Hello"`,
    );
    expect(demo.find((step) => step.id === 'registry')?.next).toMatch(/without --demo/);
  });

  it('names the fix for a gateway problem, and how to configure a missing gateway', () => {
    const problem = withChange({
      gateway: {
        ...base.gateway,
        condition: 'failing',
        problem: {
          kind: 'endpoint-disabled',
          diagnosis: 'Chat endpoint is off.',
          fix: 'Enable it.',
          at: 't',
        },
      },
    });
    expect(setupSteps(problem)[0]).toMatchObject({ done: false, next: 'Chat endpoint is off. Enable it.' });
    const missing = withChange({
      gateway: { ...base.gateway, status: 'missing GATEWAY_TOKEN', condition: 'not-configured' },
    });
    expect(setupSteps(missing)[0]?.next).toMatch(
      /missing its GATEWAY_TOKEN: set its URL and token in Settings/,
    );
  });

  it('follows the tunnel and the registry', () => {
    const reconnecting = withChange({
      tunnel: {
        status: 'reconnecting',
        attempt: 2,
        nextTryAt: 't',
        lastError: 'ECONNREFUSED',
        provider: 'localtunnel',
      },
    });
    expect(setupSteps(reconnecting)[1]).toMatchObject({
      done: false,
      next: 'The tunnel is reconnecting (ECONNREFUSED).',
    });
    const failed = withChange({
      registry: { status: 'unregistered', lastError: { message: 'HTTP 500.', fix: 'Try later.', at: 't' } },
    });
    expect(setupSteps(failed)[2]?.next).toMatch(/last attempt failed: HTTP 500\. Try later\./);
  });
});

describe('getting started: the agent callers reach', () => {
  it('is not done while the agent is missing, and says nothing is forwarded and what to add', () => {
    const step = setupSteps(withAgent({ check: 'missing', available: ['main'] }))[0];
    expect(step?.done).toBe(false);
    expect(step?.next).toMatch(/no agent "public" for callers, so nothing is forwarded/);
    expect(step?.next).toMatch(/Add the restricted agent shown in the Gateway card/);
    expect(step?.next).toMatch(/Check again/);
  });

  it('is not done while the agent is still being checked', () => {
    const step = setupSteps(withAgent({ check: 'checking' }))[0];
    expect(step).toMatchObject({ done: false });
    expect(step?.next).toMatch(/^Checking that the gateway has the agent "public"/);
  });

  it('is not done while the agent exposes host tools, and names them', () => {
    const step = setupSteps(
      withAgent({
        id: 'main',
        tools: { verdict: 'exposes-host-tools', tools: ['exec', 'write'], detail: 'profile "full"' },
      }),
    )[0];
    expect(step?.done).toBe(false);
    expect(step?.next).toMatch(
      /Callers are refused: agent "main" can use exec, write, so anyone you let in could run commands/,
    );
    expect(step?.next).toMatch(/Give callers a restricted agent with the snippet/);
    expect(step?.next).toMatch(/accept this agent with these tools there/);
  });

  it('is done once the operator accepted that agent with those tools, and not when they changed', () => {
    const exposed = {
      id: 'main',
      tools: { verdict: 'exposes-host-tools' as const, tools: ['exec'], detail: 'profile "full"' },
    };
    expect(states(withAgent({ ...exposed, acceptance: { state: 'accepted', at: 't' } }))[0]).toBe(
      'gateway:done',
    );
    const changed = { state: 'changed' as const, tools: [], at: 't' };
    expect(states(withAgent({ ...exposed, acceptance: changed }))[0]).toBe('gateway:todo');
  });

  it('is not done while OpenClaw has not loaded its config file, and says how to find out why', () => {
    const step = setupSteps(
      withAgent({
        tools: {
          verdict: 'unknown',
          detail: 'd',
          notLoaded: 'the file has "public", which the gateway does not run',
        },
      }),
    )[0];
    expect(step?.done).toBe(false);
    expect(step?.next).toMatch(
      /Callers are refused: OpenClaw has not loaded its config file \(the file has "public"/,
    );
    expect(step?.next).toMatch(/openclaw config validate/);
  });

  it('is done when the agent could not be checked or an explicit model is set (the card says so)', () => {
    expect(states(withAgent({ check: 'unknown', detail: 'GET /v1/models answered HTTP 404' }))[0]).toBe(
      'gateway:done',
    );
    expect(
      states(
        withAgent({
          id: undefined,
          model: 'gpt-4o',
          check: 'skipped',
          tools: { verdict: 'unknown', detail: 'explicit' },
        }),
      )[0],
    ).toBe('gateway:done');
  });

  it('reports an unreachable gateway before the agent', () => {
    const step = setupSteps(
      withChange({
        gateway: {
          ...base.gateway,
          condition: 'down',
          live: false,
          agent: gatewayAgent({ check: 'missing' }),
        },
      }),
    )[0];
    expect(step?.next).toBe('The gateway does not answer: start it and check its URL.');
  });
});

describe('getting started: a public address', () => {
  it('counts an online tunnel', () => {
    expect(setupSteps(base)[1]?.done).toBe(true);
  });

  it('without a tunnel, counts only a public https address', () => {
    expect(setupSteps(noTunnelAt('https://agent.example.com'))[1]?.done).toBe(true);
    expect(setupSteps(noTunnelAt('https://203.0.113.7:8443'))[1]?.done).toBe(true);
  });

  it.each([
    'http://127.0.0.1:8787',
    'https://127.0.0.1:8787',
    'https://localhost',
    'https://agent.localhost',
    'https://[::1]:8443',
    'http://agent.example.com',
    '',
  ])('without a tunnel, %j is not a public address: set one or choose a tunnel', (url) => {
    const step = setupSteps(noTunnelAt(url))[1];
    expect(step?.done).toBe(false);
    expect(step?.next).toMatch(/not a public https:\/\/ address/);
    expect(step?.next).toMatch(/--public-url https:\/\/…/);
    expect(step?.next).toMatch(/choose a tunnel provider in Settings → Tunnel/);
  });

  it('asks to start a tunnel that is configured but off', () => {
    const step = setupSteps(withChange({ tunnel: { status: 'off', provider: 'localtunnel' } }))[1];
    expect(step).toMatchObject({ done: false, next: 'The tunnel is off: start it in the Tunnel card.' });
  });
});

describe('loopback addresses', () => {
  it('knows the loopback names and addresses, and nothing else', () => {
    for (const host of ['localhost', 'LOCALHOST', 'a.b.localhost', '127.0.0.1', '127.8.9.10', '::1', '[::1]'])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['example.com', 'localhost.example.com', '128.0.0.1', '10.0.0.1', 'mylocalhost'])
      expect(isLoopbackHost(host), host).toBe(false);
  });

  it('calls public only an https URL with a non-loopback host', () => {
    expect(isPublicHttpsUrl('https://x.loca.lt')).toBe(true);
    expect(isPublicHttpsUrl('https://localhost:8443')).toBe(false);
    expect(isPublicHttpsUrl('http://x.loca.lt')).toBe(false);
    expect(isPublicHttpsUrl('not a url')).toBe(false);
  });
});
