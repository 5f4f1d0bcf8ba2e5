// Review of issue 15, finding 4: the daily token budget. Two ways past it. It is checked before a call and
// charged after it, so calls a sender starts together all pass the check while nothing is charged yet: ten
// concurrent calls (within the per-sender limit of ten a minute) were all answered on a budget that one of
// them spends. And a stream its caller closes before the usage frame is charged the smallest prompt the
// gateway reported so far, which is nothing until some call on this process ran to its end: on a fresh
// start (or a replica nobody else calls) a sender who always hangs up at 97 % pays the size of its words,
// about 75 tokens for a turn of 2,060. Real agents on loopback and the gateway double.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { LocalCallLimits } from '../../src/state/call-limits.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { agentPool } from '../helpers/agents.js';
import { PATHS, envelope, post, sign } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';
import { readSse } from '../helpers/sse.js';

const TOKEN = 'gw-review-budget-77d3';
const TURN = { prompt_tokens: 2000, completion_tokens: 60, total_tokens: 2060 };
const BUDGET = 2000;
const REPLY = 'The quick brown fox jumps over the lazy dog; '.repeat(6).slice(0, 240);

let gateway: GatewayDouble;
const pool = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
});
beforeEach(() => {
  gateway.set({ behaviour: 'ok', usage: TURN, reply: () => REPLY, deltaDelayMs: 0 });
});
afterAll(async () => {
  await pool.closeAll();
  await gateway.close();
});

it('concurrent calls do not each pass a budget that none of them has been charged to yet', async () => {
  gateway.set({ behaviour: 'slow-first-byte', firstByteDelayMs: 500 });
  const agent = await pool.start({ settings: { tokensPerDay: BUDGET, perSender: 10 } });
  const sender = await pool.start();
  const replies = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      post(
        agent.url,
        PATHS.sync,
        sign(envelope(sender.id, agent.id, 'sync', { message: `call ${i}` }), sender.app.keys.signer),
      ),
    ),
  );
  const answered = replies.filter((reply) => reply.status === 200).length;
  const spent = () => (agent.app.server.limits as LocalCallLimits).ledger.spent(sender.id);
  await until(() => spent() >= answered * TURN.total_tokens, 3000, 'the answered calls charged');
  // The one call that crosses the budget is answered; the calls in flight with it are not all answered too.
  expect(spent(), `${answered} of 10 answered`).toBeLessThanOrEqual(BUDGET + TURN.total_tokens);
});

it('a caller who hangs up before the usage frame, on an agent no call has completed on yet, pays the prompt', async () => {
  // 97 % of the reply first, the rest (then the usage frame) a moment later.
  gateway.set({ deltas: (reply) => [reply.slice(0, 233), reply.slice(233)], deltaDelayMs: 150 });
  const agent = await pool.start({ settings: { tokensPerDay: 10_000 } });
  const sender = await pool.start();
  let answered = 0;
  for (; answered < 20; answered++) {
    const env = envelope(sender.id, agent.id, 'stream', { message: 'Tell me a story about a fox.' });
    const signed = sign(env, sender.app.keys.signer);
    const controller = new AbortController();
    const response = await fetch(`${agent.url}${PATHS.stream}`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
      signal: controller.signal,
    });
    if (response.status !== 200) {
      expect(response.status).toBe(429);
      break;
    }
    let received = 0;
    try {
      for await (const block of readSse(response)) {
        received += ((block.data as { chunk?: string } | undefined)?.chunk ?? '').length;
        if (received >= 233) {
          controller.abort();
          break;
        }
      }
    } catch (error) {
      if ((error as Error).name !== 'AbortError') throw error;
    }
    await gateway.waitForAbort();
  }
  // A caller who reads every reply to the end gets five (the fifth crosses 10,000); one who hangs up, one more.
  expect(answered).toBeLessThanOrEqual(6);
});
