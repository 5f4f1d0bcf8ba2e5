import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type TestAgent } from '../helpers/agents.js';

// The envelope POSTs skip Koa (server.ts callback()); an envelope URL with a query still goes through it.
// Both must answer alike: the same status, the same signed headers, the same body shape.
let agent: TestAgent;
beforeAll(async () => {
  agent = await startAgent();
});
afterAll(() => agent.close());

const refusal = async (path: string) => {
  const response = await fetch(`${agent.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"not": "an envelope"}',
  });
  const headers = Object.fromEntries(
    [...response.headers].filter(
      ([name]) => !['date', 'content-digest', 'signature', 'signature-input'].includes(name),
    ),
  );
  const signed = ['content-digest', 'signature', 'signature-input'].every((name) =>
    response.headers.has(name),
  );
  // The span id is fresh on every reply: everything else must match.
  const { spanId, ...body } = (await response.json()) as { spanId?: string; error?: { code?: string } };
  expect(spanId).toMatch(/^[0-9a-f]{16}$/);
  return {
    status: response.status,
    headers,
    signed,
    body,
  };
};

describe('the agent port: the fast path and the Koa path answer alike', () => {
  it('a refused envelope gets the same signed reply with and without a query in the URL', async () => {
    const fast = await refusal('/agent/message');
    const throughKoa = await refusal('/agent/message?x=1');
    expect(fast.status).toBe(401);
    expect(fast.signed).toBe(true);
    expect(throughKoa).toEqual(fast);
    expect(fast.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(fast.body.error?.code).toBe('AUTH_FAILED');
  });

  it('other methods and near-miss paths are not envelopes', async () => {
    for (const method of ['GET', 'PUT']) {
      const response = await fetch(`${agent.url}/agent/task`, { method });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
    for (const path of ['//agent/message', '/agent/message/', '/AGENT/MESSAGE']) {
      const response = await fetch(`${agent.url}${path}`, { method: 'POST', body: '{}' });
      expect(response.status, path).toBe(404);
    }
  });
});
