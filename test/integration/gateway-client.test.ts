// The gateway client against a real HTTP gateway double (and, for wire-level edge cases, raw servers).
import { createServer } from 'node:http';
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/bridge/diagnosis.js';
import type { GatewayProblem } from '../../src/bridge/diagnosis.js';
import { SseParser, callGateway, gatewayEndpoint, partialCost } from '../../src/bridge/gateway-client.js';
import type { ChatCall, GatewayConfig } from '../../src/bridge/gateway-client.js';
import { startGatewayDouble } from '../fixtures/gateway-double.js';
import type { GatewayBehaviour, GatewayDouble } from '../fixtures/gateway-double.js';

let gateway: GatewayDouble;
let config: GatewayConfig;
const call: ChatCall = { message: 'hello', user: 'agent://peer.example|chat' };

beforeAll(async () => {
  // One agent, so model `openclaw` names it (with several, OpenClaw refuses it as ambiguous).
  gateway = await startGatewayDouble({ token: 'tok-secret-0123456789', agents: ['main'] });
});
afterAll(() => gateway.close());
beforeEach(() => {
  gateway.set({
    behaviour: 'ok',
    reply: (m) => `echo: ${m}`,
    deltas: (r) => r.match(/[\s\S]{1,3}/gu) ?? [],
    deltaDelayMs: 0,
    firstByteDelayMs: 300,
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    requireScope: false,
  });
  gateway.requests.length = 0;
  config = { url: gateway.url, token: gateway.token, model: 'openclaw', timeoutMs: 5000 };
});

/** Runs a call that must fail and returns its GatewayError. */
async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

/** Nothing a remote caller or a log line sees may carry the URL, the token or a local path. */
function expectSafe(error: GatewayError, url = gateway.url) {
  expect(error.callerMessage).not.toContain(url);
  expect(error.callerMessage).not.toContain('127.0.0.1');
  expect(error.callerMessage).not.toContain('openclaw.json');
  for (const text of [error.message, error.diagnosis, error.fix, error.callerMessage, String(error.stack)]) {
    expect(text).not.toContain('tok-secret-0123456789');
  }
}

const stream = (deltas: string[]): ChatCall => ({ ...call, onDelta: (t) => deltas.push(t) });

describe('plain calls', () => {
  it('returns the reply and the usage', async () => {
    const result = await callGateway(config, call);
    expect(result).toEqual({
      reply: 'echo: hello',
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
    });
  });

  it('sends the bearer token, both scope headers, the channel and the OpenAI body', async () => {
    await callGateway({ ...config, model: 'openclaw/main' }, call);
    const [request] = gateway.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
    expect(request?.headers).toMatchObject({
      authorization: 'Bearer tok-secret-0123456789',
      'x-openclaw-scopes': 'operator.write',
      'x-gateway-scopes': 'operator.write',
      'x-openclaw-message-channel': 'samvad',
      'content-type': 'application/json',
    });
    expect(request?.json).toEqual({
      model: 'openclaw/main',
      messages: [{ role: 'user', content: 'hello' }],
      user: 'agent://peer.example|chat',
    });
  });

  it('sends every call on the samvad message channel, and the framing as a system message before the user text', async () => {
    const text = 'You are answering a stranger.\n"Quoted", \u2028 and all.';
    await callGateway(config, { ...call, system: { text, json: JSON.stringify(text) } });
    expect(gateway.requests[0]?.headers['x-openclaw-message-channel']).toBe('samvad');
    expect((gateway.requests[0]?.json as { messages: unknown }).messages).toEqual([
      { role: 'system', content: text },
      { role: 'user', content: 'hello' },
    ]);
  });

  it('accepts a URL with a trailing slash', async () => {
    const result = await callGateway({ ...config, url: `${gateway.url}/` }, call);
    expect(result.reply).toBe('echo: hello');
    expect(gateway.requests[0]?.path).toBe('/v1/chat/completions');
  });

  it('passes the scope check of builds that demand it', async () => {
    gateway.set({ requireScope: true });
    await expect(callGateway(config, call)).resolves.toMatchObject({ reply: 'echo: hello' });
  });

  it('reports usage as null when the gateway sends all zeros or none', async () => {
    gateway.set({ usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } });
    expect((await callGateway(config, call)).usage).toBeNull();
    gateway.set({ usage: null });
    expect((await callGateway(config, call)).usage).toBeNull();
  });

  it('treats the legacy "Error: internal error" reply as a failed run', async () => {
    gateway.set({ behaviour: 'stream-legacy-error' });
    const error = await failure(callGateway(config, call));
    expect(error.problem).toBe('gateway-error');
  });
});

