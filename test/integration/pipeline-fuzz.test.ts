import { rmSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PeerKeyResolver } from '../../src/agent/peer-keys.js';
import { receive, type PipelineDeps, type ReceiveInput } from '../../src/agent/pipeline.js';
import { SkillRegistry } from '../../src/agent/skill-registry.js';
import {
  ProtocolError,
  canonicalJson,
  createSigner,
  generateRawKeyPair,
  privateKeyFromRaw,
  type Envelope,
  type Mode,
} from '../../src/protocol/index.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { PATHS, envelope, sign, type Form } from '../helpers/envelopes.js';
import { LocalCallLimits } from '../../src/state/call-limits.js';

// Thousands of random and mutated envelopes at the one receive pipeline: it must never throw anything but
// a ProtocolError below 500, and never accept an unsigned or altered envelope.
const SENDER = 'agent://sender.example';
const RECEIVER = 'agent://receiver.example';
const keys = generateRawKeyPair();
const signer = createSigner('k1', privateKeyFromRaw(keys.privateKey));
let dataDir: string;
let deps: PipelineDeps;

beforeAll(() => {
  dataDir = tempDir();
  const skills = new SkillRegistry();
  skills.register({
    id: 'chat',
    name: 'Chat',
    description: 'test',
    inputSchema: {
      type: 'object',
      required: ['message'],
      properties: { message: { type: 'string', maxLength: 100 } },
    },
    outputSchema: { type: 'object' },
    modes: ['sync', 'async', 'stream'],
    trust: 'public',
    handler: async () => ({}),
  });
  deps = {
    isOwnId: (id) => id === RECEIVER,
    ownId: () => RECEIVER,
    skills,
    // The sender's key is pinned, so no card is fetched: the pipeline alone is under test.
    keys: new PeerKeyResolver({ pinned: { [SENDER]: keys.publicKey } }),
    limits: new LocalCallLimits(dataDir, { perMinute: 1e9, perSender: 1e9 }),
    settings: () => ({
      tokensPerDay: 1e9,
      bearerTokens: [],
      allowUnsigned: false,
      injectionScreen: 'off',
      delegationMaxLifetimeSeconds: 86_400,
    }),
  };
});

afterAll(() => {
  void deps.limits.close();
  rmSync(dataDir, { recursive: true, force: true });
});

type Outcome = { accepted: true } | { accepted: false; status: number; code: string };

async function run(input: ReceiveInput): Promise<Outcome> {
  try {
    await receive(deps, input, { form: 'none' });
    return { accepted: true };
  } catch (error) {
    // Anything but a ProtocolError would become a 500: that is a failure of this property.
    if (!(error instanceof ProtocolError)) throw error;
    return { accepted: false, status: error.httpStatus, code: error.code };
  }
}

const modeArb = fc.constantFrom<Mode>('sync', 'async', 'stream');
const formArb = fc.constantFrom<Form>('headers', 'envelope', 'both');
const validEnvelope = (mode: Mode, message: string): Envelope =>
  envelope(SENDER, RECEIVER, mode, { message });

function input(mode: Mode, body: string | Buffer, headers: Record<string, string>): ReceiveInput {
  return {
    mode,
    method: 'POST',
    path: PATHS[mode],
    headers,
    body: Buffer.isBuffer(body) ? body : Buffer.from(body),
    remoteAddress: '127.0.0.1',
  };
}

