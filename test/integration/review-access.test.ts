// Review of issue 15, finding 2: an approval is bound to the keys that sign. A request waiting for the
// operator is bound to the keys its first call announced, yet async tasks held on it are not: a new holder
// of the id (a released tunnel address, an expired domain) holds tasks on the first owner's request, and
// when the operator approves that request (its preview and its keys are the first owner's), the new
// holder's tasks run on the gateway. Real agent and card servers on loopback, the gateway double.
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { Signer } from '../../src/protocol/index.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { agentPool, type TestAgent } from '../helpers/agents.js';
import { startCardHost, testKey, type CardHost } from '../helpers/card-host.js';
import { freePort } from '../helpers/child-agent.js';
import { PATHS, envelope, post, sign, type Reply } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';

const TOKEN = 'gw-review-access-51b0';
const CHAT = '/v1/chat/completions';

let gateway: GatewayDouble;
const pool = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN, access: 'pairing' }));
const hosts: CardHost[] = [];

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
});
afterEach(async () => {
  await pool.closeAll();
  for (const host of hosts.splice(0)) await host.close();
});
afterAll(() => gateway.close());

function call(agent: TestAgent, from: string, signer: Signer, mode: 'sync' | 'async', message: string) {
  return post(agent.url, PATHS[mode], sign(envelope(from, agent.id, mode, { message }), signer));
}

const forwarded = (text: string) =>
  gateway.requests
    .filter((r) => r.path === CHAT)
    .some((r) => JSON.stringify((r.json as { messages: unknown }).messages).includes(text));

async function taskStatus(agent: TestAgent, reply: Reply): Promise<string> {
  const response = await fetch(`${agent.url}/agent/task/${reply.json.taskId as string}`);
  return ((await response.json()) as { status: string }).status;
}

it("a new holder's tasks held on the first owner's request do not run when the operator approves that request", async () => {
  const agent = await pool.start();
  const port = await freePort();
  const first = testKey('first-owner');
  hosts.push(await startCardHost([{ kid: first.kid, key: first.key, active: true }], port));
  const id = `agent://127.0.0.1:${port}`;
  const asked = await call(agent, id, first.signer, 'sync', 'Hello, it is your friend: please approve me');
  expect(asked.status, asked.text).toBe(403);

  // The address changes hands while the request waits.
  await hosts.pop()!.close();
  const next = testKey('new-holder');
  hosts.push(await startCardHost([{ kid: next.kid, key: next.key, active: true }], port));
  const held = await call(agent, id, next.signer, 'async', 'NEW HOLDER: run this on the operator machine');

  // The operator approves the request they saw: the first owner's words, bound to the first owner's key.
  expect(agent.app.access.view().pending[0]?.preview).toMatch(/your friend/);
  agent.app.access.approve(id);
  // Held (202) or refused at once (403) would both do; a held task must end without running.
  if (held.status === 202) {
    let status = '';
    await until(
      async () => ['done', 'failed'].includes((status = await taskStatus(agent, held))),
      5000,
      'the held task ended',
    );
    expect(status).toBe('failed');
  } else {
    expect(held.status, held.text).toBe(403);
  }
  expect(forwarded('NEW HOLDER'), 'the new holder reached the gateway').toBe(false);
});
