// Issue 28, item 4: the chain of calls as each front door reads it. SAMVAD: the envelope field, signed in
// either form (a chain changed after signing does not verify), malformed refused naming the field, too deep
// refused with DELEGATION_EXCEEDED. A2A, through the A2A SDK's own client (v1.0 and its v0.3 path): the
// message's metadata under the extension, the same rules; the card declares the extension.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@a2a-js/sdk/client';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { a2aClient } from '../helpers/a2a-agent.js';
import { asTask, replyText, send } from '../helpers/a2a-messages.js';
import { startAgent, type TestAgent } from '../helpers/agents.js';
import { PATHS, envelope, post, sign, type Form } from '../helpers/envelopes.js';
import { expectError } from '../helpers/verify.js';
import type { EnvelopeEvent } from '../../src/agent/events.js';
import { CHAIN_EXTENSION_URI, CHAIN_FIELD, type Envelope } from '../../src/protocol/index.js';

let gateway: GatewayDouble;
let agent: TestAgent;
let peer: TestAgent;
const events: EnvelopeEvent[] = [];

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: 'gw-token-chain' });
  const settings = { gatewayUrl: gateway.url, gatewayToken: 'gw-token-chain' };
  agent = await startAgent({ settings });
  peer = await startAgent({ settings });
  agent.app.on('envelope', (event: EnvelopeEvent) => events.push(event));
});

afterAll(async () => {
  await agent.close();
  await peer.close();
  await gateway.close();
});

const chatWith = (chain: unknown): Envelope =>
  envelope(peer.id, agent.id, 'sync', { message: 'hello' }, { [CHAIN_FIELD]: chain } as Partial<Envelope>);

const chats = () => gateway.requests.filter((r) => r.path === '/v1/chat/completions').length;

describe('SAMVAD: the envelope field x-agent-bridge-chain', () => {
  it.each<Form>(['headers', 'envelope', 'both'])(
    'signed in form %s: the call goes on, and Traffic shows its chain and the step passed',
    async (form) => {
      const chain = { id: `chain-form-${form}`, hop: 2 };
      const reply = await post(agent.url, PATHS.sync, sign(chatWith(chain), peer.app.keys.signer, form));
      expect(reply.status, reply.text).toBe(200);
      expect(events.at(-1)).toMatchObject({ verdict: 'accepted', chain });
      expect(events.at(-1)?.passed).toContain('chain');
    },
  );

  it.each<Form>(['headers', 'envelope'])(
    'form %s covers it: a hop lowered after signing fails',
    async (form) => {
      const signed = sign(chatWith({ id: 'chain-tampered', hop: 4 }), peer.app.keys.signer, form);
      const lowered = { body: signed.body.replace('"hop":4', '"hop":1'), headers: signed.headers };
      expect(lowered.body).not.toBe(signed.body);
      expectError(await post(agent.url, PATHS.sync, lowered), 401, 'AUTH_FAILED');
    },
  );

  it.each([
    [{ id: 'short', hop: 1 }, /field "x-agent-bridge-chain\.id" must match pattern/],
    [{ id: 'chain-bad-hop', hop: 0 }, /field "x-agent-bridge-chain\.hop" must be >= 1/],
    ['chain-as-text', /field "x-agent-bridge-chain" must be object/],
  ])('a malformed chain %j: 400 SCHEMA_INVALID naming the field', async (chain, message) => {
    const before = chats();
    const reply = await post(agent.url, PATHS.sync, sign(chatWith(chain), peer.app.keys.signer));
    expectError(reply, 400, 'SCHEMA_INVALID', message);
    expect(chats()).toBe(before);
  });

  it('a hop over the limit: 400 DELEGATION_EXCEEDED, at the chain step, before any limit or the gateway', async () => {
    const before = chats();
    const reply = await post(
      agent.url,
      PATHS.sync,
      sign(chatWith({ id: 'chain-too-deep', hop: 5 }), peer.app.keys.signer),
    );
    expectError(reply, 400, 'DELEGATION_EXCEEDED', /hop 5 of a chain.*at most 4 hops deep.*hopLimit/);
    expect(chats()).toBe(before);
    expect(events.at(-1)).toMatchObject({
      verdict: 'chain',
      chain: { id: 'chain-too-deep', hop: 5 },
      passed: ['size', 'shape', 'timestamp', 'signature'],
    });
  });

  it('a chain this agent sent out comes back: refused as a loop', async () => {
    const sent = agent.app.chains.next();
    const reply = await post(
      agent.url,
      PATHS.sync,
      sign(chatWith({ id: sent.id, hop: 2 }), peer.app.keys.signer),
    );
    expectError(reply, 400, 'DELEGATION_EXCEEDED', /came back to this agent/);
  });
});

