import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import {
  buildCard,
  cardSchema,
  envelopeSchema,
  type CardInput,
  type SkillDef,
} from '../../src/protocol/index.js';

// ajv-formats ships CommonJS: its default export arrives wrapped under ESM.
const addFormats = addFormatsModule as unknown as <T extends Ajv>(ajv: T) => T;

const REFERENCE = fileURLToPath(new URL('../../../shared/reference/samvad-v1.2/', import.meta.url));
const hasReference = existsSync(REFERENCE);
if (!hasReference) console.warn(`SKIPPED published-schema comparisons: ${REFERENCE} is missing`);
const describeReference = hasReference ? describe : describe.skip;

function referenceValidator(name: string): ValidateFunction {
  const schema = JSON.parse(readFileSync(REFERENCE + name, 'utf8')) as object;
  return addFormats(new Ajv2020({ allErrors: true, strict: false })).compile(schema);
}

const ours = addFormats(new Ajv({ allErrors: true, strict: false }));
const validateCard = ours.compile(cardSchema);
const validateEnvelope = ours.compile(envelopeSchema);

const skill = (over: Partial<SkillDef>): SkillDef => ({
  id: 'chat',
  name: 'Chat',
  description: 'Talk to the assistant',
  inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  outputSchema: { type: 'object' },
  modes: ['sync', 'async', 'stream'],
  trust: 'public',
  ...over,
});

const input: CardInput = {
  url: 'https://bridge.example/',
  name: 'Agent Bridge',
  version: '0.1.0',
  description: 'A bridge',
  specializations: ['chat'],
  models: [{ provider: 'openclaw', model: 'default' }],
  skills: [
    skill({}),
    skill({ id: 'private-chat', trust: 'trusted-peers', allowedPeers: ['agent://friend.example'] }),
    skill({ id: 'members', trust: 'authenticated', modes: ['sync'] }),
  ],
  publicKeys: [
    { kid: 'k2', key: Buffer.alloc(32, 2).toString('base64'), active: true },
    { kid: 'k1', key: Buffer.alloc(32, 1).toString('base64'), active: false },
  ],
  rateLimit: { requestsPerMinute: 60, requestsPerSender: 10, tokensPerSenderPerDay: 100_000 },
  cardTTL: 300,
};

type LooseCard = Record<string, unknown> & {
  skills: Record<string, unknown>[];
  publicKeys: Record<string, unknown>[];
};
const card = () => structuredClone(buildCard(input)) as unknown as LooseCard;
const at = <T>(list: T[], index: number): T => {
  const item = list[index];
  if (item === undefined) throw new Error(`no item ${index}`);
  return item;
};

describe('buildCard and our cardSchema', () => {
  it('builds a card our schema accepts, id from the url host, bearer offered for authenticated skills', () => {
    const built = buildCard(input);
    expect(validateCard(built), JSON.stringify(validateCard.errors)).toBe(true);
    expect(built.id).toBe('agent://bridge.example');
    expect(built.url).toBe('https://bridge.example');
    expect(built.auth.schemes).toEqual(['bearer', 'none']);
    expect(built.skills[1]?.allowedPeers).toEqual(['agent://friend.example']);
    expect(built.skills[0]).not.toHaveProperty('allowedPeers');
  });

  it('keeps local skill fields (handlers) out of the card', () => {
    const withHandler = { ...skill({}), handler: () => 'hi' } as SkillDef;
    const built = buildCard({ ...input, skills: [withHandler] });
    expect(built.skills[0]).not.toHaveProperty('handler');
    expect(validateCard(built)).toBe(true);
  });

  it.each<[string, (c: LooseCard) => void]>([
    ['an extra top-level field', (c) => (c.owner = 'me')],
    ['an extra skill field', (c) => (at(c.skills, 0).handler = 'x')],
    ['an extra key field', (c) => (at(c.publicKeys, 0).alg = 'ed25519')],
    ['a missing required field', (c) => delete c.name],
    ['an unknown mode', (c) => (at(c.skills, 0).modes = ['batch'])],
    ['a non-agent allowed peer', (c) => (at(c.skills, 1).allowedPeers = ['https://x'])],
  ])('refuses %s', (_name, mutate) => {
    const c = card();
    mutate(c);
    expect(validateCard(c)).toBe(false);
  });
});

describeReference('against the published schemas (samvad-v1.2)', () => {
  const validateRefCard = hasReference ? referenceValidator('agent-card.schema.json') : null;
  const validateRefEnvelope = hasReference ? referenceValidator('request-envelope.schema.json') : null;

  it('the published card schema accepts our card, trusted-peers skill included', () => {
    expect(validateRefCard?.(buildCard(input)), JSON.stringify(validateRefCard?.errors)).toBe(true);
  });

  it('the published card schema refuses the same extra fields ours refuses', () => {
    const c = card();
    c.owner = 'me';
    expect(validateRefCard?.(c)).toBe(false);
    const s = card();
    at(s.skills, 0).handler = 'x';
    expect(validateRefCard?.(s)).toBe(false);
    const k = card();
    at(k.publicKeys, 0).alg = 'ed25519';
    expect(validateRefCard?.(k)).toBe(false);
  });

  const envelope = {
    from: 'agent://a.example',
    to: 'agent://b.example:8443',
    skill: 'chat',
    mode: 'sync',
    nonce: 'n0nce-1234',
    timestamp: '2026-01-02T03:04:05.678Z',
    traceId: 'trace',
    spanId: 'span',
    payload: { message: 'hi' },
  };

  it.each([
    ['a minimal envelope', {}],
    ['bearer auth', { auth: { scheme: 'bearer', token: 't' } }],
    ['a null parentSpanId and delegationToken', { parentSpanId: null, delegationToken: null }],
    ['a parent span', { parentSpanId: 'parent' }],
    ['an https callbackUrl', { mode: 'async', callbackUrl: 'https://me.example/cb' }],
    ['a 64-char nonce', { nonce: 'n'.repeat(64) }],
  ])('both schemas accept %s', (_name, over) => {
    const value = { ...envelope, ...over };
    expect(validateEnvelope(value), JSON.stringify(validateEnvelope.errors)).toBe(true);
    expect(validateRefEnvelope?.(value), JSON.stringify(validateRefEnvelope?.errors)).toBe(true);
  });

  it.each([
    ['a missing nonce', { nonce: undefined }],
    ['a missing spanId', { spanId: undefined }],
    ['a 7-char nonce', { nonce: 'n'.repeat(7) }],
    ['a 65-char nonce', { nonce: 'n'.repeat(65) }],
    ['an unknown mode', { mode: 'batch' }],
    ['a non-agent sender', { from: 'https://a.example' }],
    ['a 65-char skill id', { skill: 's'.repeat(65) }],
    ['a non-date timestamp', { timestamp: 'yesterday' }],
    ['a numeric parentSpanId', { parentSpanId: 5 }],
    ['an unknown auth scheme', { auth: { scheme: 'basic' } }],
    ['a payload that is not an object', { payload: 'hi' }],
  ])('both schemas refuse %s', (_name, over) => {
    const value = JSON.parse(JSON.stringify({ ...envelope, ...over })) as object;
    expect(validateEnvelope(value)).toBe(false);
    expect(validateRefEnvelope?.(value)).toBe(false);
  });
});
