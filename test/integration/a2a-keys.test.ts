import { rmSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import { A2AKeys } from '../../src/access/a2a-keys.js';
import type { A2ACaller } from '../../src/a2a/chat-core.js';
import { A2AKeyGate } from '../../src/a2a/key-gate.js';
import type { AccessPolicy } from '../../src/protocol/console-api.js';
import { A2AKeyFile } from '../../src/state/a2a-key-store.js';
import { a2aClient, startA2AAgent, type A2AAgent, type Transport } from '../helpers/a2a-agent.js';
import { asTask, replyText, send } from '../helpers/a2a-messages.js';
import { tempDir } from '../helpers/agents.js';

// The key gate in front of the real A2A front door, called by the SDK's own client on both transports.
// Real: the keys in a data dir, the gate, the SDK's handler and transports. Stand-ins: the chat core (no
// gateway here), and `admit` and `admitRequest`, which are the shared admission core's (they take every
// turn and request in this test).
let agent: A2AAgent;
let keys: A2AKeys;
let keysDir: string;
let policy: AccessPolicy = 'pairing';
const clock = { now: Date.now() };

beforeAll(async () => {
  keysDir = tempDir('a2a-keys-gate-');
  keys = new A2AKeys({ records: new A2AKeyFile(keysDir), now: () => clock.now });
  const keyGate = new A2AKeyGate({ keys, policy: () => policy });
  agent = await startA2AAgent({
    gate: {
      authenticate: (request) => keyGate.authenticate(request),
      admit: async () => undefined,
      admitRequest: async () => undefined,
    },
  });
});

afterAll(async () => {
  await agent.close();
  await keys.close();
  rmSync(keysDir, { recursive: true, force: true });
});

beforeEach(() => {
  policy = 'pairing';
  agent.core.turns.length = 0;
});

function rpc(headers: Record<string, string>) {
  return fetch(`${agent.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
    }),
  });
}

async function refusal(response: Response): Promise<{ status: number; message: string }> {
  const body = (await response.json()) as { error: { message: string } };
  return { status: response.status, message: body.error.message };
}

describe.each<Transport>(['JSONRPC', 'HTTP+JSON'])('A2A keys over %s', (transport) => {
  it('lets a key holder in as the key: its id, name, issue date and limits', async () => {
    const { key, secret } = await keys.issue({ name: 'Research agent', limits: { tokensPerDay: 5000 } });
    const client = await a2aClient(agent.url, secret, transport);
    const task = asTask(await client.sendMessage(send('hello')));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyText(task)).toBe('Hello, Research agent.');
    expect(agent.core.turns.map((turn) => turn.caller)).toEqual([
      {
        id: `a2a-key:${key.id}`,
        name: 'Research agent',
        keyId: key.id,
        issuedAt: key.createdAt,
        limits: { tokensPerDay: 5000 },
      },
    ]);
  });

  it('refuses a caller without a key, saying how to get one', async () => {
    const client = await a2aClient(agent.url, undefined, transport);
    const error = await client.sendMessage(send('hello')).catch((caught: unknown) => caught);
    expect(String((error as Error).message)).toContain(
      'ask the operator of this agent for one, and send it with every request as `Authorization: Bearer <key>`',
    );
    expect(agent.core.turns).toEqual([]);
  });

  it('refuses a key revoked in the middle of a conversation from the next message on', async () => {
    const { key, secret } = await keys.issue({ name: 'Partner' });
    const client = await a2aClient(agent.url, secret, transport);
    const first = asTask(await client.sendMessage(send('hello')));
    await keys.revoke(key.id);
    const error = await client
      .sendMessage(send('and again', { contextId: first.contextId }))
      .catch((caught: unknown) => caught);
    expect(String((error as Error).message)).toContain("This A2A key was revoked by this agent's operator");
    await expect(client.getTask({ tenant: '', id: first.id })).rejects.toThrow(/revoked/);
    expect(agent.core.turns).toHaveLength(1);
  });
});

describe('A2A keys: refusals and identities', () => {
  it('answers 401 naming what is wrong with the key: none, another scheme, unknown, revoked, expired', async () => {
    const { secret: revoked, key } = await keys.issue({ name: 'Old' });
    await keys.revoke(key.id);
    const { secret: expiring } = await keys.issue({
      name: 'Trial',
      expiresAt: new Date(clock.now + 60_000).toISOString(),
    });
    clock.now += 60_000;
    try {
      const answers = await Promise.all(
        [
          {} as Record<string, string>,
          { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
          { Authorization: 'Bearer abk_0123456789ab_' + 'A'.repeat(43) },
          { Authorization: `Bearer ${revoked}` },
          { Authorization: `bearer ${expiring}` },
        ].map(async (headers) => refusal(await rpc(headers))),
      );
      expect(answers.map((answer) => answer.status)).toEqual([401, 401, 401, 401, 401]);
      expect(answers.map((answer) => answer.message)).toEqual([
        expect.stringMatching(
          /^This agent takes A2A calls from holders of an A2A key only: ask the operator/,
        ),
        expect.stringMatching(/^The Authorization header must be `Bearer <A2A key>`/),
        expect.stringMatching(/^This A2A key is not one this agent's operator issued/),
        expect.stringMatching(/^This A2A key was revoked/),
        expect.stringMatching(/^This A2A key expired on/),
      ]);
      expect(agent.core.turns).toEqual([]);
    } finally {
      clock.now -= 60_000;
    }
  });

  it('under the open policy lets a keyless caller in as its address, but still refuses a wrong key', async () => {
    policy = 'open';
    const anonymous = await rpc({});
    expect(anonymous.status).toBe(200);
    await anonymous.text();
    expect(agent.core.turns.map((turn) => turn.caller)).toEqual([
      { id: 'a2a-anon:127.0.0.1', name: 'keyless caller at 127.0.0.1', limits: {} },
    ]);
    expect(
      await refusal(await rpc({ Authorization: 'Bearer abk_0123456789ab_' + 'B'.repeat(43) })),
    ).toMatchObject({
      status: 401,
      message: expect.stringMatching(/^This A2A key is not one this agent's operator issued/),
    });
  });

  it('keeps two keys apart: one never reads the task of another', async () => {
    const alice = await keys.issue({ name: 'Alice' });
    const bob = await keys.issue({ name: 'Bob' });
    const aliceClient = await a2aClient(agent.url, alice.secret);
    const bobClient = await a2aClient(agent.url, bob.secret);
    const task = asTask(await aliceClient.sendMessage(send('mine')));
    await expect(bobClient.getTask({ tenant: '', id: task.id })).rejects.toThrow(/not found/i);
    expect((await aliceClient.getTask({ tenant: '', id: task.id })).id).toBe(task.id);
    const callers = agent.core.turns.map((turn): A2ACaller => turn.caller);
    expect(callers.map((caller) => caller.id)).toEqual([`a2a-key:${alice.key.id}`]);
  });
});