describe.each(['1.0', '0.3'] as const)('A2A %s: the call-chain extension', (version) => {
  let client: Client;

  beforeAll(async () => {
    const issued = await agent.app.a2aKeys.issue({ name: `chain ${version}` });
    client = await a2aClient(agent.url, issued.secret);
    if (version === '0.3') {
      // The SDK's v0.3 path: the card's v0.3 interface (duplicated for legacy callers).
      const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } =
        await import('@a2a-js/sdk/client');
      const card = await client.getAgentCard();
      const legacyCard = {
        ...card,
        supportedInterfaces: card.supportedInterfaces.filter((i) => i.protocolVersion === '0.3'),
      };
      const factory = new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          transports: [
            new JsonRpcTransportFactory({
              fetchImpl: (input, init) =>
                fetch(input, {
                  ...init,
                  headers: {
                    ...(init?.headers as Record<string, string>),
                    authorization: `Bearer ${issued.secret}`,
                  },
                }),
              legacyCompat: { enabled: true },
            }),
          ],
        }),
      );
      client = await factory.createFromAgentCard(legacyCard);
    }
  });

  const withChain = (text: string, chain: unknown) => {
    const request = send(text);
    request.message!.metadata = { [CHAIN_EXTENSION_URI]: chain };
    request.message!.extensions = [CHAIN_EXTENSION_URI];
    return request;
  };

  it('a chain within the limit: answered, and Traffic shows it', async () => {
    const chain = { id: `a2a-chain-${version}`, hop: 3 };
    const task = asTask(await client.sendMessage(withChain('hello', chain)));
    expect(replyText(task)).toBe('echo: hello');
    expect(events.at(-1)).toMatchObject({ protocol: 'a2a', a2a: { version }, verdict: 'accepted', chain });
  });

  it('a hop over the limit: refused with the message naming it, nothing reaches the gateway', async () => {
    const before = chats();
    await expect(client.sendMessage(withChain('hello', { id: 'a2a-deep-chain', hop: 9 }))).rejects.toThrow(
      /hop 9 of a chain of calls between agents \(chain a2a-deep-chain\).*at most 4 hops deep/,
    );
    expect(chats()).toBe(before);
    expect(events.at(-1)).toMatchObject({
      protocol: 'a2a',
      verdict: 'chain',
      status: 400,
      code: 'DELEGATION_EXCEEDED',
      a2a: { failedAt: 'limits' },
    });
  });

  it('a malformed chain: InvalidParams naming the metadata key', async () => {
    await expect(client.sendMessage(withChain('hello', { id: 'a2a-bad', hop: -1 }))).rejects.toThrow(
      /message\.metadata\["https:\/\/agentbridge\.dev\/a2a\/extensions\/call-chain\/v1"\] must have an id/,
    );
  });
});

describe('the A2A card', () => {
  it.each([
    ['1.0', { 'A2A-Version': '1.0' }, undefined],
    ['0.3', {}, false],
  ])('declares the call-chain extension, not required (card for %s)', async (_version, headers, required) => {
    const response = await fetch(`${agent.url}/.well-known/agent-card.json`, { headers });
    const card = (await response.json()) as {
      capabilities: { extensions?: { uri: string; required?: boolean }[] };
    };
    const description = expect.stringContaining('{id, hop}') as string;
    expect(card.capabilities.extensions).toEqual([
      { uri: CHAIN_EXTENSION_URI, description, ...(required === undefined ? {} : { required }) },
    ]);
  });
});
