import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AgentCallError,
  AgentClient,
  CARD_CACHE_MAX_ENTRIES,
  CardCache,
  CardFetchError,
  ResponseVerificationError,
  SseParser,
  baseUrlFor,
  type AgentClientOptions,
  type SseBlock,
  type StreamEvent,
} from '../../src/client/index.js';
import {
  buildCard,
  createSigner,
  digestMatches,
  generateRawKeyPair,
  parseSignatureHeaders,
  privateKeyFromRaw,
  publicKeyFromRaw,
  signObject,
  signResponse,
  verifyObjectSignature,
  verifyParsedSignature,
  type PublicKeyEntry,
  type Signer,
} from '../../src/protocol/index.js';

// Keys: the caller's, the agent's active k2, its revoked k1, k3 for a rotation, and a rogue key.
const keyPair = (kid: string) => {
  const raw = generateRawKeyPair();
  return { kid, raw, signer: createSigner(kid, privateKeyFromRaw(raw.privateKey)) };
};
const caller = keyPair('caller-1');
const [k1, k2, k3, rogue] = [keyPair('k1'), keyPair('k2'), keyPair('k3'), keyPair('k2')];
const entry = (k: ReturnType<typeof keyPair>, active: boolean): PublicKeyEntry => ({
  kid: k.kid,
  key: k.raw.publicKey,
  active,
});

type Behaviour =
  'ok' | 'tamper' | 'wrong-key' | 'inactive' | 'unknown-kid' | 'unsigned' | 'partial' | 'refuse' | 'hang';
const state = {
  behaviour: 'ok' as Behaviour,
  keys: [entry(k2, true), entry(k1, false)],
  signer: k2.signer,
  cardFetches: 0,
  requests: 0,
  taskPolls: 0,
  streamClosed: false,
};

let server: Server;
let port = 0;
let agentId = '';

/** A SAMVAD agent double: serves its card, checks the caller's signatures, signs every reply. */
async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  state.requests++;
  const url = req.url ?? '/';
  const body = await new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    req
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
  const prefixed = /^\/([a-z0-9-]+)\/\.well-known\/agent\.json$/.exec(url);
  if (url === '/.well-known/agent.json') return serveCard(res);
  if (prefixed) return serveOddCard(prefixed[1] ?? '', res);
  if (url === '/agent/message' && state.behaviour === 'hang') return; // the client's timeout must fire
  if (url === '/agent/message' && state.behaviour === 'refuse') {
    return reply(res, 401, error('AUTH_FAILED', 'signature does not verify'));
  }
  if (url === '/agent/message')
    return reply(res, 200, ok({ echo: JSON.parse(body), checks: checkRequest(req, body) }));
  if (url === '/agent/task') {
    if (state.behaviour === 'refuse')
      return reply(res, 400, error('SCHEMA_INVALID', 'payload.message is required'));
    return reply(res, 202, { taskId: 'task-1', status: 'accepted' });
  }
  if (url === '/agent/task/task-1') {
    const done = ++state.taskPolls >= 3;
    return reply(
      res,
      200,
      done
        ? { taskId: 'task-1', status: 'done', result: { reply: 'hi' } }
        : { taskId: 'task-1', status: 'running', progress: 0.5 },
    );
  }
  if (url === '/agent/task/nope') return reply(res, 404, error('SKILL_NOT_FOUND', 'no such task'));
  if (url === '/agent/stream') return serveStream(req, res, body);
  res.writeHead(404).end();
}

function serveCard(res: ServerResponse): void {
  state.cardFetches++;
  const card = buildCard({
    url: `http://127.0.0.1:${port}`,
    name: 'Double',
    version: '1.0.0',
    description: 'test double',
    specializations: [],
    models: [],
    skills: [
      {
        id: 'chat',
        name: 'Chat',
        description: 'chat',
        inputSchema: { type: 'object' },
        outputSchema: { type: 'object' },
        modes: ['sync', 'async', 'stream'],
        trust: 'public',
      },
    ],
    publicKeys: state.keys,
    rateLimit: { requestsPerMinute: 60, requestsPerSender: 10, tokensPerSenderPerDay: 1000 },
    cardTTL: 300,
  });
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card));
}

