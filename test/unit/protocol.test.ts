import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  contentDigest,
  createSigner,
  digestMatches,
  parseSignatureHeaders,
  privateKeyFromRaw,
  publicKeyFromRaw,
  publicKeyOf,
  signObject,
  signResponse,
  signatureBase,
  verifyBytes,
  verifyObjectSignature,
  verifyParsedSignature,
  type ParsedSignature,
} from '../../src/protocol/index.js';

// The published reference data lives beside the repo (PROTOCOL.md): read it, never copy it in.
const REFERENCE = fileURLToPath(new URL('../../../shared/reference/', import.meta.url));
const hasReference = existsSync(REFERENCE);
if (!hasReference) console.warn(`SKIPPED reference-vector tests: ${REFERENCE} is missing`);
const describeReference = hasReference ? describe : describe.skip;
const readReference = <T>(name: string): T => JSON.parse(readFileSync(REFERENCE + name, 'utf8')) as T;

// RFC 8032 §7.1 TEST 1: the project vectors were made with this key.
const RFC8032_SEED = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');

function parsed(input: string, signature: string): ParsedSignature {
  const result = parseSignatureHeaders(input, signature);
  if (typeof result === 'string') throw new Error(result);
  return result;
}

/** Same base64 signature with one bit of one byte flipped. */
function flipByte(signatureB64: string, index = 10): string {
  const bytes = Buffer.from(signatureB64, 'base64');
  bytes[index] = (bytes[index] ?? 0) ^ 1;
  return bytes.toString('base64');
}

describe('canonicalJson (RFC 8785)', () => {
  it('sorts keys at every depth and writes no whitespace', () => {
    const value = { b: 1, a: { d: [{ z: 1, y: 2 }], c: null }, aa: 'x' };
    expect(canonicalJson(value)).toBe('{"a":{"c":null,"d":[{"y":2,"z":1}]},"aa":"x","b":1}');
  });

  it('sorts by UTF-16 code units (RFC 8785 §3.2.3 example)', () => {
    const value = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    // Read the order off the text: JSON.parse would put the integer-like key '1' first again.
    const order = ['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33'];
    const text = canonicalJson(value);
    const positions = order.map((key) => text.indexOf(JSON.stringify(key) + ':'));
    expect(positions.every((at, i) => at > (positions[i - 1] ?? -1))).toBe(true);
    expect(text.startsWith('{"\\r":"Carriage Return","1":"One","\u0080":"Control"')).toBe(true);
  });

  it('writes strings as JSON.stringify does: unicode raw, controls and quotes escaped', () => {
    expect(canonicalJson('héllo ✓ भारत 😀')).toBe('"héllo ✓ भारत 😀"');
    expect(canonicalJson('a"b\\c\n\u0007\u001f')).toBe('"a\\"b\\\\c\\n\\u0007\\u001f"');
  });

  it('writes numbers in ECMAScript form (RFC 8785 Appendix B)', () => {
    const cases: [number, string][] = [
      [1e21, '1e+21'],
      [0.1, '0.1'],
      [-0, '0'],
      [1e-7, '1e-7'],
      [0.000001, '0.000001'],
      [123456789012345680000, '123456789012345680000'],
      [5e-324, '5e-324'],
      [-1.5, '-1.5'],
      [9007199254740991, '9007199254740991'],
    ];
    for (const [value, text] of cases) expect(canonicalJson(value)).toBe(text);
  });

  it('keeps array order, drops undefined members of objects, writes undefined array items as null', () => {
    expect(canonicalJson([3, 1, [2, { b: 1, a: 2 }], undefined])).toBe('[3,1,[2,{"a":2,"b":1}],null]');
    expect(canonicalJson({ a: undefined, b: 1, c: { d: undefined } })).toBe('{"b":1,"c":{}}');
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson({})).toBe('{}');
  });

  it('refuses NaN and Infinity at any depth, and top-level undefined', () => {
    expect(() => canonicalJson(NaN)).toThrow(/NaN/);
    expect(() => canonicalJson({ a: [1, Infinity] })).toThrow();
    expect(() => canonicalJson({ a: { b: -Infinity } })).toThrow();
    expect(() => canonicalJson(undefined)).toThrow();
  });

  it('parses back to the same JSON data and ignores key insertion order (property)', () => {
    const reverseKeys = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(reverseKeys);
      if (value === null || typeof value !== 'object') return value;
      const entries = Object.entries(value).reverse();
      return Object.fromEntries(entries.map(([k, v]) => [k, reverseKeys(v)]));
    };
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(canonicalJson(reverseKeys(value))).toBe(text);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
      { numRuns: 200 },
    );
  });
});

interface Rfc9421Vectors {
  publicKeyB64: string;
  kid: string;
  cases: {
    name: string;
    method: string;
    path: string;
    bodyJson: string;
    expectedResult: { 'content-digest': string; 'signature-input': string; signature: string };
  }[];
}

