import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  buildCard,
  createSigner,
  generateRawKeyPair,
  privateKeyFromRaw,
  type PublicKeyEntry,
  type Signer,
} from '../../src/protocol/index.js';

/** An Ed25519 key as a card lists it, with the signer that holds its private half. */
export interface TestKey {
  kid: string;
  /** Raw public key, standard base64. */
  key: string;
  signer: Signer;
}

export function testKey(kid: string): TestKey {
  const pair = generateRawKeyPair();
  return { kid, key: pair.publicKey, signer: createSigner(kid, privateKeyFromRaw(pair.privateKey)) };
}

/**
 * An agent identity on loopback that only serves its card (`agent://127.0.0.1:PORT`): a throwaway sender,
 * or whoever holds an id after its first owner (a released tunnel address, an expired domain).
 */
export interface CardHost {
  id: string;
  port: number;
  /** Serves the same card with its id written as `id` (another spelling of the same agent, say). */
  rewrite(id: string): void;
  close(): Promise<void>;
}

export interface CardHostOptions {
  /** The card's host name (default 127.0.0.1). */
  host?: string;
  /** Listens on loopback (default: on `port`, or a free one). */
  listen?(server: Server): Promise<void>;
}

export async function startCardHost(
  keys: PublicKeyEntry[],
  port = 0,
  options: CardHostOptions = {},
): Promise<CardHost> {
  let body = '';
  const server: Server = createServer((req, res) => {
    if (req.url !== '/.well-known/agent.json') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await (options.listen?.(server) ??
    new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)));
  const listening = (server.address() as AddressInfo).port;
  const card = buildCard({
    url: `http://${options.host ?? '127.0.0.1'}:${listening}`,
    name: 'Card host',
    version: '1.0.0',
    description: 'An agent identity that only serves its card',
    specializations: [],
    models: [],
    skills: [
      {
        id: 'chat',
        name: 'Chat',
        description: 'Talks',
        inputSchema: { type: 'object' },
        outputSchema: { type: 'object' },
        modes: ['sync'],
        trust: 'public',
      },
    ],
    publicKeys: keys,
    rateLimit: { requestsPerMinute: 60, requestsPerSender: 10, tokensPerSenderPerDay: 100_000 },
    cardTTL: 300,
  });
  body = JSON.stringify(card);
  return {
    id: card.id,
    port: listening,
    rewrite: (id) => void (body = JSON.stringify({ ...card, id })),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
