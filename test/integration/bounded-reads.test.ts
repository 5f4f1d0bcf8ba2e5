// Remote bodies are read with a cap (issue 11, item 6): a registry, a public URL or a tunnel server that
// streams without end must not be buffered. Each target is a loopback server that sends 100 MiB as fast as
// the client takes it; the client must fail promptly with a clear error, and the server must have managed
// to send no more than the cap plus what the sockets' buffers hold (the deterministic measure of what the
// client could have kept in memory).
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentCard } from '../../src/protocol/index.js';
import { RegistryError, registerWithRegistry } from '../../src/registry/registry-client.js';
import { LocaltunnelProvider } from '../../src/tunnel/localtunnel-provider.js';
import { checkReachable } from '../../src/tunnel/reachability.js';

const FLOOD_BYTES = 100 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'a');
/** The 64 KiB cap, plus the loopback sockets' send and receive buffers (a few MiB on Linux), with room. */
const MOST_SENT = 16 * 1024 * 1024;
/** "Promptly": an uncapped read of 100 MiB on loopback also ends quickly, so the bytes are the real test. */
const PROMPT_MS = 3000;

type Framing = 'chunked' | 'declared length';

interface Flood {
  url: string;
  /** Resolves once the response ended or the client hung up, with the bytes the client's socket took. */
  sent: Promise<number>;
  close(): Promise<void>;
}

/** A server that answers its first request with `status` and a 100 MiB JSON-looking body. */
async function startFlood(framing: Framing, status = 200): Promise<Flood> {
  let report: (bytes: number) => void = () => undefined;
  const sent = new Promise<number>((resolve) => (report = resolve));
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    const headers: Record<string, string | number> = { 'content-type': 'application/json' };
    if (framing === 'declared length') headers['content-length'] = FLOOD_BYTES;
    res.writeHead(status, headers);
    let flushed = 0;
    let closed = false;
    res.on('close', () => {
      closed = true;
      report(flushed);
    });
    void (async () => {
      res.write('{"id":"');
      for (let written = 0; written < FLOOD_BYTES - CHUNK.length && !closed; written += CHUNK.length) {
        // Counted once the chunk left for the socket; waiting for `drain` keeps Node's own buffer small.
        if (!res.write(CHUNK, () => (flushed += CHUNK.length))) await once(res, 'drain').catch(() => {});
      }
      if (!closed) res.end();
    })();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sent,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const floods: Flood[] = [];
afterEach(async () => {
  for (const flood of floods.splice(0)) await flood.close();
});

async function flood(framing: Framing, status?: number): Promise<Flood> {
  const started = await startFlood(framing, status);
  floods.push(started);
  return started;
}

/** Runs `call` against the flood: it must reject promptly, and the server must have sent little. */
async function refused(target: Flood, call: () => Promise<unknown>): Promise<Error> {
  const started = Date.now();
  const error = await call().then(
    () => new Error('the call succeeded'),
    (e: unknown) => e as Error,
  );
  expect(Date.now() - started).toBeLessThan(PROMPT_MS);
  const sent = await target.sent;
  expect(sent, `bytes sent before the client hung up: ${sent}`).toBeLessThan(MOST_SENT);
  return error;
}

const FRAMINGS: Framing[] = ['chunked', 'declared length'];

describe('the registry client', () => {
  it.each(FRAMINGS)('stops reading a 100 MiB reply (%s) at 64 KiB and says why', async (framing) => {
    const registry = await flood(framing);
    const error = await refused(registry, () =>
      registerWithRegistry(registry.url, 'http://127.0.0.1:1', 10_000),
    );
    expect(error).toBeInstanceOf(RegistryError);
    expect(error.message).toBe(
      `The registry at ${registry.url} sent a reply larger than 64 KiB, which is not a registration record (those are a few hundred bytes): reading stopped there.`,
    );
    expect((error as RegistryError).fix).toMatch(
      /registry URL setting: it must point at a SAMVAD registry \(e\.g\./,
    );
    expect((error as RegistryError).httpStatus).toBe(200);
  });

  it('caps an error reply too (HTTP 500 with an endless body)', async () => {
    const registry = await flood('chunked', 500);
    const error = await refused(registry, () =>
      registerWithRegistry(registry.url, 'http://127.0.0.1:1', 10_000),
    );
    expect(error).toBeInstanceOf(RegistryError);
    expect(error.message).toMatch(/sent a reply larger than 64 KiB/);
    expect((error as RegistryError).httpStatus).toBe(500);
  });
});

describe('the reachability check', () => {
  // Only the keys are compared, after the body is read.
  const ours = { publicKeys: [] } as unknown as AgentCard;

  it.each(FRAMINGS)('stops reading a 100 MiB "card" (%s) at 64 KiB and says why', async (framing) => {
    const publicUrl = await flood(framing);
    const error = await refused(publicUrl, () => checkReachable(publicUrl.url, ours, 10_000));
    expect(error.message).toBe(
      `${publicUrl.url}/.well-known/agent.json sent more than 64 KiB, which is not an agent card: reading stopped there. ` +
        'Another server answers at this address: if you set the public URL yourself (--public-url, or Settings → Tunnel), check it, or stop and start the tunnel (Overview → Tunnel)',
    );
  });
});

describe('the localtunnel address request', () => {
  it.each(FRAMINGS)('stops reading a 100 MiB answer (%s) at 64 KiB and says why', async (framing) => {
    const tunnelServer = await flood(framing);
    const provider = new LocaltunnelProvider({ host: tunnelServer.url, stepTimeoutMs: 10_000 });
    const error = await refused(tunnelServer, () =>
      provider.open(1, { signal: new AbortController().signal }),
    );
    expect(error.message).toBe(
      `tunnel server ${tunnelServer.url} sent more than 64 KiB in answer to the address request, which is not a localtunnel reply: reading stopped there; check the tunnel host setting (e.g. https://localtunnel.me)`,
    );
  });
});