/** Cards for other ids, reached through resolveBaseUrl: agent://<name>.example -> /<name>/... */
function serveOddCard(name: string, res: ServerResponse): void {
  const card = (id: string, extra: object = {}) =>
    JSON.stringify({
      id,
      name: 'odd',
      version: '1',
      description: 'odd',
      url: `https://${id.slice(8)}`,
      protocolVersion: '1.2',
      skills: [
        {
          id: 's',
          name: 's',
          description: 's',
          inputSchema: {},
          outputSchema: {},
          modes: ['sync'],
          trust: 'public',
        },
      ],
      publicKeys: [entry(k2, true)],
      ...extra,
    });
  const json = { 'content-type': 'application/json' };
  switch (name) {
    case 'big':
      return void res
        .writeHead(200, json)
        .end(card('agent://big.example', { description: 'x'.repeat(70_000) }));
    case 'bigchunked': {
      // No Content-Length: the cap must hold while streaming, not only on the declared size.
      res.writeHead(200, { ...json, 'transfer-encoding': 'chunked' });
      for (let i = 0; i < 80; i++) res.write(' '.repeat(1024));
      return void res.end(card('agent://bigchunked.example'));
    }
    case 'elsewhere':
      return void res.writeHead(302, { location: `http://127.0.0.2:${port}/.well-known/agent.json` }).end();
    case 'hop':
      return void res.writeHead(301, { location: '/same/.well-known/agent.json' }).end();
    case 'same':
      return void res.writeHead(200, json).end(card('agent://hop.example'));
    case 'wrongid':
      return void res.writeHead(200, json).end(card('agent://someone-else.example'));
    case 'invalid':
      return void res.writeHead(200, json).end(card('agent://invalid.example', { owner: 'extra field' }));
    default:
      // agent://n<number>.example: one small valid card per id, for the cache's bound.
      if (/^n\d+$/.test(name)) return void res.writeHead(200, json).end(card(`agent://${name}.example`));
      return void res.writeHead(404).end();
  }
}

/** What the double saw of the caller's signatures: proves the client signs the way the spec says. */
function checkRequest(req: IncomingMessage, body: string) {
  const callerKey = publicKeyFromRaw(caller.raw.publicKey);
  if (!callerKey) throw new Error('caller key');
  const digest = req.headers['content-digest'];
  const input = req.headers['signature-input'];
  const signature = req.headers['signature'];
  let formA: boolean | null = null;
  if (typeof digest === 'string' && typeof input === 'string' && typeof signature === 'string') {
    const parsed = parseSignatureHeaders(input, signature);
    const parts = { method: req.method ?? '', path: req.url ?? '', headers: { 'content-digest': digest } };
    formA =
      digestMatches(digest, body) &&
      typeof parsed !== 'string' &&
      parsed.kid === caller.kid &&
      verifyParsedSignature(parsed, parts, callerKey);
  }
  const envelope = JSON.parse(body) as Record<string, unknown>;
  const formB = 'signature' in envelope ? verifyObjectSignature(envelope, callerKey) : null;
  return { formA, formB };
}

const ok = (result: object) => ({ traceId: 't', spanId: 's', status: 'ok', result });
const error = (code: string, message: string) => ({
  traceId: 't',
  spanId: 's',
  status: 'error',
  code,
  message,
  error: { code, message },
});

function reply(res: ServerResponse, status: number, value: object): void {
  const text = JSON.stringify(value);
  const signer: Signer = {
    ok: state.signer,
    tamper: state.signer,
    refuse: state.signer,
    unsigned: state.signer,
    partial: state.signer,
    hang: state.signer,
    'wrong-key': rogue.signer,
    inactive: k1.signer,
    'unknown-kid': createSigner('k9', privateKeyFromRaw(k3.raw.privateKey)),
  }[state.behaviour];
  const h = signResponse(signer, { status, body: text });
  const headers =
    state.behaviour === 'unsigned'
      ? {}
      : state.behaviour === 'partial'
        ? { 'Signature-Input': h['signature-input'] }
        : {
            'Content-Digest': h['content-digest'],
            'Signature-Input': h['signature-input'],
            Signature: h.signature,
          };
  // One added space: still valid JSON, but not the bytes that were signed.
  const sent = state.behaviour === 'tamper' ? text.replace('{', '{ ') : text;
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(sent);
}

