import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchPeerCard } from '../../src/agent/card-fetch.js';
import { diagnoseResponse } from '../../src/bridge/diagnosis.js';
import { HIDDEN_CHARS } from '../../src/lib/text.js';
import type { AgentCard } from '../../src/protocol/index.js';
import { registerWithRegistry } from '../../src/registry/registry-client.js';
import { runSelfTest, type StageName } from '../../src/self-test.js';
import { LocaltunnelProvider } from '../../src/tunnel/localtunnel-provider.js';
import { checkReachable } from '../../src/tunnel/reachability.js';
import { startHostileAgent, type HostileAgent, type JsonAnswer } from '../fixtures/hostile-agent.js';
import { testKey } from '../helpers/card-host.js';

// Issue 15, last paragraph: text another party wrote (a registry, a tunnel server, a peer's card, the
// gateway) reaches the operator's error messages, terminal and log only as one escaped, capped line. Each
// row gets hostile text from a real server on loopback (a plain one answering what the row says, or the
// hostile agent for a peer card) and checks what the operator is shown.

const CANARY = 'EVILTEXT';
// Multi-line, a terminal colour escape, a bidi override, and 10,000 characters.
const HOSTILE = `${CANARY} line one\nFORGED LOG LINE\r\n\u001b[31mred\u001b[0m \u202eesrever ${'x'.repeat(10_000)}`;
// A card id passes the card schema (agent://, no slash or white space, 64 characters) and still hides text.
const HOSTILE_ID = `agent://${CANARY}\u001b[31m\u202elive.example`;
const HIDDEN = new RegExp(HIDDEN_CHARS, 'u');

/** What the operator sees: one line, nothing hidden or acting on the terminal, of bounded length. */
function expectOneSafeLine(shown: string, maxChars = 1000): void {
  expect(shown).toContain(CANARY);
  expect(shown).not.toMatch(HIDDEN);
  expect(shown.length).toBeLessThanOrEqual(maxChars);
}

// One loopback server answering each request with the current row's status and body.
let answer: { status: number; body: string; type?: string } = { status: 200, body: '{}' };
let server: Server;
let serverUrl: string;
let peer: HostileAgent;
// An agent the self-test calls as if it were our own through the tunnel: its replies are the tunnel's text.
let self: HostileAgent;

beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(answer.status, { 'content-type': answer.type ?? 'application/json' });
    res.end(answer.body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  peer = await startHostileAgent({ card: (card) => ({ ...card, id: HOSTILE_ID }) });
  self = await startHostileAgent();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await peer.close();
  await self.close();
});

async function failure(run: () => Promise<unknown>): Promise<string> {
  const error = await run().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Error);
  return (error as Error).message;
}

const json = (value: unknown) => JSON.stringify(value);

/** The detail the self-test reports for `stage` when the agent answers `message` as it does. */
async function selfTestDetail(message: JsonAnswer, stage: StageName): Promise<string> {
  self.answers.message = message;
  const card = (await (await fetch(`${self.url}/.well-known/agent.json`)).json()) as AgentCard;
  const report = await runSelfTest({
    url: self.url,
    card,
    signer: testKey('caller').signer,
    timeoutMs: 5000,
    gatewayProblem: () => undefined,
  });
  const found = report.stages.find((one) => one.name === stage);
  expect(found).toBeDefined();
  return (found as { detail: string }).detail;
}

