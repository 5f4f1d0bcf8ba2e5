import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCard, signResponse, type AgentCard } from '../../src/protocol/index.js';
import { runSelfTest, type SelfTestReport } from '../../src/self-test.js';
import { checkReachable } from '../../src/tunnel/reachability.js';
import { UnreachableError } from '../../src/tunnel/unreachable.js';
import { testKey } from '../helpers/card-host.js';

// Issue 26, item 9: each way a call through the public URL can fail names its own fix, in the reachability
// check (the Tunnel card, the registry) and in the self-test; and a failed self-test never asks whether the
// agent itself is a SAMVAD agent. A real server on loopback stands in for the public address: it serves
// this agent's card, or fails the way tunnels and proxies fail.

type Handler = (req: IncomingMessage, res: ServerResponse, count: number) => void;
let handler: Handler;
let server: Server;
let url: string;
let ours: AgentCard;
const key = testKey('k-self');
const counts = new Map<string, number>();

function cardFor(base: string, keys = [{ kid: key.kid, key: key.key, active: true }]): AgentCard {
  return buildCard({
    url: base,
    name: 'Self',
    version: '1.0.0',
    description: 'This agent, as its public address serves it',
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
}

const serveCard: Handler = (_req, res) =>
  void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(ours));
/** This agent's own signed reply, as /agent/message answers. */
const signedReply: Handler = (_req, res) => {
  const bytes = Buffer.from(JSON.stringify({ status: 'ok', result: { reply: 'hello' } }));
  const signed = signResponse(key.signer, { status: 200, body: bytes });
  res
    .writeHead(200, {
      'content-type': 'application/json',
      'content-digest': signed['content-digest'],
      'signature-input': signed['signature-input'],
      signature: signed.signature,
    })
    .end(bytes);
};
const status =
  (code: number, body = ''): Handler =>
  (_req, res) =>
    void res.writeHead(code, { 'content-type': 'text/plain' }).end(body);

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    const count = (counts.get(path) ?? 0) + 1;
    counts.set(path, count);
    handler(req, res, count);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  ours = cardFor(url);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  counts.clear();
  handler = serveCard;
});

async function unreachable(target = url, timeoutMs = 5000): Promise<UnreachableError> {
  const error = await checkReachable(target, ours, timeoutMs).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UnreachableError);
  const found = error as UnreachableError;
  // One message holds both, for the places that show a single line (the Tunnel card, the tray).
  expect(found.message).toBe(`${found.detail}. ${found.fix}`);
  return found;
}

describe('the reachability check names a fix for each failure', () => {
  const cardUrl = () => `${url}/.well-known/agent.json`;

  it('passes when the address serves this agent', async () => {
    await expect(checkReachable(url, ours, 5000)).resolves.toBeUndefined();
  });

  it.each<[string, number, RegExp, RegExp]>([
    [
      '408',
      408,
      /^answered HTTP 408 \(Request Timeout\): a server on the way/,
      /run the check again.*stop and start the tunnel/,
    ],
    [
      '404',
      404,
      /^answered HTTP 404 \(Not Found\): no agent card there$/,
      /^Something other than this agent answers/,
    ],
    [
      '504',
      504,
      /^answered HTTP 504 from the tunnel server: it could not reach this agent$/,
      /reconnects it by itself/,
    ],
    ['511', 511, /^answered HTTP 511: a login or a warning page/, /choose a tunnel without one/],
    ['429', 429, /^answered HTTP 429 \(Too Many Requests\)/, /^Wait a minute/],
    ['500', 500, /^answered HTTP 500: a server on the way failed$/, /^Run the check again/],
    ['418', 418, /^answered HTTP 418 instead of the agent card$/, /nothing in front that answers for it/],
  ])('HTTP %s', async (_name, code, detail, fix) => {
    handler = status(code, 'not a card');
    const error = await unreachable();
    expect(error.kind).toBe('http-status');
    expect(error.detail.startsWith(`${cardUrl()} `)).toBe(true);
    expect(error.detail.slice(cardUrl().length + 1)).toMatch(detail);
    expect(error.fix).toMatch(fix);
  });

  it('no connection, by its code', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await unreachable(`http://127.0.0.1:${port}`);
    expect(error.kind).toBe('no-connection');
    expect(error.detail).toMatch(/did not answer: the connection failed \(ECONNREFUSED\)$/);
    expect(error.fix).toMatch(/^Whatever serves the public URL is not passing calls on/);
  });

  it('a name that does not resolve', async () => {
    const error = await unreachable('http://no-such-agent.invalid');
    expect(error.kind).toBe('unresolved');
    expect(error.detail).toMatch(/its name does not resolve \((ENOTFOUND|EAI_AGAIN)\)$/);
    expect(error.fix).toMatch(/internet connection and DNS/);
  });

  it('no answer in time', async () => {
    handler = () => undefined; // never answers
    const error = await unreachable(url, 300);
    expect(error.kind).toBe('timeout');
    expect(error.detail).toBe(`${cardUrl()} did not answer within 0.3 s`);
  });

  it('a redirect, which callers do not follow', async () => {
    handler = (_req, res) => void res.writeHead(302, { location: 'https://elsewhere.example/' }).end();
    const error = await unreachable();
    expect(error.kind).toBe('redirect');
    expect(error.fix).toMatch(/the public URL must serve the agent itself/);
  });

  it('something that is not a card, another agent, other keys', async () => {
    handler = status(200, '<html>hello</html>');
    expect(await unreachable()).toMatchObject({
      kind: 'not-a-card',
      detail: `${cardUrl()} did not return JSON`,
    });

    handler = (_req, res) => void res.end(JSON.stringify({ ...ours, id: 'agent://someone-else.example' }));
    const other = await unreachable();
    expect(other.kind).toBe('another-agent');
    expect(other.fix).toMatch(/given the name to someone else/);

    handler = (_req, res) =>
      void res.end(JSON.stringify(cardFor(url, [{ ...testKey('k-x'), active: true }])));
    const keys = await unreachable();
    expect(keys.kind).toBe('other-keys');
    expect(keys.fix).toMatch(/same key file \(--keys-file\)/);
  });
});

