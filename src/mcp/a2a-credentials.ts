/**
 * Credentials the operator keeps for A2A agents that require one (their card's securitySchemes: an HTTP
 * bearer token, or an API key in a header), one per agent origin, in `<dataDir>/a2a-credentials.json`
 * (0600, written atomically). Write-only: the only reader of a value is the fetch that sends it, and only
 * to that exact origin. The model never sees one (nor can it pass one); logs, traffic, the console's views,
 * tool results and errors never hold one.
 */
import { join } from 'node:path';
import { readJsonFile, writeFileAtomic } from '../lib/atomic-file.js';
import { agentHost, isLoopbackHost, normalizeAgentId } from '../protocol/index.js';
import type {
  OutboundCredentialScheme,
  OutboundCredentialView,
  OutboundCredentialsResponse,
} from '../protocol/console-api.js';

export const CREDENTIALS_FILE = 'a2a-credentials.json';
export const MAX_CREDENTIALS = 100;
const MIN_VALUE_CHARS = 8;
const MAX_VALUE_CHARS = 4096;

interface StoredCredential extends OutboundCredentialView {
  value: string;
}

/** A credential the operator sent that cannot be kept: which field, what is wrong, what to do. */
export class CredentialError extends Error {
  constructor(
    readonly field: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = 'CredentialError';
  }
}

// RFC 9110 token characters: what a header name may be.
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
// Headers the transport or the A2A protocol set themselves: a key there would break the request or them.
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'accept',
  'accept-encoding',
  'cookie',
  'a2a-version',
  'a2a-extensions',
  'x-a2a-extensions',
  'proxy-authorization',
]);
// Visible ASCII, inner spaces allowed: what a header value can carry without a line break (header injection).
const VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * The origin a credential belongs to, and the one a request goes to, in one spelling: scheme, then the host
 * as agent ids are normalised (lower case, no default port, no trailing dot, addresses in their usual form).
 * Undefined for what is not an http(s) URL.
 */
export function originKey(url: URL): string | undefined {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  // The name alone (normalizeAgentId would also drop :443, which is not http's default port).
  const name = agentHost(normalizeAgentId(`agent://${url.hostname}`));
  if (!name) return undefined;
  return `${url.protocol}//${name}${url.port ? `:${url.port}` : ''}`;
}

export class A2ACredentials {
  readonly path: string;
  private entries: StoredCredential[] = [];
  private unreadable: string | undefined;

  constructor(
    dataDir: string,
    private readonly now: () => number = Date.now,
  ) {
    this.path = join(dataDir, CREDENTIALS_FILE);
    this.load();
  }

  /** What the console shows: never a value. */
  view(): OutboundCredentialsResponse {
    const credentials = this.entries.map(({ value: _value, ...shown }) => shown);
    return this.unreadable ? { credentials, problem: this.unreadable } : { credentials };
  }

  /** Adds the credential for an agent's origin, or replaces the one it had. */
  set(input: unknown): OutboundCredentialsResponse {
    if (this.unreadable) {
      throw new CredentialError(
        'url',
        `${this.path} cannot be read, so saving would lose what it holds: fix or delete it, then add the credential again.`,
        409,
      );
    }
    const credential = checkCredential(input, new Date(this.now()).toISOString());
    const others = this.entries.filter((entry) => entry.url !== credential.url);
    if (others.length >= MAX_CREDENTIALS) {
      throw new CredentialError(
        'url',
        `At most ${MAX_CREDENTIALS} credentials are kept: remove one you no longer need first.`,
      );
    }
    this.save([...others, credential].sort((a, b) => a.url.localeCompare(b.url)));
    return this.view();
  }

  /** Forgets the credential for that origin (at once: the next request goes without it). */
  remove(url: unknown): OutboundCredentialsResponse {
    const origin = typeof url === 'string' ? credentialOrigin(url) : undefined;
    if (!origin || !this.entries.some((entry) => entry.url === origin)) {
      throw new CredentialError('url', 'No credential is kept for that URL.', 404);
    }
    this.save(this.entries.filter((entry) => entry.url !== origin));
    return this.view();
  }