/** The chat stream of PROTOCOL.md §7, written in 5-byte pieces (splitting lines, CRLFs and UTF-8). */
function serveStream(req: IncomingMessage, res: ServerResponse, body: string): void {
  const payload = (JSON.parse(body) as { payload: { kind?: string } }).payload;
  if (payload.kind === 'refused') return reply(res, 401, error('AUTH_FAILED', 'bad signature'));
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.on('close', () => (state.streamClosed = true));
  if (payload.kind === 'endless') {
    const timer = setInterval(() => res.write(': keep-alive\n\ndata: {"chunk":"."}\n\n'), 5);
    res.on('close', () => clearInterval(timer));
    return;
  }
  const result = { reply: 'Héllo ✓ भारत', channel: 'samvad' };
  if (payload.kind === 'unsigned') {
    // As the protocol's own SDKs stream: one unnamed final event, no kid, no signature.
    return void res.end(`data: ${JSON.stringify({ done: true, result })}\n\n`);
  }
  const signedResult = signObject({ status: 'ok', result }, k2.signer);
  if (payload.kind === 'forged') signedResult.result = { reply: 'forged', channel: 'samvad' };
  const text =
    ': keep-alive\r\n\r\n' +
    'event: status\r\ndata: {"status":"processing"}\r\n\r\n' +
    'data: {"chunk":"Héllo ✓ ","done":false}\n\n' +
    'data: {"chunk":"भारत","done":false}\n\n' +
    `event: result\ndata: ${JSON.stringify(signedResult)}\n\n` +
    `data: ${JSON.stringify(signObject({ done: true, result }, k2.signer))}\n\n` +
    'event: done\ndata: {}\n\n';
  const bytes = Buffer.from(text, 'utf8');
  let at = 0;
  const next = () => {
    if (at >= bytes.length) return void res.end();
    res.write(bytes.subarray(at, (at += 5)));
    setImmediate(next);
  };
  next();
}

const client = (over: Partial<AgentClientOptions> = {}) =>
  new AgentClient({ id: 'agent://caller.example', signer: caller.signer, devHttp: true, ...over });

/** Odd cards live under a path prefix of the double: agent://big.example -> http://127.0.0.1:port/big */
const oddClient = () =>
  client({ resolveBaseUrl: (id) => `http://127.0.0.1:${port}/${id.slice(8).replace('.example', '')}` });

