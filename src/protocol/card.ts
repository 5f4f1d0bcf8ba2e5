import {
  DEFAULT_ENDPOINTS,
  PROTOCOL_VERSION,
  agentIdForUrl,
  type AgentCard,
  type PublicKeyEntry,
  type RateLimit,
  type SkillDef,
} from './types.js';

export interface CardInput {
  /** Public base URL; the id follows from its host. */
  url: string;
  name: string;
  version: string;
  description: string;
  specializations: string[];
  models: { provider: string; model: string }[];
  skills: SkillDef[];
  publicKeys: PublicKeyEntry[];
  rateLimit: RateLimit;
  cardTTL: number;
}

export function buildCard(input: CardInput): AgentCard {
  const url = input.url.replace(/\/+$/, '');
  const bearer = input.skills.some((skill) => skill.trust === 'authenticated');
  return {
    id: agentIdForUrl(url),
    name: input.name,
    version: input.version,
    description: input.description,
    url,
    protocolVersion: PROTOCOL_VERSION,
    specializations: input.specializations,
    models: input.models,
    skills: input.skills.map(copySkill),
    publicKeys: input.publicKeys.map(({ kid, key, active }) => ({ kid, key, active })),
    auth: { schemes: bearer ? ['bearer', 'none'] : ['none'] },
    rateLimit: { ...input.rateLimit },
    cardTTL: input.cardTTL,
    endpoints: { ...DEFAULT_ENDPOINTS },
  };
}

// Only the published skill fields reach the card: handlers and other local fields never do.
function copySkill(skill: SkillDef): SkillDef {
  const copy: SkillDef = {
    id: skill.id,
    name: skill.name,
    description: skill.description,
    inputSchema: skill.inputSchema,
    outputSchema: skill.outputSchema,
    modes: [...skill.modes],
    trust: skill.trust,
  };
  if (skill.trust === 'trusted-peers') copy.allowedPeers = [...(skill.allowedPeers ?? [])];
  return copy;
}

const agentId = { type: 'string', pattern: '^agent://[^/\\s]+$' } as const;

/** The project's own JSON Schema for the card it serves and the peer cards it reads. */
export const cardSchema = {
  $id: 'agent-bridge/card',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'version', 'description', 'url', 'protocolVersion', 'skills', 'publicKeys'],
  properties: {
    id: agentId,
    name: { type: 'string', maxLength: 100 },
    version: { type: 'string' },
    description: { type: 'string', maxLength: 500 },
    url: { type: 'string', format: 'uri' },
    protocolVersion: { type: 'string' },
    specializations: { type: 'array', items: { type: 'string', maxLength: 50 } },
    models: {
      type: 'array',
      items: {
        type: 'object',
        required: ['provider', 'model'],
        properties: { provider: { type: 'string' }, model: { type: 'string' } },
      },
    },
    skills: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'name', 'description', 'inputSchema', 'outputSchema', 'modes', 'trust'],
        properties: {
          id: { type: 'string', maxLength: 64 },
          name: { type: 'string', maxLength: 100 },
          description: { type: 'string', maxLength: 500 },
          inputSchema: { type: 'object' },
          outputSchema: { type: 'object' },
          modes: { type: 'array', minItems: 1, items: { enum: ['sync', 'async', 'stream'] } },
          trust: { enum: ['public', 'authenticated', 'trusted-peers'] },
          allowedPeers: { type: 'array', items: agentId },
        },
      },
    },
    // Bounded: a peer card is read before its sender is verified (memory exhaustion through the cache).
    publicKeys: {
      type: 'array',
      minItems: 1,
      maxItems: 32,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['kid', 'key', 'active'],
        properties: {
          kid: { type: 'string', minLength: 1, maxLength: 256 },
          key: { type: 'string', maxLength: 64 },
          active: { type: 'boolean' },
        },
      },
    },
    auth: {
      type: 'object',
      properties: { schemes: { type: 'array', items: { enum: ['bearer', 'none'] } } },
    },
    rateLimit: {
      type: 'object',
      properties: {
        requestsPerMinute: { type: 'integer', minimum: 1 },
        requestsPerSender: { type: 'integer', minimum: 1 },
        tokensPerSenderPerDay: { type: 'integer', minimum: 1 },
      },
    },
    cardTTL: { type: 'integer', minimum: 0 },
    endpoints: {
      type: 'object',
      properties: Object.fromEntries(
        Object.keys(DEFAULT_ENDPOINTS).map((name) => [name, { type: 'string' }]),
      ),
    },
  },
} as const;