  /** The headers for a request to `url`: only when a credential is kept for exactly its origin. */
  headersFor(url: URL): Record<string, string> | undefined {
    const stored = this.find(url);
    if (!stored) return undefined;
    return stored.scheme === 'bearer'
      ? { Authorization: `Bearer ${stored.value}` }
      : { [stored.header as string]: stored.value };
  }

  /** Which kind of credential is kept for an origin (never its value). */
  schemeFor(url: URL): Pick<OutboundCredentialView, 'scheme' | 'header'> | undefined {
    const stored = this.find(url);
    return (
      stored && (stored.header ? { scheme: stored.scheme, header: stored.header } : { scheme: stored.scheme })
    );
  }

  /** Every value kept: masked wherever text leaves the bridge (a callee may echo what it was sent). */
  secrets(): string[] {
    return this.entries.map((entry) => entry.value);
  }

  private find(url: URL): StoredCredential | undefined {
    const origin = originKey(url);
    return origin ? this.entries.find((entry) => entry.url === origin) : undefined;
  }

  private save(entries: StoredCredential[]): void {
    writeFileAtomic(this.path, `${JSON.stringify({ credentials: entries }, null, 2)}\n`, 0o600);
    this.entries = entries;
  }

  private load(): void {
    let file: { credentials?: unknown } | undefined;
    try {
      file = readJsonFile<{ credentials?: unknown }>(this.path);
    } catch (error) {
      // CorruptFileError's message names the file and a position, never its content.
      this.unreadable = `${(error as Error).message}. None of its credentials is used meanwhile.`;
      return;
    }
    if (file === undefined) return;
    try {
      if (!Array.isArray(file.credentials)) throw new Error('not a list');
      this.entries = file.credentials.map((item: unknown) => {
        const addedAt = (item as { addedAt?: unknown } | null)?.addedAt;
        return checkCredential(item, typeof addedAt === 'string' ? addedAt : '');
      });
    } catch {
      // Never quoted (an entry may hold a secret): the operator is told to look at the file.
      this.unreadable =
        `${this.path} is not a list of valid credentials ({"credentials": [...]}): fix or delete it. ` +
        'None of its credentials is used meanwhile.';
    }
  }
}

/** The origin an operator's URL names: https (http only for a loopback host: local tests), no path. */
function credentialOrigin(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return undefined;
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) return undefined;
  if (url.username || url.password || url.search || url.hash || url.pathname.replace(/\/+$/, '') !== '')
    return undefined;
  return originKey(url);
}

function checkCredential(input: unknown, addedAt: string): StoredCredential {
  const body = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const url = typeof body.url === 'string' ? credentialOrigin(body.url) : undefined;
  if (!url) {
    throw new CredentialError(
      'url',
      "The URL must be the agent's https base URL, like https://agent.example.com (no path, query or credentials).",
    );
  }
  const scheme = body.scheme;
  if (scheme !== 'bearer' && scheme !== 'apiKey') {
    throw new CredentialError(
      'scheme',
      'The scheme must be "bearer" (sent as Authorization: Bearer) or "apiKey" (sent in the header you name).',
    );
  }
  const stored: StoredCredential = { url, scheme: scheme as OutboundCredentialScheme, value: '', addedAt };
  if (scheme === 'apiKey') {
    const header = typeof body.header === 'string' ? body.header.trim() : '';
    if (!HEADER_NAME.test(header) || RESERVED_HEADERS.has(header.toLowerCase())) {
      throw new CredentialError(
        'header',
        'The header must be a header name like X-API-Key (letters, digits and - _ . ; not one the protocol sets itself, such as Content-Type or Host).',
      );
    }
    stored.header = header;
  }
  const value = body.value;
  // The value is never quoted back: only what is wrong with it.
  const fits =
    typeof value === 'string' && value.length >= MIN_VALUE_CHARS && value.length <= MAX_VALUE_CHARS;
  if (!fits || !VALUE.test(value)) {
    throw new CredentialError(
      'value',
      `The value must be the credential itself: ${MIN_VALUE_CHARS} to ${MAX_VALUE_CHARS} visible ASCII characters, no line breaks, no leading or trailing spaces.`,
    );
  }
  stored.value = value;
  return stored;
}