describeReference('published SDK vectors (samvad-v1.2/rfc9421-vectors.json)', () => {
  const vectors = hasReference ? readReference<Rfc9421Vectors>('samvad-v1.2/rfc9421-vectors.json') : null;
  const cases = vectors?.cases ?? [];
  const key = () => {
    const k = publicKeyFromRaw(vectors?.publicKeyB64 ?? '');
    if (!k) throw new Error('vector public key does not load');
    return k;
  };

  it.each(cases.map((c) => [c.name, c] as const))('%s verifies', (_name, c) => {
    const headers = c.expectedResult;
    expect(contentDigest(c.bodyJson)).toBe(headers['content-digest']);
    expect(digestMatches(headers['content-digest'], Buffer.from(c.bodyJson, 'utf8'))).toBe(true);
    const sig = parsed(headers['signature-input'], headers.signature);
    expect(sig.kid).toBe(vectors?.kid);
    expect(sig.components).toEqual(['@method', '@path', 'content-digest']);
    expect(sig.created).toBe(1776146908);
    const parts = {
      method: c.method,
      path: c.path,
      headers: { 'content-digest': headers['content-digest'] },
    };
    expect(verifyParsedSignature(sig, parts, key())).toBe(true);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s fails once anything is changed', (_name, c) => {
    const headers = c.expectedResult;
    const sig = parsed(headers['signature-input'], headers.signature);
    const parts = {
      method: c.method,
      path: c.path,
      headers: { 'content-digest': headers['content-digest'] },
    };
    expect(verifyParsedSignature(sig, { ...parts, path: '/agent/other' }, key())).toBe(false);
    expect(verifyParsedSignature(sig, { ...parts, method: 'PUT' }, key())).toBe(false);
    expect(verifyParsedSignature({ ...sig, signature: flipByte(sig.signature) }, parts, key())).toBe(false);
    expect(
      verifyParsedSignature({ ...sig, params: sig.params.replace('1776146908', '1776146909') }, parts, key()),
    ).toBe(false);
    expect(digestMatches(headers['content-digest'], c.bodyJson.replace('}', ' }'))).toBe(false);
    const otherKey = publicKeyFromRaw(publicKeyOf(privateKeyFromRaw(RFC8032_SEED.toString('base64'))));
    expect(otherKey && verifyParsedSignature(sig, parts, otherKey)).toBe(false);
  });

  it('only verifies with the SDK trailing newline after @signature-params', () => {
    const c = cases[0];
    if (!c) throw new Error('no vector cases');
    const sig = parsed(c.expectedResult['signature-input'], c.expectedResult.signature);
    const base = signatureBase(sig.components, sig.params, {
      method: c.method,
      path: c.path,
      headers: { 'content-digest': c.expectedResult['content-digest'] },
    });
    expect(base?.endsWith('\n')).toBe(true);
    expect(verifyBytes(key(), base ?? '', sig.signature)).toBe(true);
    expect(verifyBytes(key(), (base ?? '').slice(0, -1), sig.signature)).toBe(false);
  });
});

interface ProjectVectors {
  publicKeyB64: string;
  kid: string;
  formB: { envelopeWithoutSignature: Record<string, unknown>; canonicalJson: string; signature: string };
  response: {
    status: number;
    body: string;
    'content-digest': string;
    'signature-input': string;
    signature: string;
    signatureBase: string;
  };
}

