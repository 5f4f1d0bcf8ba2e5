// A closed-loop load generator on node:http with a keep-alive agent: N connections, each sends its next
// request as soon as the previous one has answered, for a fixed time or a fixed number of requests.
import http from 'node:http';
import { lookupWithLocalhost } from '../src/lib/http.js';
import { Samples, summarize, type LatencySummary } from './stats.js';

/** One request as a client would send it; `prepare` builds (and signs) a fresh one per iteration. */
export interface PreparedRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface LoadOptions {
  /** Base URL of the server, e.g. http://127.0.0.1:8787 */
  url: string;
  concurrency: number;
  /** Stop after this long (ms), or after `count` requests; one of the two is required. */
  durationMs?: number;
  count?: number;
  prepare: () => PreparedRequest;
  /** Status a successful answer has; anything else is counted as an error. Default 200. */
  expectStatus?: number;
  /** Reuse connections across runs (warm-up then measurement); default: a fresh agent for this run. */
  agent?: http.Agent;
}

export interface LoadResult extends LatencySummary {
  concurrency: number;
  /** Requests answered with the expected status. */
  ok: number;
  /** Requests not answered with the expected status: another status, or no answer at all. */
  errors: number;
  /** Of the errors, how many of each other status (`none`: no answer, e.g. a reset connection). */
  statuses: Record<string, number>;
  firstError?: string;
  elapsedMs: number;
  /** Successful requests per second over the whole run. */
  rps: number;
  /** Mean client time spent building and signing one request (not part of the latency). */
  prepareUs: number;
}

export function keepAliveAgent(concurrency: number): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (options.durationMs === undefined && options.count === undefined) {
    throw new Error('runLoad needs durationMs or count');
  }
  const target = new URL(options.url);
  const agent = options.agent ?? keepAliveAgent(options.concurrency);
  const expect = options.expectStatus ?? 200;
  const latencies = new Samples();
  let issued = 0;
  let errors = 0;
  const statuses: Record<string, number> = {};
  let firstError: string | undefined;
  let prepareMs = 0;
  const started = performance.now();
  const deadline = options.durationMs === undefined ? Infinity : started + options.durationMs;
  const limit = options.count ?? Infinity;

  const worker = async () => {
    while (issued < limit && performance.now() < deadline) {
      issued++;
      const before = performance.now();
      const request = options.prepare();
      const sent = performance.now();
      prepareMs += sent - before;
      try {
        const status = await send(agent, target, request);
        if (status !== expect) {
          errors++;
          statuses[status] = (statuses[status] ?? 0) + 1;
          firstError ??= `HTTP ${status} from ${request.path}`;
          continue;
        }
        latencies.push(performance.now() - sent);
      } catch (error) {
        errors++;
        statuses.none = (statuses.none ?? 0) + 1;
        firstError ??= (error as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const elapsedMs = performance.now() - started;
  if (!options.agent) agent.destroy();
  return {
    concurrency: options.concurrency,
    ...summarize(latencies.values()),
    ok: latencies.length,
    errors,
    statuses,
    firstError,
    elapsedMs,
    rps: (latencies.length / elapsedMs) * 1000,
    prepareUs: issued ? (prepareMs / issued) * 1000 : 0,
  };
}

/** Sends one request and resolves with its status once the whole answer has been read. */
export function send(agent: http.Agent, target: URL, request: PreparedRequest): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: request.path,
        method: 'POST',
        agent,
        headers: { ...request.headers, 'content-length': Buffer.byteLength(request.body) },
        ...resolution(target.hostname),
      },
      (res) => {
        res.on('error', reject);
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.resume();
      },
    );
    req.on('error', reject);
    req.end(request.body);
  });
}

/** One request whose answer body is kept, for the checks made before a measurement. */
export function sendAndRead(
  target: string,
  request: PreparedRequest,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  const url = new URL(request.path, target);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { ...request.headers, 'content-length': Buffer.byteLength(request.body) },
        ...resolution(url.hostname),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on('error', reject);
    req.end(request.body);
  });
}

const LOOPBACK_NAME = { lookup: lookupWithLocalhost };

/**
 * A tunnel's public URL in the bench is `http://<id>.localhost:PORT`, which this machine's resolver does
 * not resolve: connect to loopback as the app's own client does (the Host header keeps the name, which is
 * what the tunnel server routes by). IP addresses need no lookup.
 */
function resolution(hostname: string): { lookup?: typeof lookupWithLocalhost } {
  return hostname.endsWith('.localhost') || hostname === 'localhost' ? LOOPBACK_NAME : {};
}
