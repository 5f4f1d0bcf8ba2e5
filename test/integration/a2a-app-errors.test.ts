import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startAgent, type TestAgent } from '../helpers/agents.js';

// The operator's log line for an A2A failure that is not the caller's to read, from the real app.
let agent: TestAgent;

beforeAll(async () => {
  agent = await startAgent();
});

afterAll(async () => {
  await agent.close();
});

describe('the A2A door reports a failure to the operator', () => {
  it('as one escaped, bounded line, whatever was thrown (not only an Error)', async () => {
    // A thrown string cannot be provoked from the real key store: its verify is replaced for this call.
    const thrown = `store said\nno ${'x'.repeat(400)}`;
    const verify = vi.spyOn(agent.app.a2aKeys, 'verify').mockRejectedValue(thrown);
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const response = await fetch(`${agent.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer abk_0123456789ab_secret' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 't' } }),
      });
      expect(response.status).toBe(500);
      const lines = logged.mock.calls
        .map((args) => String(args[0]))
        .filter((l) => l.startsWith('Agent: A2A:'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('store said\\nno xxx');
      expect(lines[0]).not.toContain('\n');
      expect(lines[0]!.length).toBeLessThan(340);
    } finally {
      verify.mockRestore();
      logged.mockRestore();
    }
  });
});
