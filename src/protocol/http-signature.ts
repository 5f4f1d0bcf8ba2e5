import { hash, type KeyObject } from 'node:crypto';
import { verifyBytes } from './ed25519.js';
import type { Signer } from './signer.js';

/** Form A of PROTOCOL.md §3: RFC 9421-style headers, with the reference SDK's signature base. */

export const REQUEST_COMPONENTS = ['@method', '@path', 'content-digest'] as const;
export const RESPONSE_COMPONENTS = ['@status', 'content-digest'] as const;
const LABEL = 'sig1';

export interface SignatureHeaders {
  'content-digest': string;
  'signature-input': string;
  signature: string;
}

// A string is digested as its UTF-8 bytes, which is what goes on the wire.
export function contentDigest(body: Uint8Array | string): string {
  return `sha-256=:${hash('sha256', body, 'base64')}:`;
}

export function signatureParams(components: readonly string[], kid: string, created: number): string {
  return `(${componentList(components)});keyid="${kid}";alg="ed25519";created=${created}`;
}

// The quoted component lists of our own signatures, made once (every reply is signed).
const componentLists = new Map<readonly string[], string>();
function componentList(components: readonly string[]): string {
  let list = componentLists.get(components);
  if (list === undefined) {
    list = components.map((c) => `"${c}"`).join(' ');
    if (components === REQUEST_COMPONENTS || components === RESPONSE_COMPONENTS)
      componentLists.set(components, list);
  }
  return list;
}

/** What each covered component stands for in a given message. */
export interface MessageParts {
  method?: string;
  path?: string;
  status?: number;
  headers: Record<string, string | undefined>;
}

/**
 * The bytes that are signed: one `"name": value` line per component, then the params line.
 * Every line ends in `\n`, the last one too: the SDK does so and RFC 9421 does not.
 */
export function signatureBase(
  components: readonly string[],
  params: string,
  parts: MessageParts,
): string | null {
  let base = '';
  for (const component of components) {
    const value = componentValue(component, parts);
    if (value === undefined) return null;
    base += `"${component}": ${value}\n`;
  }
  return `${base}"@signature-params": ${params}\n`;
}

function componentValue(component: string, parts: MessageParts): string | undefined {
  switch (component) {
    case '@method':
      return parts.method?.toUpperCase();
    case '@path':
      return parts.path;
    case '@status':
      return parts.status === undefined ? undefined : String(parts.status);
    default:
      return component.startsWith('@') ? undefined : parts.headers[component];
  }
}

// `parts.headers` gets the digest: callers pass a fresh object.
function sign(
  signer: Signer,
  components: readonly string[],
  body: Uint8Array | string,
  parts: MessageParts,
  created: number,
): SignatureHeaders {
  const digest = contentDigest(body);
  const params = signatureParams(components, signer.kid, created);
  parts.headers['content-digest'] = digest;
  const base = signatureBase(components, params, parts);
  if (base === null)
    throw new Error(`Cannot sign: a covered component is missing (${components.join(', ')})`);
  return {
    'content-digest': digest,
    'signature-input': `${LABEL}=${params}`,
    signature: `${LABEL}=:${signer.sign(base)}:`,
  };
}

export function signRequest(
  signer: Signer,
  request: { method: string; path: string; body: Uint8Array | string },
  created = Math.floor(Date.now() / 1000),
): SignatureHeaders {
  return sign(
    signer,
    REQUEST_COMPONENTS,
    request.body,
    { method: request.method, path: request.path, headers: {} },
    created,
  );
}

export function signResponse(
  signer: Signer,
  response: { status: number; body: Uint8Array | string },
  created = Math.floor(Date.now() / 1000),
): SignatureHeaders {
  return sign(signer, RESPONSE_COMPONENTS, response.body, { status: response.status, headers: {} }, created);
}

export interface ParsedSignature {
  kid: string;
  components: string[];
  params: string;
  created: number | undefined;
  signature: string;
}

/**
 * Parses `Signature-Input` and `Signature`. Returns a reason string when they are malformed, so the
 * caller can say what to fix.
 */
