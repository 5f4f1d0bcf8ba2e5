import { describe, expect, it } from 'vitest';
import { AgentCard } from '@a2a-js/sdk';
import { parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { buildA2ACard, type A2ACardInput } from '../../src/a2a/agent-card.js';
import { legacyCard } from '../../src/a2a/card-route.js';

// The media types a message may carry (calls/attachments.ts), written out: the card must say exactly these.
const INPUT_MODES = [
  'text/plain',
  'text/markdown',
  'text/csv',
  'text/*',
  'application/json',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
];

const input: A2ACardInput = {
  baseUrl: 'https://agent.example.com/',
  name: 'Operator agent',
  description: 'An OpenClaw agent',
  version: '1.2.0',
  documentationUrl: 'https://agent.example.com/agent/intro',
  skills: [{ id: 'chat', name: 'Chat', description: 'Talk with the agent', examples: ['Hello?'] }],
  keylessAllowed: false,
};

describe('the A2A card', () => {
  it('lists both interfaces at v1.0, JSON-RPC at v0.3 too, the chat skill, streaming, push and the key scheme', () => {
    const json = AgentCard.toJSON(buildA2ACard(input)) as Record<string, unknown>;
    expect(json.supportedInterfaces).toEqual([
      { url: 'https://agent.example.com/a2a/jsonrpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: 'https://agent.example.com/a2a/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url: 'https://agent.example.com/a2a/jsonrpc', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ]);
    expect(json.capabilities).toEqual({
      streaming: true,
      pushNotifications: true,
      extendedAgentCard: false,
      // The call-chain extension (protocol/call-chain.ts): optional, declared so callers know to send it.
      extensions: [
        {
          uri: 'https://agentbridge.dev/a2a/extensions/call-chain/v1',
          description: expect.stringContaining('{id, hop}') as string,
        },
      ],
    });
    expect(json.securitySchemes).toEqual({
      a2aKey: { httpAuthSecurityScheme: expect.objectContaining({ scheme: 'Bearer' }) },
    });
    expect(json.securityRequirements).toEqual([{ schemes: { a2aKey: {} } }]);
    expect(json.skills).toEqual([
      expect.objectContaining({
        id: 'chat',
        tags: ['chat'],
        examples: ['Hello?'],
        inputModes: INPUT_MODES,
      }),
    ]);
  });

  it('says, for the card and each skill, what a message may carry: text, text files, JSON, four image types', () => {
    const card = buildA2ACard({
      ...input,
      skills: [...input.skills, { id: 'research', name: 'R', description: 'r' }],
    });
    expect(card.defaultInputModes).toEqual(INPUT_MODES);
    for (const skill of card.skills) expect(skill.inputModes).toEqual(INPUT_MODES);
    expect(card.defaultOutputModes).toEqual(['text/plain']);
  });

  it('offers a keyless alternative under the open policy', () => {
    const card = buildA2ACard({ ...input, keylessAllowed: true });
    expect(card.securityRequirements).toEqual([{ schemes: { a2aKey: { list: [] } } }, { schemes: {} }]);
    expect(legacyCard(card).security).toEqual([{ a2aKey: [] }, {}]);
  });

  it('reads back through the SDK’s v0.3 card parser as the v0.3 JSON-RPC interface and the bearer scheme', () => {
    const { supportedInterfaces: _v1, ...v03 } = legacyCard(buildA2ACard(input));
    expect(v03).toMatchObject({
      url: 'https://agent.example.com/a2a/jsonrpc',
      preferredTransport: 'JSONRPC',
    });
    const parsed = parseLegacyAgentCard(v03);
    expect(parsed.supportedInterfaces).toEqual([
      expect.objectContaining({
        url: 'https://agent.example.com/a2a/jsonrpc',
        protocolBinding: 'JSONRPC',
        protocolVersion: '0.3',
      }),
    ]);
    expect(parsed.securitySchemes.a2aKey?.scheme).toMatchObject({
      $case: 'httpAuthSecurityScheme',
      value: expect.objectContaining({ scheme: 'Bearer' }),
    });
    expect(parsed.skills.map((s) => s.id)).toEqual(['chat']);
  });
});