beforeAll(async () => {
  server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => res.writeHead(500).end(String(e)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  agentId = `agent://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  Object.assign(state, {
    behaviour: 'ok',
    keys: [entry(k2, true), entry(k1, false)],
    signer: k2.signer,
    cardFetches: 0,
    requests: 0,
    taskPolls: 0,
    streamClosed: false,
  });
});

describe('AgentClient calls', () => {
  it.each([
    ['headers', { formA: true, formB: null }],
    ['envelope', { formA: null, formB: true }],
    ['both', { formA: true, formB: true }],
  ] as const)('signs with form %s and verifies the signed reply', async (form, checks) => {
    const result = await client({ form }).call(agentId, 'chat', { message: 'hi' });
    expect(result.status).toBe(200);
    expect(result.verified).toBe(true);
    const body = result.body as { result: { echo: Record<string, unknown>; checks: unknown } };
    expect(body.result.checks).toEqual(checks);
    const envelope = body.result.echo;
    expect(envelope).toMatchObject({
      from: 'agent://caller.example',
      to: agentId,
      skill: 'chat',
      mode: 'sync',
    });
    expect(String(envelope.nonce).length).toBeGreaterThanOrEqual(8);
    expect(new Date(String(envelope.timestamp)).toISOString()).toBe(envelope.timestamp);
  });

  it('applies envelope overrides and caches the card for its cardTTL', async () => {
    const c = client();
    const auth = { scheme: 'bearer' as const, token: 'secret' };
    const first = await c.call(
      agentId,
      'chat',
      { message: 'hi' },
      { envelope: { auth, nonce: 'fixed-nonce-1' } },
    );
    await c.call(agentId, 'chat', { message: 'again' });
    expect((first.body as { result: { echo: object } }).result.echo).toMatchObject({
      auth,
      nonce: 'fixed-nonce-1',
    });
    expect(state.cardFetches).toBe(1);
  });

  it.each([
    ['tamper', /Content-Digest does not match/],
    ['wrong-key', /bad signature by the key it names/],
    ['inactive', /inactive/],
    ['unsigned', /unsigned reply/],
  ] as const)('throws ResponseVerificationError on a %s reply', async (behaviour, reason) => {
    state.behaviour = behaviour;
    const call = client().call(agentId, 'chat', { message: 'hi' });
    await expect(call).rejects.toBeInstanceOf(ResponseVerificationError);
    await expect(call).rejects.toThrow(reason);
  });

  it('with acceptUnsigned, takes an unsigned reply marked unsigned, and still refuses a wrong or partial one', async () => {
    const lenient = client({ acceptUnsigned: true });
    expect(await lenient.call(agentId, 'chat', {})).toMatchObject({
      status: 200,
      verified: true,
      unsigned: false,
    });
    state.behaviour = 'unsigned';
    const unsigned = await lenient.call(agentId, 'chat', {});
    expect(unsigned).toMatchObject({ verified: false, unsigned: true, body: { status: 'ok' } });
    state.behaviour = 'wrong-key';
    await expect(lenient.call(agentId, 'chat', {})).rejects.toThrow(/bad signature by the key it names/);
    state.behaviour = 'tamper';
    await expect(lenient.call(agentId, 'chat', {})).rejects.toThrow(/Content-Digest does not match/);
    state.behaviour = 'partial';
    await expect(lenient.call(agentId, 'chat', {})).rejects.toThrow(/headers are not all there/);
    state.behaviour = 'refuse';
    await expect(lenient.submitTask(agentId, 'chat', {})).rejects.toMatchObject({
      status: 400,
      unsigned: false,
    });
  });

  it('re-fetches the card once for an unknown kid, then refuses', async () => {
    state.behaviour = 'unknown-kid';
    await expect(client().call(agentId, 'chat', {})).rejects.toThrow(/the key it names is not in the card/);
    expect(state.cardFetches).toBe(2);
  });

  it('follows a key rotation: an unknown kid that the fresh card lists verifies', async () => {
    const c = client();
    await c.call(agentId, 'chat', {});
    state.keys = [entry(k3, true), entry(k2, false)];
    state.signer = k3.signer;
    expect((await c.call(agentId, 'chat', {})).verified).toBe(true);
    expect(state.cardFetches).toBe(2);
  });

  it('with verify: false returns even unsigned replies, marked unverified, without fetching the card', async () => {
    state.behaviour = 'unsigned';
    const result = await client().call(agentId, 'chat', {}, { verify: false });
    expect(result).toMatchObject({ status: 200, verified: false });
    expect(state.cardFetches).toBe(0);
  });

  it('returns a signed refusal as a verified result with its status', async () => {
    state.behaviour = 'refuse';
    const result = await client().call(agentId, 'chat', {});
    expect(result).toMatchObject({ status: 401, verified: true, body: { error: { code: 'AUTH_FAILED' } } });
  });

  it('gives up after timeoutMs with a message that says so', async () => {
    state.behaviour = 'hang';
    const call = client({ timeoutMs: 150 }).call(agentId, 'chat', {});
    await expect(call).rejects.toThrow(/No answer from .* within 150 ms/);
  });

  it('submits a task (202), polls it to done, and reports refusals with status and code', async () => {
    const c = client();
    const { taskId, response } = await c.submitTask(agentId, 'chat', { message: 'hi' });
    expect(taskId).toBe('task-1');
    expect(response).toMatchObject({ status: 202, verified: true });
    await expect(c.getTask(agentId, taskId)).resolves.toMatchObject({ status: 'running', progress: 0.5 });
    await expect(c.waitForTask(agentId, taskId, { intervalMs: 5 })).resolves.toMatchObject({
      status: 'done',
    });
    await expect(c.getTask(agentId, 'nope')).rejects.toMatchObject({ status: 404, code: 'SKILL_NOT_FOUND' });
    state.behaviour = 'refuse';
    const refused = c.submitTask(agentId, 'chat', {});
    await expect(refused).rejects.toBeInstanceOf(AgentCallError);
    await expect(refused).rejects.toMatchObject({ status: 400, code: 'SCHEMA_INVALID' });
  });
});

describe('AgentClient streams', () => {
  const collect = async (events: AsyncIterable<StreamEvent>) => {
    const out: StreamEvent[] = [];
    for await (const event of events) out.push(event);
    return out;
  };

  it('parses a stream split in 5-byte pieces and verifies its final events', async () => {
    const events = await collect(client().stream(agentId, 'chat', {}));
    const summary = events.map((e) => [e.event ?? '(unnamed)', e.verified]);
    expect(summary).toEqual([
      ['status', false],
      ['(unnamed)', false],
      ['(unnamed)', false],
      ['result', true],
      ['(unnamed)', true],
      ['done', false],
    ]);
    const chunks = events.map((e) => (e.data as { chunk?: string }).chunk).filter(Boolean);
    expect(chunks.join('')).toBe('Héllo ✓ भारत');
    expect(events[3]?.data).toMatchObject({ status: 'ok', result: { reply: 'Héllo ✓ भारत' }, kid: 'k2' });
    expect(events[4]?.raw).toMatch(/^data: \{"done":true/);
  });

  it("an SDK's unsigned final event: refused by default, marked unsigned with acceptUnsigned", async () => {
    await expect(collect(client().stream(agentId, 'chat', { kind: 'unsigned' }))).rejects.toThrow(
      /event "done" failed verification: it carries no kid\/signature/,
    );
    const events = await collect(
      client({ acceptUnsigned: true }).stream(agentId, 'chat', { kind: 'unsigned' }),
    );
    expect(events.map((e) => [e.verified, e.unsigned])).toEqual([[false, true]]);
  });

  it('throws ResponseVerificationError on a final event whose content was changed', async () => {
    const run = collect(client().stream(agentId, 'chat', { kind: 'forged' }));
    await expect(run).rejects.toThrow(/event "result" failed verification: bad signature by the key/);
  });

  it('throws AgentCallError with status, code and body when refused before the stream starts', async () => {
    const run = collect(client().stream(agentId, 'chat', { kind: 'refused' }));
    await expect(run).rejects.toMatchObject({ name: 'AgentCallError', status: 401, code: 'AUTH_FAILED' });
  });

  it('closes the connection when the consumer stops early', async () => {
    for await (const event of client().stream(agentId, 'chat', { kind: 'endless' })) {
      expect(event.data).toEqual({ chunk: '.' });
      break;
    }
    await expect.poll(() => state.streamClosed, { timeout: 2000 }).toBe(true);
  });
});

describe('card fetch limits', () => {
  it.each([
    ['an oversize card (Content-Length)', 'agent://big.example', /larger than the 65536 bytes/],
    ['an oversize card (chunked)', 'agent://bigchunked.example', /larger than the 65536 bytes/],
    ['a redirect to another host', 'agent://elsewhere.example', /redirects to another origin/],
    ['a card for another id', 'agent://wrongid.example', /describes another agent id, not agent:\/\/wrongid/],
    ['a card with fields the schema forbids', 'agent://invalid.example', /not a valid agent card/],
  ])('refuses %s', async (_name, id, reason) => {
    const fetching = oddClient().fetchCard(id);
    await expect(fetching).rejects.toBeInstanceOf(CardFetchError);
    await expect(fetching).rejects.toThrow(reason);
  });

  it('follows a redirect that stays on the same origin', async () => {
    await expect(oddClient().fetchCard('agent://hop.example')).resolves.toMatchObject({
      id: 'agent://hop.example',
    });
  });

  it('refuses plain http without devHttp, before any connection', async () => {
    const strict = client({ devHttp: false, resolveBaseUrl: () => `http://127.0.0.1:${port}` });
    await expect(strict.fetchCard(agentId)).rejects.toThrow(/https only/);
    await expect(strict.call(agentId, 'chat', {})).rejects.toThrow(/https only/);
    expect(state.requests).toBe(0);
  });

  it('maps ids to base URLs: https by default, http for loopback with devHttp, *.localhost kept (appFetch resolves it)', () => {
    expect(baseUrlFor('agent://abc.loca.lt')).toBe('https://abc.loca.lt');
    expect(baseUrlFor('agent://127.0.0.1:8787')).toBe('https://127.0.0.1:8787');
    expect(baseUrlFor('agent://127.0.0.1:8787', { devHttp: true })).toBe('http://127.0.0.1:8787');
    expect(baseUrlFor('agent://bob.localhost:9000', { devHttp: true })).toBe('http://bob.localhost:9000');
    expect(baseUrlFor('agent://[::1]:9000', { devHttp: true })).toBe('http://[::1]:9000');
    expect(baseUrlFor('agent://example.com', { devHttp: true })).toBe('https://example.com');
    expect(() => baseUrlFor('https://example.com')).toThrow(/not an agent id/);
    expect(() =>
      baseUrlFor('agent://x', { devHttp: true, resolveBaseUrl: () => 'http://example.com' }),
    ).toThrow(/https only/);
  });
});