// Every failure of GATEWAY.md's table, the same in plain and stream mode (all come before the 200).
const failures: Array<[GatewayBehaviour, GatewayProblem, number | undefined, string]> = [
  ['disabled-404', 'endpoint-disabled', 404, 'gateway.http.endpoints.chatCompletions.enabled to true'],
  ['disabled-405', 'endpoint-disabled', 405, 'gateway.http.endpoints.chatCompletions.enabled to true'],
  ['html-page', 'endpoint-disabled', 200, 'gateway.http.endpoints.chatCompletions.enabled to true'],
  ['unauthorized', 'unauthorized', 401, 'gateway.auth.token'],
  ['forbidden-scope', 'forbidden-scope', 403, 'update the OpenClaw gateway'],
  ['rate-limited', 'rate-limited', 429, 'Wait for the lockout'],
  ['bad-request', 'bad-request', 400, 'model setting'],
  ['internal-error', 'gateway-error', 500, "gateway's logs"],
  ['not-json', 'not-chat-server', 200, 'Check the gateway URL'],
  ['no-choices', 'not-chat-server', 200, 'Check the gateway URL'],
];

describe.each([
  ['plain', false],
  ['stream', true],
])('failures in %s mode', (_mode, streaming) => {
  it.each(failures)('%s -> %s', async (behaviour, problem, httpStatus, fix) => {
    gateway.set({ behaviour });
    const deltas: string[] = [];
    const error = await failure(callGateway(config, streaming ? stream(deltas) : call));
    expect(error.problem).toBe(problem);
    expect(error.httpStatus).toBe(httpStatus);
    expect(error.fix).toContain(fix);
    expect(error.message).toBe(error.diagnosis);
    expect(error.diagnosis).toContain(gateway.url); // the operator is told which URL
    expect(deltas).toEqual([]);
    expectSafe(error);
  });
});

describe('other failures', () => {
  it('says how long to wait when rate-limited', async () => {
    gateway.set({ behaviour: 'rate-limited' });
    const error = await failure(callGateway(config, call));
    expect(error.retryAfterSeconds).toBe(300);
    expect(gateway.requests).toHaveLength(1); // never retried: retries feed the lockout
  });

  it('reports a wrong token as unauthorized without echoing it', async () => {
    const error = await failure(callGateway({ ...config, token: 'wrong-token-value' }, call));
    expect(error.problem).toBe('unauthorized');
    expect(`${error.message} ${error.callerMessage}`).not.toContain('wrong-token-value');
  });

  it.each([
    ['a model the gateway does not know', { model: 'gpt-4o' }, call],
    ['an empty message', {}, { ...call, message: '  ' }],
  ])('reports %s as a bad request', async (_name, change, chatCall) => {
    const error = await failure(callGateway({ ...config, ...change }, chatCall));
    expect(error.problem).toBe('bad-request');
    expect(error.httpStatus).toBe(400);
  });

  it('reports a gateway that is not running as unreachable', async () => {
    const url = await closedPortUrl();
    const error = await failure(callGateway({ ...config, url }, call));
    expect(error.problem).toBe('unreachable');
    expect(error.diagnosis).toContain('connection refused');
    expect(error.fix).toContain('Start the gateway');
    expectSafe(error, url);
  });

  it.each([
    ['an invalid URL', { url: 'not a url' }],
    ['a non-http URL', { url: 'ftp://127.0.0.1/' }],
    ['no token', { token: '' }],
    ['a token with a line break', { token: 'abc\r\nx-evil: 1' }],
  ])('refuses to call with %s', async (_name, change) => {
    const error = await failure(callGateway({ ...config, ...change }, call));
    expect(error.problem).toBe('not-configured');
    expect(gateway.requests).toHaveLength(0);
    expect(error.message).not.toContain('abc');
  });
});

