// Review of issue 15, finding 4: the daily token budget. It is checked before a call and charged after it,
// so calls a sender starts together all pass the check while nothing is charged yet: ten concurrent calls
// (within the per-sender limit of ten a minute) were all answered on a budget that one of them spends. A
// sender's budget may be crossed by the call that crosses it, not by every call in flight. Real agents on
// loopback and the gateway double (a gateway turn that reports 2,060 tokens, answered after 500 ms).
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LocalCallLimits } from '../../src/state/call-limits.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { agentPool } from '../helpers/agents.js';
import { PATHS, envelope, post, sign } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';

const TOKEN = 'gw-review-budget-77d3';
const TURN = { prompt_tokens: 2000, completion_tokens: 60, total_tokens: 2060 };
const BUDGET = 2000;

let gateway: GatewayDouble;
const pool = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));

beforeAll(async () => {
  gateway = await startGatewayDouble({
    token: TOKEN,
    behaviour: 'slow-first-byte',
    firstByteDelayMs: 500,
    usage: TURN,
  });
});
afterAll(async () => {
  await pool.closeAll();
  await gateway.close();
});

it('concurrent calls do not each pass a budget that none of them has been charged to yet', async () => {
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
