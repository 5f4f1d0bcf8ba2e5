// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import type { StatusResponse } from '../../renderer/src/api/contract';
import { setupSteps } from '../../renderer/src/lib/setup';

// The first-run guide's logic: which steps are done and what the operator should do next.
const base = {
  gateway: { status: 'configured', url: 'http://127.0.0.1:18789', model: 'openclaw', live: true },
  tunnel: { status: 'online', url: 'https://x.loca.lt', since: 't', provider: 'localtunnel' },
  registry: {
    status: 'registered',
    record: { registry: 'r', url: 'u', id: 'i', name: 'n', registeredAt: 't' },
  },
} as unknown as StatusResponse;
const withChange = (change: Partial<StatusResponse>) => ({ ...base, ...change }) as StatusResponse;
const states = (status: StatusResponse) =>
  setupSteps(status).map((s) => `${s.id}:${s.done ? 'done' : 'todo'}`);

describe('getting started', () => {
  it('is complete when the gateway answers, the tunnel is online and the agent is registered', () => {
    expect(states(base)).toEqual(['gateway:done', 'tunnel:done', 'registry:done']);
  });

  it('names the fix for a gateway problem, and how to configure a missing gateway', () => {
    const problem = withChange({
      gateway: {
        ...base.gateway,
        problem: {
          kind: 'endpoint-disabled',
          diagnosis: 'Chat endpoint is off.',
          fix: 'Enable it.',
          at: 't',
        },
      },
    });
    expect(setupSteps(problem)[0]).toMatchObject({ done: false, next: 'Chat endpoint is off. Enable it.' });
    const missing = withChange({ gateway: { ...base.gateway, status: 'missing GATEWAY_TOKEN' } });
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
    const ownProxy = withChange({ tunnel: { status: 'off', provider: 'none' } });
    expect(setupSteps(ownProxy)[1]?.done).toBe(true);
    const failed = withChange({
      registry: { status: 'unregistered', lastError: { message: 'HTTP 500.', fix: 'Try later.', at: 't' } },
    });
    expect(setupSteps(failed)[2]?.next).toMatch(/last attempt failed: HTTP 500\. Try later\./);
  });
});