describe('timeouts and aborts', () => {
  it('times out a gateway that never answers, and lets it know', async () => {
    gateway.set({ behaviour: 'hang' });
    const started = Date.now();
    const error = await failure(callGateway({ ...config, timeoutMs: 100 }, call));
    expect(error.problem).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(error.diagnosis).toContain('0.1 s');
    await expect(gateway.waitForAbort()).resolves.toMatchObject({ aborted: true });
  });

  it.each([
    ['plain', false],
    ['stream', true],
  ])('times out a slow first byte in %s mode', async (_mode, streaming) => {
    gateway.set({ behaviour: 'slow-first-byte', firstByteDelayMs: 300 });
    const tight = { ...config, timeoutMs: 100 };
    const error = await failure(callGateway(tight, streaming ? stream([]) : call));
    expect(error.problem).toBe('timeout');
    await gateway.waitForAbort();
  });

  it('waits for a slow first byte that is within the timeout', async () => {
    gateway.set({ behaviour: 'slow-first-byte', firstByteDelayMs: 100 });
    await expect(callGateway({ ...config, timeoutMs: 1000 }, call)).resolves.toMatchObject({
      reply: 'echo: hello',
    });
  });

  it('aborts the gateway request when the signal fires', async () => {
    gateway.set({ behaviour: 'hang' });
    const controller = new AbortController();
    const pending = callGateway(config, { ...call, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const error = await failure(pending);
    expect(error.problem).toBe('aborted');
    const aborted = await gateway.waitForAbort();
    expect(aborted.path).toBe('/v1/chat/completions');
  });

  it('does not call the gateway with a signal that already fired', async () => {
    const error = await failure(callGateway(config, { ...call, signal: AbortSignal.abort() }));
    expect(error.problem).toBe('aborted');
    expect(gateway.requests).toHaveLength(0);
  });
});

describe('streaming', () => {
  it('delivers the deltas in order, the reply and the usage', async () => {
    gateway.set({ deltas: () => ['ec', 'ho: ', 'hel', 'lo'] });
    const deltas: string[] = [];
    const result = await callGateway(config, stream(deltas));
    expect(deltas).toEqual(['ec', 'ho: ', 'hel', 'lo']);
    expect(result).toEqual({
      reply: 'echo: hello',
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
    });
  });

  it('asks the gateway to stream with usage', async () => {
    await callGateway(config, stream([]));
    expect(gateway.requests[0]?.json).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(gateway.requests[0]?.headers.accept).toBe('text/event-stream');
  });

  it('hands each delta over as it arrives, not when the reply is complete', async () => {
    gateway.set({ deltas: () => ['one ', 'two ', 'three'], deltaDelayMs: 100 });
    let firstDeltaAt = 0;
    const result = await callGateway(config, {
      ...call,
      onDelta: () => {
        firstDeltaAt ||= Date.now();
      },
    });
    const doneAt = Date.now();
    expect(result.reply).toBe('one two three');
    expect(doneAt - firstDeltaAt).toBeGreaterThanOrEqual(150); // two more 100 ms gaps came after it
  });

  it('uses the timeout as an idle timeout: a long stream with short gaps succeeds', async () => {
    gateway.set({ deltas: () => ['a', 'b', 'c', 'd', 'e'], deltaDelayMs: 50 });
    const result = await callGateway({ ...config, timeoutMs: 150 }, stream([]));
    expect(result.reply).toBe('abcde'); // 200 ms in all, longer than the timeout
  });

  it('times out a stream that goes silent for longer than the timeout', async () => {
    gateway.set({ deltas: () => ['a', 'b'], deltaDelayMs: 400 });
    const deltas: string[] = [];
    const error = await failure(callGateway({ ...config, timeoutMs: 100 }, stream(deltas)));
    expect(error.problem).toBe('timeout');
    expect(deltas).toEqual(['a']);
    await gateway.waitForAbort();
  });

  it('reports an error frame after the 200 as a stream error', async () => {
    gateway.set({ behaviour: 'stream-error-frame' });
    const deltas: string[] = [];
    const error = await failure(callGateway(config, stream(deltas)));
    expect(error.problem).toBe('stream-error');
    expect(error.diagnosis).toContain('internal error');
    expect(error.fix).toContain("gateway's logs");
    expect(deltas).toEqual(['ech']);
    expectSafe(error);
  });

  it('reports the legacy "Error: internal error" chunk as a stream error without passing it on', async () => {
    gateway.set({ behaviour: 'stream-legacy-error' });
    const deltas: string[] = [];
    const error = await failure(callGateway(config, stream(deltas)));
    expect(error.problem).toBe('stream-error');
    expect(deltas).toEqual([]);
  });

  it('aborts mid-stream when the caller goes away', async () => {
    gateway.set({ deltaDelayMs: 100 });
    const controller = new AbortController();
    const deltas: string[] = [];
    const error = await failure(
      callGateway(config, {
        ...call,
        signal: controller.signal,
        onDelta: (t) => {
          deltas.push(t);
          controller.abort();
        },
      }),
    );
    expect(error.problem).toBe('aborted');
    expect(deltas).toEqual(['ech']);
    await gateway.waitForAbort();
  });

  it('passes an exception from onDelta through and stops the request', async () => {
    gateway.set({ deltaDelayMs: 100 });
    const boom = new Error('caller bug');
    await expect(
      callGateway(config, {
        ...call,
        onDelta: () => {
          throw boom;
        },
      }),
    ).rejects.toBe(boom);
    await gateway.waitForAbort();
  });
});

describe('wire-level edge cases', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
  async function serve(handler: RequestListener): Promise<GatewayConfig> {
    const server = createServer(handler);
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, token: 't', model: 'openclaw', timeoutMs: 2000 };
  }
  const sse = (writes: string[], gapMs = 5): RequestListener => {
    return (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      const next = (i: number) => {
        if (i === writes.length) return res.end();
        res.write(writes[i]);
        setTimeout(() => next(i + 1), gapMs);
      };
      next(0);
    };
  };
  const frame = (content: string) => JSON.stringify({ choices: [{ index: 0, delta: { content } }] });

  it('parses frames split across TCP chunks, with CRLF, comments and multi-line data', async () => {
    const text =
      ': a comment\r\n' +
      `event: message\r\ndata: ${frame('Hel')}\r\n\r\n` +
      `data: {"choices":[{"index":0,\r\ndata: "delta":{"content":"lo"}}]}\r\n\r\n` +
      `data:${frame('!')}\r\n\r\n` +
      'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\r\n\r\n' +
      'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}\r\n\r\n' +
      'data: [DONE]\r\n\r\n';
    // Cut it into small pieces, one of them between a \r and its \n.
    const pieces = text.match(/[\s\S]{1,7}/g) ?? [];
    const target = await serve(sse(pieces, 1));
    const deltas: string[] = [];
    const result = await callGateway(target, stream(deltas));
    expect(deltas).toEqual(['Hel', 'lo', '!']);
    expect(result).toEqual({
      reply: 'Hello!',
      usage: { promptTokens: 3, completionTokens: 2, totalTokens: 5 },
    });
  });

  it('fails a stream that ends before the reply is complete', async () => {
    const target = await serve(sse([`data: ${frame('partial')}\n\n`]));
    const error = await failure(callGateway(target, stream([])));
    expect(error.problem).toBe('stream-error');
    expect(error.diagnosis).toContain('ended before the reply was complete');
  });

  it('accepts a finished stream that omits [DONE]', async () => {
    const finished = JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    const target = await serve(sse([`data: ${frame('ok')}\n\n`, `data: ${finished}\n\n`]));
    await expect(callGateway(target, stream([]))).resolves.toEqual({ reply: 'ok', usage: null });
  });

  it('reports a frame that is not JSON', async () => {
    const target = await serve(sse(['data: <html>\n\n']));
    const error = await failure(callGateway(target, stream([])));
    expect(error.problem).toBe('not-chat-server');
  });

  it('delivers the reply of a server that ignores stream: true as one delta', async () => {
    const target = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'whole' } }] }));
    });
    const deltas: string[] = [];
    await expect(callGateway(target, stream(deltas))).resolves.toEqual({ reply: 'whole', usage: null });
    expect(deltas).toEqual(['whole']);
  });

  it('reports a connection cut mid-reply', async () => {
    const target = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100' });
      res.write('{"choices":');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const error = await failure(callGateway(target, call));
    expect(error.problem).toBe('unreachable');
    expect(error.diagnosis).toContain('closed before the reply was complete');
  });

  // The keep-alive race: the server closes an idle connection just as the next call goes out on it.
  const resetting = (shouldReset: (requestOnSocket: number) => boolean, seen: string[]): RequestListener => {
    const counts = new WeakMap<object, number>();
    return (req, res) => {
      const count = (counts.get(req.socket) ?? 0) + 1;
      counts.set(req.socket, count);
      seen.push(`${count}`);
      if (shouldReset(count)) return req.socket.destroy();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'ok' } }] }));
    };
  };

  it('sends a call again, once, when a reused connection is closed before any answer', async () => {
    const seen: string[] = [];
    const target = await serve(resetting((count) => count === 2, seen));
    await callGateway(target, call);
    await new Promise((r) => setTimeout(r, 20)); // the first connection is idle again
    await expect(callGateway(target, call)).resolves.toMatchObject({ reply: 'ok' });
    // The second call went out on the first connection, was cut, then went out on a new one.
    expect(seen).toEqual(['1', '2', '1']);
  });

  it('never sends a call again when a new connection is closed before any answer', async () => {
    const seen: string[] = [];
    const target = await serve(resetting(() => true, seen));
    const error = await failure(callGateway(target, call));
    expect(error.problem).toBe('unreachable');
    expect(error.diagnosis).toContain('connection closed by the server');
    expect(seen).toEqual(['1']);
  });

  it('never repeats a token that the gateway echoes in an error', async () => {
    const target = await serve((req, res) => {
      res.writeHead(400, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `bad header ${req.headers.authorization}`, type: 'x' } }));
    });
    const error = await failure(callGateway({ ...target, token: 'tok-secret-0123456789' }, call));
    expect(error.diagnosis).toContain('bad header Bearer [redacted]');
    expectSafe(error, target.url);
  });

  it('calls the chat path under a base path, without doubling /v1', async () => {
    const paths: string[] = [];
    const target = await serve((req, res) => {
      paths.push(req.url ?? '');
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'ok' } }] }));
    });
    await callGateway({ ...target, url: `${target.url}/openclaw/` }, call);
    await callGateway({ ...target, url: `${target.url}/v1` }, call);
    expect(paths).toEqual(['/openclaw/v1/chat/completions', '/v1/chat/completions']);
  });
});