export function parseSignatureHeaders(
  signatureInput: string,
  signatureHeader: string,
): ParsedSignature | string {
  const input = parseSignatureInput(signatureInput);
  if (typeof input === 'string') return input;
  const sig = signatureEntry(input.label).exec(signatureHeader);
  if (!sig?.[1]) return `Signature has no ${input.label}=:<base64>: entry matching Signature-Input`;
  if (input.problem !== undefined) return input.problem;
  const { kid, components, params, created } = input;
  return { kid, components, params, created, signature: sig[1] };
}

/** Signature-Input parsed: its label, and its parameters or what is wrong with them. */
interface ParsedInput {
  label: string;
  problem?: string;
  kid: string;
  components: string[];
  params: string;
  created: number | undefined;
}

// A sender's Signature-Input changes once a second (its `created`), so under load most were parsed before:
// kept, bounded in number and size (the parse is on every request's path). An entry is never changed.
const parsedInputs = new Map<string, ParsedInput | string>();
const MAX_PARSED_INPUTS = 256;
const MAX_KEPT_INPUT_CHARS = 512;

function parseSignatureInput(signatureInput: string): ParsedInput | string {
  let parsed = parsedInputs.get(signatureInput);
  if (parsed === undefined) {
    parsed = parseInput(signatureInput);
    if (signatureInput.length > MAX_KEPT_INPUT_CHARS) return parsed;
    if (parsedInputs.size >= MAX_PARSED_INPUTS) parsedInputs.clear();
    // Shared by every request with this header: frozen, so no caller can change what the next one reads.
    if (typeof parsed !== 'string') Object.freeze(parsed.components);
    parsedInputs.set(signatureInput, parsed);
  }
  return parsed;
}

function parseInput(signatureInput: string): ParsedInput | string {
  const input = /^\s*([A-Za-z0-9_-]+)=(\(([^)]*)\)((?:;[a-z]+=(?:"[^"]*"|\d+))*))\s*$/.exec(signatureInput);
  if (!input)
    return 'Signature-Input is not of the form sig1=("@method" "@path" "content-digest");keyid="...";alg="ed25519";created=...';
  const [, label = '', params = '', list = '', paramText = ''] = input;
  const invalid = (problem: string): ParsedInput => ({
    label,
    problem,
    kid: '',
    components: [],
    params,
    created: undefined,
  });
  const components = list.trim() === '' ? [] : list.trim().split(/\s+/);
  if (!components.every((c) => /^"[^"]+"$/.test(c)))
    return invalid('Signature-Input lists components that are not quoted strings');
  const fields = new Map<string, string>();
  for (const match of paramText.matchAll(/;([a-z]+)=("([^"]*)"|\d+)/g)) {
    fields.set(match[1] ?? '', match[3] ?? match[2] ?? '');
  }
  const kid = fields.get('keyid');
  if (!kid) return invalid('Signature-Input has no keyid');
  const alg = fields.get('alg');
  if (alg !== undefined && alg !== 'ed25519')
    return invalid(`Signature-Input alg "${alg}" is not supported: use ed25519`);
  const created = fields.has('created') ? Number(fields.get('created')) : undefined;
  return { label, kid, components: components.map((c) => c.slice(1, -1)), params, created };
}

// One compiled pattern per label (almost always just `sig1`): parsing is on every request's path.
const entryPatterns = new Map<string, RegExp>();
function signatureEntry(label: string): RegExp {
  let pattern = entryPatterns.get(label);
  if (!pattern) {
    pattern = new RegExp(`(?:^|,)\\s*${label}=:([A-Za-z0-9+/=]+):\\s*(?:,|$)`);
    if (entryPatterns.size > 32) entryPatterns.clear();
    entryPatterns.set(label, pattern);
  }
  return pattern;
}

/** True when `parsed` is a valid signature by `publicKey` over the given message parts. */
export function verifyParsedSignature(
  parsed: ParsedSignature,
  parts: MessageParts,
  publicKey: KeyObject,
): boolean {
  const base = signatureBase(parsed.components, parsed.params, parts);
  return base !== null && verifyBytes(publicKey, base, parsed.signature);
}

/** Constant-shape comparison of the Content-Digest header with the body actually received. */
export function digestMatches(header: string | undefined, body: Uint8Array | string): boolean {
  if (!header) return false;
  const expected = contentDigest(body);
  if (header === expected) return true;
  // Several digests may be listed (RFC 9530); ours must be one of them.
  return header.split(',').some((entry) => entry.trim() === expected);
}