describe('the card cache', () => {
  const resolveBaseUrl = (id: string) => `http://127.0.0.1:${port}/${id.slice(8).replace('.example', '')}`;

  it('stays bounded over 10,000 distinct lookups, least recently used out first', async () => {
    const cache = new CardCache({ devHttp: true, resolveBaseUrl });
    let largest = 0;
    for (let i = 0; i < 10_000; i += 10) {
      const batch = Array.from({ length: 10 }, (_, j) => cache.get(`agent://n${i + j}.example`));
      largest = Math.max(largest, cache.size);
      await Promise.all(batch);
      // An agent called all along stays cached: it is always among the most recently used.
      await cache.get('agent://n99999.example');
    }
    expect(largest).toBe(CARD_CACHE_MAX_ENTRIES);
    expect(state.requests).toBe(10_001);
  }, 60_000);

  it('forgets a card after its cardTTL, even one never asked for again', async () => {
    let now = 1_000_000;
    const cache = new CardCache({ devHttp: true, resolveBaseUrl, now: () => now });
    await cache.get('agent://n1.example');
    await cache.get('agent://n1.example');
    expect(state.requests).toBe(1);
    now += 301_000; // its cardTTL is 300 s
    await cache.get('agent://n2.example');
    expect(cache.size).toBe(1);
    await cache.get('agent://n1.example');
    expect(state.requests).toBe(3);
  });
});