// Issue 15: hanging up must not dodge the daily budget, so a call that ends without its reply says what it
// had cost by then; a call the gateway never had, or refused, costs nothing.
describe('what a call that ended without its reply had cost', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('the text passed on when the caller leaves mid-stream; the gateway stops', async () => {
    gateway.set({ deltaDelayMs: 100 });
    const controller = new AbortController();
    const deltas: string[] = [];
    const onDelta = (text: string) => {
      deltas.push(text);
      if (deltas.length === 2) controller.abort();
    };
    const error = await failure(callGateway(config, { ...call, signal: controller.signal, onDelta }));
    expect(error.problem).toBe('aborted');
    expect(partialCost(error)).toEqual({ usage: null, deliveredChars: 'echo: '.length });
    await gateway.waitForAbort();
  });

  it("the gateway's own count when it came before the caller left", async () => {
    // The usage frame, then silence before [DONE] (a gateway may be slow to close): the caller gives up.
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'hi' } }] })}\n\n`);
      res.write('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n');
      res.write('data: {"choices":[],"usage":{"prompt_tokens":900,"completion_tokens":2}}\n\n');
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const target = { ...config, url: `http://127.0.0.1:${port}` };
    const controller = new AbortController();
    const pending = callGateway(target, { ...call, signal: controller.signal, onDelta: () => undefined });
    setTimeout(() => controller.abort(), 100);
    const error = await failure(pending);
    expect(partialCost(error)).toEqual({
      usage: { promptTokens: 900, completionTokens: 2, totalTokens: 902 },
      deliveredChars: 2,
    });
  });

  it('the prompt only when a plain call is abandoned or times out while the gateway works', async () => {
    gateway.set({ behaviour: 'hang' });
    const controller = new AbortController();
    const pending = callGateway(config, { ...call, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(partialCost(await failure(pending))).toEqual({ usage: null, deliveredChars: 0 });
    const timedOut = await failure(callGateway({ ...config, timeoutMs: 50 }, call));
    expect(timedOut.problem).toBe('timeout');
    expect(partialCost(timedOut)).toEqual({ usage: null, deliveredChars: 0 });
  });

  it('the text passed on when a stream breaks off with an error frame', async () => {
    gateway.set({ behaviour: 'stream-error-frame' });
    const error = await failure(callGateway(config, stream([])));
    expect(partialCost(error)).toEqual({ usage: null, deliveredChars: 3 });
  });

  it('nothing when the gateway never had the call, or answered it with an error', async () => {
    const refused = await failure(callGateway({ ...config, url: await closedPortUrl() }, call));
    expect(partialCost(refused)).toBeUndefined();
    expect(partialCost(await failure(callGateway(config, { ...call, signal: AbortSignal.abort() })))).toBe(
      undefined,
    );
    for (const behaviour of ['internal-error', 'unauthorized', 'starting'] as GatewayBehaviour[]) {
      gateway.set({ behaviour });
      expect(partialCost(await failure(callGateway(config, call))), behaviour).toBeUndefined();
      expect(partialCost(await failure(callGateway(config, stream([])))), behaviour).toBeUndefined();
    }
  });
});

describe('gatewayEndpoint and SseParser', () => {
  it.each([
    ['http://h:1', 'http://h:1/v1/chat/completions'],
    ['http://h:1/', 'http://h:1/v1/chat/completions'],
    ['http://h:1/base//', 'http://h:1/base/v1/chat/completions'],
    ['https://h/base/v1/', 'https://h/base/v1/chat/completions'],
    ['https://h/v1/chat/completions', 'https://h/v1/chat/completions'],
  ])('%s -> %s', (base, expected) => {
    expect(gatewayEndpoint(base, '/v1/chat/completions').toString()).toBe(expected);
  });

  it('waits for the \\n of a \\r\\n split across chunks', () => {
    const parser = new SseParser();
    expect(parser.push('data: a\r')).toEqual([]);
    expect(parser.push('\ndata: b\r\n\r')).toEqual([]);
    expect(parser.push('\n')).toEqual(['a\nb']);
    expect(parser.push('data: c')).toEqual([]);
    expect(parser.end()).toEqual(['c']);
  });
});

async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return `http://127.0.0.1:${port}`;
}