describe('receive pipeline under random input', () => {
  it('answers arbitrary bytes and headers with a 4xx ProtocolError, never anything else', async () => {
    const headerArb = fc.dictionary(
      fc.constantFrom('content-type', 'content-digest', 'signature-input', 'signature', 'x-other'),
      fc.oneof(fc.string(), fc.constant('application/json'), fc.constant('sig1=:AAAA:')),
    );
    await fc.assert(
      fc.asyncProperty(
        modeArb,
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.uint8Array().map((a) => Buffer.from(a)),
        ),
        headerArb,
        async (mode, body, headers) => {
          const outcome = await run(input(mode, body, headers));
          expect(outcome.accepted).toBe(false);
          if (!outcome.accepted) expect(outcome.status).toBeLessThan(500);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('answers random JSON objects shaped like envelopes with a 4xx, and accepts none of them unsigned', async () => {
    const fieldArb = fc.record(
      {
        from: fc.oneof(fc.constant(SENDER), fc.string()),
        to: fc.oneof(fc.constant(RECEIVER), fc.string()),
        skill: fc.oneof(fc.constant('chat'), fc.string()),
        mode: fc.oneof(modeArb, fc.string()),
        nonce: fc.string({ maxLength: 80 }),
        timestamp: fc.oneof(fc.constant(new Date().toISOString()), fc.string()),
        traceId: fc.string(),
        spanId: fc.string(),
        payload: fc.oneof(fc.object(), fc.jsonValue()),
        auth: fc.jsonValue(),
        kid: fc.oneof(fc.constant('k1'), fc.string()),
        signature: fc.oneof(fc.base64String(), fc.string()),
        callbackUrl: fc.oneof(fc.webUrl(), fc.string()),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(modeArb, fieldArb, async (mode, fields) => {
        const outcome = await run(
          input(mode, JSON.stringify(fields), { 'content-type': 'application/json' }),
        );
        expect(outcome.accepted).toBe(false);
        if (!outcome.accepted) expect(outcome.status).toBeLessThan(500);
      }),
      { numRuns: 1500 },
    );
  });

  it('never accepts a signed envelope whose bytes were altered (Form A) ', async () => {
    await fc.assert(
      fc.asyncProperty(
        modeArb,
        fc.string({ maxLength: 50 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        async (mode, message, at, flip) => {
          const signed = sign(validEnvelope(mode, message), signer, 'headers');
          const bytes = Buffer.from(signed.body);
          const index = at % bytes.length;
          bytes[index] = bytes[index]! ^ flip;
          const outcome = await run(input(mode, bytes, signed.headers));
          expect(outcome.accepted).toBe(false);
          if (!outcome.accepted) expect(outcome.status).toBeLessThan(500);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('never accepts a signed envelope with any field changed after signing, in any form', async () => {
    const fieldNames: (keyof Envelope)[] = [
      'from',
      'to',
      'skill',
      'mode',
      'nonce',
      'timestamp',
      'traceId',
      'spanId',
      'payload',
      'kid',
      'auth',
      'parentSpanId',
    ];
    await fc.assert(
      fc.asyncProperty(
        modeArb,
        formArb,
        fc.constantFrom(...fieldNames),
        fc.jsonValue(),
        async (mode, form, field, value) => {
          const original = validEnvelope(mode, 'hello');
          const signed = sign(original, signer, form);
          const parsed = JSON.parse(signed.body) as Record<string, unknown>;
          const changed = { ...parsed, [field]: value };
          // A change that leaves the canonical form as it was is not a change.
          fc.pre(canonicalJson(changed) !== canonicalJson(parsed));
          const body = JSON.stringify(changed);
          // Form A keeps its original headers (the digest no longer matches).
          const outcome = await run(input(mode, body, signed.headers));
          expect(outcome.accepted).toBe(false);
          if (!outcome.accepted) expect(outcome.status).toBeLessThan(500);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('accepts every untouched signed envelope exactly once', async () => {
    await fc.assert(
      fc.asyncProperty(modeArb, formArb, fc.string({ maxLength: 100 }), async (mode, form, message) => {
        const signed = sign(validEnvelope(mode, message), signer, form);
        expect(await run(input(mode, signed.body, signed.headers))).toEqual({ accepted: true });
        expect(await run(input(mode, signed.body, signed.headers))).toMatchObject({
          accepted: false,
          code: 'REPLAY_DETECTED',
        });
      }),
      { numRuns: 500 },
    );
  });
});

describe('the real server under random input', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startAgent();
  });
  afterAll(async () => {
    await agent.close();
  });

  it('never answers 5xx and stays up', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          '/agent/message',
          '/agent/task',
          '/agent/stream',
          '/agent/task/x',
          '/.well-known/agent.json',
          '/nope',
        ),
        fc.constantFrom('POST', 'GET', 'PUT'),
        fc.oneof(fc.string(), fc.json()),
        fc.constantFrom('application/json', 'text/plain', ''),
        async (path, method, body, type) => {
          const response = await fetch(`${agent.url}${path}`, {
            method,
            headers: type ? { 'content-type': type } : {},
            body: method === 'GET' ? undefined : body,
          });
          await response.arrayBuffer();
          expect(response.status).toBeLessThan(500);
        },
      ),
      { numRuns: 300 },
    );
    expect((await fetch(`${agent.url}/agent/health`)).status).toBe(200);
  });
});