describe('SseParser', () => {
  const text =
    ': comment\r\n\r\nevent: status\r\ndata: {"a":1}\r\n\r\n' +
    'data: line one\ndata:line two\n\nevent: named-only\n\n' +
    'data\rdata: x\r\rid: 7\nretry: 10\ndata: {"done":true}\n\n';
  const expected: SseBlock[] = [
    { event: 'status', data: '{"a":1}', raw: 'event: status\ndata: {"a":1}' },
    { data: 'line one\nline two', raw: 'data: line one\ndata:line two' },
    { data: '\nx', raw: 'data\ndata: x' },
    { data: '{"done":true}', raw: 'id: 7\nretry: 10\ndata: {"done":true}' },
  ];

  it('gives the same blocks wherever the text is split in two', () => {
    for (let i = 0; i <= text.length; i++) {
      const parser = new SseParser();
      const blocks = [...parser.push(text.slice(0, i)), ...parser.push(text.slice(i)), ...parser.end()];
      expect(blocks, `split at ${i}`).toEqual(expected);
    }
  });

  it('gives the same blocks fed one character at a time', () => {
    const parser = new SseParser();
    const blocks = [...text].flatMap((ch) => parser.push(ch));
    expect([...blocks, ...parser.end()]).toEqual(expected);
  });

  it('keeps a last block that lacks its blank line, drops a cut-off line', () => {
    const complete = new SseParser();
    expect([...complete.push('data: 1\n'), ...complete.end()]).toEqual([{ data: '1', raw: 'data: 1' }]);
    const cut = new SseParser();
    expect([...cut.push('data: 1\ndata: {"trunc'), ...cut.end()]).toEqual([]);
  });

  it('refuses to buffer a block larger than its limit', () => {
    const parser = new SseParser(100);
    expect(() => parser.push('data: ' + 'x'.repeat(200))).toThrow(/exceeds 100/);
    const lines = new SseParser(100);
    expect(() => lines.push('data: xxxxxxxxxx\n'.repeat(20))).toThrow(/exceeds 100/);
  });
});