describeReference('project vectors (reference/project-vectors.json)', () => {
  const v = hasReference ? readReference<ProjectVectors>('project-vectors.json') : null;
  const vectors = () => {
    if (!v) throw new Error('project vectors missing');
    return v;
  };
  const signer = () => createSigner(vectors().kid, privateKeyFromRaw(RFC8032_SEED.toString('base64')));
  const key = () => {
    const k = publicKeyFromRaw(vectors().publicKeyB64);
    if (!k) throw new Error('vector public key does not load');
    return k;
  };

  it("RFC 8032's first test key is the vectors' key", () => {
    expect(publicKeyOf(privateKeyFromRaw(RFC8032_SEED.toString('base64')))).toBe(vectors().publicKeyB64);
  });

  it('Form B: canonical JSON and signature match byte for byte, and verify', () => {
    const { envelopeWithoutSignature, canonicalJson: expected, signature } = vectors().formB;
    expect(canonicalJson(envelopeWithoutSignature)).toBe(expected);
    expect(verifyObjectSignature({ ...envelopeWithoutSignature, signature }, key())).toBe(true);
    const { kid: _kid, ...withoutKid } = envelopeWithoutSignature;
    const signed = signObject(withoutKid, signer());
    expect(signed.kid).toBe(vectors().kid);
    expect(signed.signature).toBe(signature);
  });

  it('Form B: changing any field, at any depth, breaks the signature', () => {
    const { envelopeWithoutSignature: envelope, signature } = vectors().formB;
    const signed = { ...envelope, signature };
    for (const field of Object.keys(envelope)) {
      expect(verifyObjectSignature({ ...signed, [field]: 'tampered' }, key()), field).toBe(false);
    }
    const payload = structuredClone(envelope.payload) as { nested: { a: unknown[] } };
    payload.nested.a[1] = 1.25;
    expect(verifyObjectSignature({ ...signed, payload }, key())).toBe(false);
    expect(verifyObjectSignature({ ...signed, extra: 1 }, key())).toBe(false);
    expect(verifyObjectSignature({ ...signed, signature: flipByte(signature) }, key())).toBe(false);
    const { signature: _s, ...unsigned } = signed;
    expect(verifyObjectSignature(unsigned, key())).toBe(false);
  });

  it('response: signResponse reproduces the published headers, and they verify', () => {
    const r = vectors().response;
    const headers = signResponse(signer(), { status: r.status, body: r.body }, 1795608000);
    expect(headers).toEqual({
      'content-digest': r['content-digest'],
      'signature-input': r['signature-input'],
      signature: r.signature,
    });
    const sig = parsed(r['signature-input'], r.signature);
    const parts = { status: r.status, headers: { 'content-digest': r['content-digest'] } };
    expect(signatureBase(sig.components, sig.params, parts)).toBe(r.signatureBase);
    expect(digestMatches(r['content-digest'], r.body)).toBe(true);
    expect(verifyParsedSignature(sig, parts, key())).toBe(true);
  });

  it('response: another status, body byte or signature byte fails', () => {
    const r = vectors().response;
    const sig = parsed(r['signature-input'], r.signature);
    const parts = { status: r.status, headers: { 'content-digest': r['content-digest'] } };
    expect(verifyParsedSignature(sig, { ...parts, status: 201 }, key())).toBe(false);
    expect(verifyParsedSignature({ ...sig, signature: flipByte(sig.signature, 63) }, parts, key())).toBe(
      false,
    );
    expect(digestMatches(r['content-digest'], r.body.replace('hi', 'ho'))).toBe(false);
    const otherDigest = { headers: { 'content-digest': contentDigest('{}') }, status: r.status };
    expect(verifyParsedSignature(sig, otherDigest, key())).toBe(false);
  });
});

describe('parseSignatureHeaders refuses malformed headers with a reason', () => {
  const good = 'sig1=("@method" "@path" "content-digest");keyid="k1";alg="ed25519";created=1776146908';
  const sig = `sig1=:${Buffer.alloc(64, 1).toString('base64')}:`;

  it('accepts the well-formed pair', () => {
    expect(parseSignatureHeaders(good, sig)).toMatchObject({ kid: 'k1', created: 1776146908 });
  });

  it.each([
    ['empty Signature-Input', '', sig, /not of the form/],
    ['no component list', 'sig1=keyid="k1"', sig, /not of the form/],
    ['garbage', 'hello world', sig, /not of the form/],
    ['unquoted components', 'sig1=(@method @path);keyid="k1"', sig, /quoted/],
    ['no keyid', 'sig1=("@method");alg="ed25519";created=1', sig, /keyid/],
    ['another algorithm', 'sig1=("@method");keyid="k1";alg="rsa-pss-sha512"', sig, /alg/],
    ['label mismatch', good, sig.replace('sig1', 'sig2'), /sig1/],
    ['signature not in :base64: form', good, 'sig1=abc', /sig1/],
    ['empty Signature', good, '', /sig1/],
  ])('%s', (_name, input, signature, reason) => {
    const result = parseSignatureHeaders(input, signature);
    expect(typeof result).toBe('string');
    expect(result).toMatch(reason);
  });

  it("parses a Signature-Input seen before as the first time, with each request's own signature", () => {
    const other = `sig1=:${Buffer.alloc(64, 2).toString('base64')}:`;
    const first = parseSignatureHeaders(good, sig);
    const again = parseSignatureHeaders(good, other);
    expect(again).toEqual({ ...(first as ParsedSignature), signature: other.slice(6, -1) });
    // What the cache shares cannot be changed by one request for the next.
    expect(Object.isFrozen((again as ParsedSignature).components)).toBe(true);
    expect(() => (again as ParsedSignature).components.push('"@authority"')).toThrow(TypeError);
    expect((parseSignatureHeaders(good, sig) as ParsedSignature).components).toEqual(
      (first as ParsedSignature).components,
    );
    // A malformed input is refused the same way every time, and after the signature entry is checked.
    const unquoted = 'sig1=(@method @path);keyid="k1"';
    for (let i = 0; i < 2; i++) {
      expect(parseSignatureHeaders(unquoted, sig)).toMatch(/quoted/);
      expect(parseSignatureHeaders(unquoted, '')).toMatch(/no sig1=/);
    }
  });

  it('a signature whose covered component is absent from the message does not verify', () => {
    const key = publicKeyFromRaw(publicKeyOf(privateKeyFromRaw(RFC8032_SEED.toString('base64'))));
    if (!key) throw new Error('key');
    const p = parsed('sig1=("@status" "content-digest");keyid="k1"', sig);
    expect(
      verifyParsedSignature(p, { method: 'POST', path: '/', headers: { 'content-digest': 'x' } }, key),
    ).toBe(false);
  });
});
