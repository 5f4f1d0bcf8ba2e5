// Every traffic entry's `time` is when its call started, in and out alike (issue 16: calls out were logged with
// their start and calls in with their end, so "newest first" mixed the two up). A call in whose gateway answer
// takes a while is logged when it ends, with the time it began. Real agents and the gateway double.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnvelopeEvent } from '../../src/agent/events.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startAgent, type TestAgent } from '../helpers/agents.js';
import { envelope, post, sign } from '../helpers/envelopes.js';

const TOKEN = 'gw-token-traffic-time';
let gateway: GatewayDouble;
let agent: TestAgent;
let peer: TestAgent;

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN, behaviour: 'slow-first-byte', firstByteDelayMs: 400 });
  agent = await startAgent({ settings: { gatewayUrl: gateway.url, gatewayToken: TOKEN } });
  peer = await startAgent();
});

afterAll(async () => {
  await agent.close();
  await peer.close();
  await gateway.close();
});

describe('a call in, logged when it ends', () => {
  it('carries the time it started: its time plus its duration is when it was logged', async () => {
    const logged: { event: EnvelopeEvent; at: number }[] = [];
    const listener = (event: EnvelopeEvent) => logged.push({ event, at: Date.now() });
    agent.app.on('envelope', listener);
    try {
      const before = Date.now();
      const call = sign(
        envelope(peer.id, agent.app.card().id, 'sync', { message: 'take your time' }),
        peer.app.keys.signer,
      );
      const reply = await post(agent.url, '/agent/message', call);
      expect(reply.status, reply.text).toBe(200);
      const [{ event, at }] = logged as [{ event: EnvelopeEvent; at: number }];
      expect(event.durationMs).toBeGreaterThanOrEqual(400);
      const started = Date.parse(event.time);
      expect(started).toBeGreaterThanOrEqual(before);
      // Started, then lasted durationMs, then logged (a millisecond of rounding either way).
      expect(Math.abs(started + event.durationMs - at)).toBeLessThanOrEqual(5);
    } finally {
      agent.app.off('envelope', listener);
    }
  });
});
