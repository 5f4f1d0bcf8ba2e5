import { createHash } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  createSigner,
  generateRawKeyPair,
  parseSignatureHeaders,
  privateKeyFromRaw,
  publicKeyFromRaw,
  signObject,
  signRequest,
  signResponse,
  signatureBase,
  signatureParams,
  verifyObjectSignature,
  verifyParsedSignature,
  type MessageParts,
  type SignatureHeaders,
} from '../../src/protocol/index.js';

// noble's sync API needs a SHA-512; node's is the one our own signer relies on anyway.
ed.hashes.sha512 = (message) => new Uint8Array(createHash('sha512').update(message).digest());

const utf8 = (text: string) => new TextEncoder().encode(text);
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const unb64 = (text: string) => new Uint8Array(Buffer.from(text, 'base64'));

const pair = generateRawKeyPair();
const signer = createSigner('k1', privateKeyFromRaw(pair.privateKey));
const publicKey = unb64(pair.publicKey);

/** The signature base an independent verifier would rebuild from the headers alone. */
function baseFromHeaders(headers: SignatureHeaders, parts: Omit<MessageParts, 'headers'>): Uint8Array {
  const parsed = parseSignatureHeaders(headers['signature-input'], headers.signature);
  if (typeof parsed === 'string') throw new Error(parsed);
  const base = signatureBase(parsed.components, parsed.params, {
    ...parts,
    headers: { 'content-digest': headers['content-digest'] },
  });
  if (base === null) throw new Error('no base');
  return utf8(base);
}

const sigOf = (headers: SignatureHeaders) => unb64(/^sig1=:(.+):$/.exec(headers.signature)?.[1] ?? '');

describe('our node:crypto signatures verify with @noble/ed25519', () => {
  const body = JSON.stringify({ skill: 'chat', payload: { message: 'héllo भारत' } });

  it('Form A request', async () => {
    const headers = signRequest(signer, { method: 'POST', path: '/agent/message', body });
    const base = baseFromHeaders(headers, { method: 'POST', path: '/agent/message' });
    expect(ed.verify(sigOf(headers), base, publicKey)).toBe(true);
    expect(await ed.verifyAsync(sigOf(headers), base, publicKey)).toBe(true);
    const otherPath = baseFromHeaders(headers, { method: 'POST', path: '/agent/task' });
    expect(ed.verify(sigOf(headers), otherPath, publicKey)).toBe(false);
  });

  it('Form A response', () => {
    const headers = signResponse(signer, { status: 401, body });
    expect(ed.verify(sigOf(headers), baseFromHeaders(headers, { status: 401 }), publicKey)).toBe(true);
    expect(ed.verify(sigOf(headers), baseFromHeaders(headers, { status: 200 }), publicKey)).toBe(false);
  });

  it('Form B object', () => {
    const signed = signObject({ from: 'agent://a.example', payload: { z: 1, a: [1, 'é'] } }, signer);
    const { signature, ...rest } = signed;
    expect(ed.verify(unb64(signature), utf8(canonicalJson(rest)), publicKey)).toBe(true);
    expect(ed.verify(unb64(signature), utf8(JSON.stringify(rest)), publicKey)).toBe(false);
  });
});

describe('@noble/ed25519 signatures verify with ours', () => {
  const secret = ed.utils.randomSecretKey();
  const noblePublic = ed.getPublicKey(secret);
  const key = publicKeyFromRaw(b64(noblePublic));

  it('derives the same public key and the same (deterministic) signature from one seed', () => {
    const ours = createSigner('k', privateKeyFromRaw(b64(secret)));
    const message = utf8('same bytes, same signature');
    expect(ours.sign(message)).toBe(b64(ed.sign(message, secret)));
  });

  it('a Form A request signed by noble passes parse + verify', () => {
    if (!key) throw new Error('noble public key does not load');
    const body = '{"skill":"echo","payload":{}}';
    const digest = `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
    const params = signatureParams(['@method', '@path', 'content-digest'], 'noble', 1776146908);
    const parts = { method: 'POST', path: '/agent/message', headers: { 'content-digest': digest } };
    const base = signatureBase(['@method', '@path', 'content-digest'], params, parts) ?? '';
    const parsed = parseSignatureHeaders(`sig1=${params}`, `sig1=:${b64(ed.sign(utf8(base), secret))}:`);
    if (typeof parsed === 'string') throw new Error(parsed);
    expect(verifyParsedSignature(parsed, parts, key)).toBe(true);
    expect(verifyParsedSignature(parsed, { ...parts, method: 'GET' }, key)).toBe(false);
  });

  it('a Form B object signed by noble passes verifyObjectSignature', async () => {
    if (!key) throw new Error('noble public key does not load');
    const value = { kid: 'noble', to: 'agent://b.example', payload: { n: 1.5 } };
    const signature = b64(await ed.signAsync(utf8(canonicalJson(value)), secret));
    expect(verifyObjectSignature({ ...value, signature }, key)).toBe(true);
    expect(verifyObjectSignature({ ...value, to: 'agent://c.example', signature }, key)).toBe(false);
  });
});
