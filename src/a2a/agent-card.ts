import { A2A_PROTOCOL_VERSION, type AgentCard, type AgentInterface } from '@a2a-js/sdk';
import { duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';
import { INPUT_MODES } from '../calls/attachments.js';
import { CHAIN_EXTENSION } from './chain-metadata.js';

/** Where the A2A front door answers on the agent port (SAMVAD's card stays at /.well-known/agent.json). */
export const A2A_PATHS = {
  card: '/.well-known/agent-card.json',
  jwks: '/.well-known/jwks.json',
  jsonRpc: '/a2a/jsonrpc',
  rest: '/a2a/rest',
} as const;

/** Where the published skills but the default one answer: each its own card and transports (README "A2A skills"). */
export const SKILLS_PATH = '/a2a/skills/';

/**
 * A published skill's own A2A paths: its card under its base (so the SDK's `createFromUrl` on the base, with
 * a trailing slash, finds it), and its JSON-RPC and HTTP+JSON interfaces beside it.
 */
export function skillPaths(id: string): { base: string; card: string; jsonRpc: string; rest: string } {
  const base = `${SKILLS_PATH}${id}`;
  return { base, card: `${base}${A2A_PATHS.card}`, jsonRpc: `${base}/jsonrpc`, rest: `${base}/rest` };
}

/** Whether an `A2A-Version` value asks for v0.3 (`0.3` or `0.3.x`), served through the SDK's compat layer. */
export function isLegacyVersion(version: string | string[] | undefined): boolean {
  const value = Array.isArray(version) ? version[0] : version;
  return /^0\.3(\.\d+)?$/.test(value?.trim() ?? '');
}

/** The name of the card's security scheme: an A2A key the operator issued, sent as a bearer token. */
export const KEY_SCHEME = 'a2aKey';

export interface A2ASkillInput {
  id: string;
  name: string;
  description: string;
  tags?: string[];
  examples?: string[];
}

export interface A2ACardInput {
  /** The public base URL (tunnel or --public-url), without a trailing slash. */
  baseUrl: string;
  name: string;
  description: string;
  version: string;
  /** Human-readable notes for callers (the SAMVAD intro at /agent/intro serves). */
  documentationUrl?: string;
  provider?: { organization: string; url: string };
  skills: A2ASkillInput[];
  /** The `open` policy: callers without a key are admitted too (with per-address limits). */
  keylessAllowed: boolean;
  /** The interfaces' paths: the agent's own (the default skill) unless a skill's card names its own. */
  paths?: { jsonRpc: string; rest: string };
}

/**
 * The A2A v1.0 card (unsigned). Interfaces in order of preference: JSON-RPC 1.0, HTTP+JSON 1.0, and JSON-RPC
 * 0.3 for callers still on v0.3 (the SDK's compatibility layer serves it at the same URL). Security: an
 * HTTP bearer scheme, because every A2A client sends `Authorization: Bearer` (the SDK's auth handler and
 * per-call headers, OpenClaw's per-peer tokens) while an apiKey header needs a client that reads the
 * card's header name; the key is an opaque operator-issued secret, not a JWT.
 */
export function buildA2ACard(input: A2ACardInput): AgentCard {
  const base = input.baseUrl.replace(/\/+$/, '');
  const v1 = (path: string, protocolBinding: string): AgentInterface => ({
    url: `${base}${path}`,
    protocolBinding,
    tenant: '',
    protocolVersion: A2A_PROTOCOL_VERSION,
  });
  const paths = input.paths ?? A2A_PATHS;
  const interfaces = [v1(paths.jsonRpc, 'JSONRPC'), v1(paths.rest, 'HTTP+JSON')];
  const keyed = { schemes: { [KEY_SCHEME]: { list: [] } } };
  return {
    name: input.name,
    description: input.description,
    supportedInterfaces: duplicateInterfacesForLegacy(interfaces, ['JSONRPC']),
    provider: input.provider,
    version: input.version,
    documentationUrl: input.documentationUrl,
    capabilities: {
      streaming: true,
      pushNotifications: true,
      extensions: [CHAIN_EXTENSION],
      extendedAgentCard: false,
    },
    securitySchemes: {
      [KEY_SCHEME]: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: {
            scheme: 'Bearer',
            bearerFormat: 'A2A key',
            description:
              "An A2A key issued by this agent's operator (console Access page, or `agent-bridge keys`). Ask the operator for one.",
          },
        },
      },
    },
    // OpenAPI semantics: an empty requirement is the keyless alternative.
    securityRequirements: input.keylessAllowed ? [keyed, { schemes: {} }] : [keyed],
    // What the caller core takes (calls/attachments.ts): text, text files, JSON (data parts too), images.
    defaultInputModes: [...INPUT_MODES],
    defaultOutputModes: ['text/plain'],
    skills: input.skills.map((skill) => ({
      id: skill.id,
      name: skill.name,
      description: skill.description,
      tags: skill.tags ?? [skill.id],
      examples: skill.examples ?? [],
      inputModes: [...INPUT_MODES],
      outputModes: ['text/plain'],
      securityRequirements: [],
    })),
    signatures: [],
    iconUrl: undefined,
  };
}