describe('the self-test names a fix for each failed stage', () => {
  async function selfTest(): Promise<SelfTestReport> {
    return runSelfTest({
      url,
      card: ours,
      signer: key.signer,
      timeoutMs: 3000,
      gatewayProblem: () => undefined,
    });
  }
  const failed = (report: SelfTestReport) => report.stages.find((stage) => !stage.ok);

  it('a 408 through the tunnel: what it is and what to do, at the stage it happened', async () => {
    handler = (req, res) =>
      req.url === '/.well-known/agent.json' ? serveCard(req, res, 1) : status(408)(req, res, 1);
    const report = await selfTest();
    expect(report.ok).toBe(false);
    expect(failed(report)).toMatchObject({
      name: 'signature',
      detail: `${url}/agent/message answered HTTP 408 (Request Timeout): a server on the way, the tunnel’s or this agent’s port, stopped waiting for a request`,
      fix: expect.stringMatching(/^It is not a setting of yours: run the check again/) as unknown,
    });
  });

  it('the card stage failing carries the reachability check’s fix', async () => {
    handler = status(504);
    const stage = failed(await selfTest());
    expect(stage?.name).toBe('card');
    expect(stage?.fix).toMatch(/reconnects it by itself/);
  });

  it('the card fetched for the signed call failing: no question whether this agent is a SAMVAD agent', async () => {
    // The card stage gets the card; the signed call's own fetch of it (to verify the signed reply) gets a
    // 404; the check after that gets it again.
    handler = (req, res, count) =>
      req.url !== '/.well-known/agent.json'
        ? signedReply(req, res, count)
        : count === 2
          ? status(404)(req, res, count)
          : serveCard(req, res, count);
    const stage = failed(await selfTest());
    expect(stage?.name).toBe('signature');
    expect(stage?.detail).not.toMatch(/SAMVAD agent\?/);
    expect(stage?.detail).toBe(
      "the signed call could not fetch this agent's card through the public URL, though it could a moment before and again just now",
    );
    expect(stage?.fix).toMatch(/^The address is unsteady: run the test again/);

    // Failing again when checked: what the address does now, with its fix.
    counts.clear();
    handler = (req, res, count) =>
      req.url !== '/.well-known/agent.json'
        ? signedReply(req, res, count)
        : count >= 2
          ? status(404)(req, res, count)
          : serveCard(req, res, count);
    const again = failed(await selfTest());
    expect(again?.detail).toMatch(
      /^the signed call could not fetch this agent's card through the public URL: .* answered HTTP 404 \(Not Found\)/,
    );
    expect(again?.fix).toMatch(/^Something other than this agent answers/);
  });

  it('a name that does not resolve', async () => {
    const report = await runSelfTest({
      url: 'http://no-such-agent.invalid',
      card: ours,
      signer: key.signer,
      timeoutMs: 3000,
      gatewayProblem: () => undefined,
    });
    expect(failed(report)).toMatchObject({
      name: 'resolve',
      detail: expect.stringMatching(
        /^no-such-agent\.invalid does not resolve \((ENOTFOUND|EAI_AGAIN)\)$/,
      ) as unknown,
      fix: expect.stringMatching(/internet connection and DNS/) as unknown,
    });
  });
});