describe('remote text shown to the operator is one escaped, capped line', () => {
  // `answer`: what the plain loopback server answers for the row (the self-test rows use the agent instead).
  const rows: { surface: string; answer?: typeof answer; shown: () => Promise<string> }[] = [
    {
      surface: "the registry's refusal",
      answer: { status: 400, body: json({ error: HOSTILE }) },
      shown: () => failure(() => registerWithRegistry(serverUrl, 'https://agent.example', 5000)),
    },
    {
      surface: "the registry's refusal as plain text",
      answer: { status: 503, body: HOSTILE, type: 'text/plain' },
      shown: () => failure(() => registerWithRegistry(serverUrl, 'https://agent.example', 5000)),
    },
    {
      surface: "the name in the registry's record",
      answer: {
        status: 200,
        body: json({ id: 'agent://agent.example', name: HOSTILE, registeredAt: new Date().toISOString() }),
      },
      shown: async () => (await registerWithRegistry(serverUrl, 'https://agent.example', 5000)).name,
    },
    {
      surface: "the tunnel server's refusal",
      answer: { status: 403, body: json({ message: HOSTILE }) },
      shown: () =>
        failure(() =>
          new LocaltunnelProvider({ host: serverUrl, stepTimeoutMs: 5000 }).open(1, {
            subdomain: 'mine',
            signal: new AbortController().signal,
          }),
        ),
    },
    {
      surface: "the tunnel server's refusal as plain text",
      answer: { status: 502, body: HOSTILE, type: 'text/plain' },
      shown: () =>
        failure(() =>
          new LocaltunnelProvider({ host: serverUrl, stepTimeoutMs: 5000 }).open(1, {
            signal: new AbortController().signal,
          }),
        ),
    },
    {
      surface: "the self-test's refusal",
      shown: () =>
        selfTestDetail(
          { status: 403, body: { error: { code: 'AUTH_FAILED', message: HOSTILE } } },
          'signature',
        ),
    },
    {
      surface: "the self-test's error reply",
      shown: () =>
        selfTestDetail({ status: 400, body: { code: 'SCHEMA_INVALID', message: HOSTILE } }, 'signature'),
    },
    {
      surface: "the self-test's reply text",
      shown: () =>
        selfTestDetail({ status: 200, body: { status: 'ok', result: { reply: HOSTILE } } }, 'gateway'),
    },
    {
      surface: 'the id of the card the reachability check was served',
      answer: { status: 200, body: json({ id: HOSTILE }) },
      shown: () => failure(() => checkReachable(serverUrl, {} as AgentCard, 5000)),
    },
  ];

  it.each(rows)('$surface', async ({ answer: row, shown }) => {
    if (row) answer = row;
    expectOneSafeLine(await shown());
  });

  it('a registry record whose id is not an agent id is refused, not kept', async () => {
    answer = {
      status: 200,
      body: json({ id: HOSTILE_ID, name: 'x', registeredAt: new Date().toISOString() }),
    };
    const message = await failure(() => registerWithRegistry(serverUrl, 'https://agent.example', 5000));
    expect(message).toMatch(/not with a registration record/);
  });

  it("the tunnel server's url: only its origin becomes the agent's address, and no url is no reply", async () => {
    const port = Number(new URL(serverUrl).port);
    const provider = new LocaltunnelProvider({ host: serverUrl, stepTimeoutMs: 5000 });
    const signal = new AbortController().signal;
    const url = `https://t1.tunnel.example/${CANARY}\u001b[31m\u202e${'x'.repeat(10_000)}`;
    // The client then connects its tunnel socket to `port`: this same server accepts it.
    answer = { status: 200, body: json({ id: 't1', port, max_conn_count: 1, url }) };
    const connection = await provider.open(1, { signal });
    connection.close();
    expect(connection.url).toBe('https://t1.tunnel.example');

    answer = { status: 200, body: json({ id: 't1', port, max_conn_count: 1, url: HOSTILE }) };
    const message = await failure(() => provider.open(1, { signal }));
    expect(message).toMatch(/not a localtunnel reply/);
  });

  it("a peer card naming another id: the error does not repeat the peer's id", async () => {
    const message = await failure(() =>
      fetchPeerCard(peer.id, { devHttpPeers: true, timeoutMs: 5000, maxBytes: 64 * 1024 }),
    );
    expect(message).toContain('describes another agent id');
    expect(message).not.toContain(CANARY);
    expect(message).not.toMatch(HIDDEN);
  });

  it("the gateway's error message quoted in the diagnosis", () => {
    // diagnoseResponse is what the gateway client calls with the body it read; the body is given here as read.
    const bodies: [string, string][] = [
      ['application/json', json({ error: { message: HOSTILE } })],
      ['text/plain', HOSTILE],
    ];
    for (const [contentType, body] of bodies) {
      const problem = diagnoseResponse({ status: 500, contentType, body }, 'http://127.0.0.1:1');
      expectOneSafeLine(problem.diagnosis);
    }
  });
});
