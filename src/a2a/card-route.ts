import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AgentInterface, type AgentCard } from '@a2a-js/sdk';
import type { PublicKeyEntry, Signer } from '../protocol/index.js';
import { A2A_PATHS, buildA2ACard, isLegacyVersion, KEY_SCHEME, type A2ACardInput } from './agent-card.js';
import { cardJwks, signedCardJson, signedLegacyCardJson } from './card-signature.js';

export interface CardRouteOptions {
  /** The card's inputs as they are now (public URL, names, policy change while running). */
  card(): A2ACardInput;
  /** The keystore's current signer: a rotation shows as a new kid, and the card is signed again. */
  signer(): Signer;
  publicKeys(): PublicKeyEntry[];
  cardTTLSeconds(): number;
}

interface Signed {
  key: string;
  v1: string;
  legacy: string;
}

/**
 * `/.well-known/agent-card.json` and the JWKS its signatures name. The card is signed once per change of
 * its content or of the signing key, and served by `A2A-Version`: 1.0 gets the v1.0 card; 0.3, or no header
 * (§3.6.2), gets the v0.3 card with the v1.0 interfaces embedded (as the SDK's compat layer does).
 */
export class CardRoute {
  private signed: Signed | undefined;

  constructor(private readonly options: CardRouteOptions) {}

  /** The v1.0 card as served now. */
  card(): Record<string, unknown> {
    return JSON.parse(this.current().v1) as Record<string, unknown>;
  }

  serveCard(req: IncomingMessage, res: ServerResponse): void {
    const signed = this.current();
    const version = header(req, 'a2a-version');
    const legacy = version === undefined || isLegacyVersion(version);
    this.send(req, res, legacy ? signed.legacy : signed.v1, { Vary: 'A2A-Version' });
  }

  serveJwks(req: IncomingMessage, res: ServerResponse): void {
    this.send(req, res, JSON.stringify(cardJwks(this.options.publicKeys())), {});
  }

  private current(): Signed {
    const input = this.options.card();
    const signer = this.options.signer();
    const card = buildA2ACard(input);
    const key = `${signer.kid}\n${JSON.stringify(input)}`;
    if (this.signed?.key === key) return this.signed;
    const jku = `${input.baseUrl.replace(/\/+$/, '')}${A2A_PATHS.jwks}`;
    this.signed = {
      key,
      v1: JSON.stringify(signedCardJson(card, signer, jku)),
      legacy: JSON.stringify(signedLegacyCardJson(legacyCard(card), signer, jku)),
    };
    return this.signed;
  }

  private send(
    req: IncomingMessage,
    res: ServerResponse,
    body: string,
    headers: Record<string, string>,
  ): void {
    const etag = `W/"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
    const common = {
      ...headers,
      ETag: etag,
      'Cache-Control': `public, max-age=${this.options.cardTTLSeconds()}`,
      'Access-Control-Allow-Origin': '*',
    };
    if (header(req, 'if-none-match') === etag) {
      res.writeHead(304, common).end();
      return;
    }
    res.writeHead(200, {
      ...common,
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  }
}

/**
 * The card in v0.3 terms: the v0.3 JSON-RPC interface as `url`, the bearer scheme as OpenAPI `http`, and
 * the v1.0 `supportedInterfaces` embedded, which a v1.0 client reading this card prefers.
 */
export function legacyCard(card: AgentCard): Record<string, unknown> {
  const primary = card.supportedInterfaces.find((i) => i.protocolVersion === '0.3');
  if (!primary) throw new Error('The card declares no v0.3 interface.');
  const scheme = card.securitySchemes[KEY_SCHEME]?.scheme;
  const http = scheme?.$case === 'httpAuthSecurityScheme' ? scheme.value : undefined;
  return {
    name: card.name,
    description: card.description,
    version: card.version,
    url: primary.url,
    preferredTransport: primary.protocolBinding,
    protocolVersion: '0.3',
    capabilities: {
      streaming: card.capabilities?.streaming ?? false,
      pushNotifications: card.capabilities?.pushNotifications ?? false,
      // v0.3 has the same AgentExtension (uri, description, required): the call-chain extension.
      ...(card.capabilities?.extensions.length
        ? {
            extensions: card.capabilities.extensions.map(({ uri, description, required }) => ({
              uri,
              description,
              required,
            })),
          }
        : {}),
    },
    ...(card.documentationUrl ? { documentationUrl: card.documentationUrl } : {}),
    ...(card.provider ? { provider: card.provider } : {}),
    ...(http
      ? {
          securitySchemes: {
            [KEY_SCHEME]: {
              type: 'http',
              scheme: http.scheme,
              bearerFormat: http.bearerFormat,
              description: http.description,
            },
          },
        }
      : {}),
    security: card.securityRequirements.map((requirement) =>
      Object.fromEntries(Object.entries(requirement.schemes).map(([name, scopes]) => [name, scopes.list])),
    ),
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills.map(({ id, name, description, tags, examples, inputModes, outputModes }) => ({
      id,
      name,
      description,
      tags,
      examples,
      inputModes,
      outputModes,
    })),
    supportedInterfaces: card.supportedInterfaces.map((i) => AgentInterface.toJSON(i)),
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return (Array.isArray(value) ? value[0] : value)?.trim() || undefined;
}
