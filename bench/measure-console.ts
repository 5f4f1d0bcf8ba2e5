// 7a. What an open operator console costs the agent: signed sync `chat` calls (built and signed in the
// loop, as in 1) to an agent process that runs its console (src/console, as `serve` does), measured with
// no console client and with N clients reading GET /api/events, in alternating runs (A B B A per block,
// so that a drift of the machine over time weighs on both sides alike). The clients are this process:
// each reads its stream, counts the `event: envelope` blocks and drops the rest, so that the figures show
// that every envelope really went out to every client.
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerChild } from './child-host.js';
import type { ConsoleRef } from './child-protocol.js';
import { keepAliveAgent, runLoad, type LoadResult } from './load.js';
import { signedChat } from './requests.js';
import { checkSignedChat, startAgentChild, type BenchEnv } from './setup.js';
import { median } from './stats.js';

export interface ConsoleLoadOptions {
  /** Concurrency levels, each measured in its own series of alternating runs. */
  concurrency: number[];
  /** Console clients reading /api/events during the runs "with". */
  clients: number;
  /**
   * The fresh agent process is warmed up at the highest concurrency for this long with the clients
   * connected (its streaming path takes seconds to reach its pace), then half as long without; each
   * concurrency then warms its own connections for a quarter of it.
   */
  warmupMs: number;
  /** Each run. */
  runMs: number;
  /** A B B A blocks per concurrency: each gives two runs without clients and two with. */
  blocks: number;
}

/** One side (without or with console clients) of one concurrency, pooled over its runs. */
export interface ConsoleArm {
  concurrency: number;
  /** Successful requests over the summed run time. */
  rps: number;
  /** Each run's req/s, in the order they ran. */
  runRps: number[];
  /** Medians of the runs' p50 and p99. */
  p50: number;
  p99: number;
  ok: number;
  errors: number;
  firstError?: string;
  /** CPU time of the agent process (agent and console) per successful call, µs. */
  serverCpuUsPerCall: number;
  /** CPU time of this process (load generator, and the console clients on the "with" side) per call, µs. */
  clientCpuUsPerCall: number;
}

/** What the console clients received during the runs with clients. */
export interface Delivery {
  /** Requests sent during those runs (each is an envelope the agent handled). */
  requests: number;
  /** `event: envelope` blocks received, summed over the clients. */
  events: number;
  /** The lowest share of the requests any one client received as events. */
  minShare: number;
  /** Streams that ended before the run was over (the console cuts off a client that reads too slowly). */
  endedEarly: number;
}

export interface ConsolePoint {
  concurrency: number;
  without: ConsoleArm;
  with: ConsoleArm;
  delivery: Delivery;
}

export interface ConsoleLoadResult {
  clients: number;
  runMs: number;
  blocks: number;
  points: ConsolePoint[];
}

export interface ConsoleLoadFailure {
  error: string;
}

/** After a run, how long the clients may take to receive its last events. */
const DRAIN_TIMEOUT_MS = 2000;
/** How long a client may take to connect and receive the stream's `hello`. */
const CONNECT_TIMEOUT_MS = 5000;

export async function measureConsoleLoad(
  env: BenchEnv,
  options: ConsoleLoadOptions,
  progress: (step: string) => void = () => {},
): Promise<ConsoleLoadResult> {
  const agent = await startAgentChild(env.gateway, {
    cpu: env.pin?.server,
    console: true,
    approved: [env.peer.id],
  });
  try {
    const ref = agent.console;
    if (!ref) throw new Error('the agent child did not report its console');
    await checkSignedChat(agent.url, env.caller, agent.id);
    // The stream must really deliver an envelope before its cost means anything.
    const probe = await EventReader.open(ref);
    try {
      await checkSignedChat(agent.url, env.caller, agent.id);
      await until(() => probe.envelopes >= 1, DRAIN_TIMEOUT_MS);
      if (probe.envelopes < 1) throw new Error(`${ref.url}/api/events delivered no envelope event`);
    } finally {
      probe.close();
    }
    progress('7. console: warming up the agent with its console');
    const prepare = signedChat(env.caller, agent.id);
    const warm = { url: agent.url, prepare, concurrency: Math.max(...options.concurrency) };
    const readers = await Promise.all(Array.from({ length: options.clients }, () => EventReader.open(ref)));
    try {
      await runLoad({ ...warm, durationMs: options.warmupMs });
    } finally {
      for (const reader of readers) reader.close();
    }
    await runLoad({ ...warm, durationMs: options.warmupMs / 2 });
    const points: ConsolePoint[] = [];
    for (const concurrency of options.concurrency) {
      progress(
        `7. console: c=${concurrency}, ${options.blocks * 4} alternating runs without / with ` +
          `${options.clients} console clients`,
      );
      points.push(await measurePoint(agent, ref, prepare, concurrency, options));
    }
    return { clients: options.clients, runMs: options.runMs, blocks: options.blocks, points };
  } finally {
    await agent.stop();
  }
}

interface Run {
  result: LoadResult;
  serverCpuUs: number;
  clientCpuUs: number;
}

async function measurePoint(
  agent: ServerChild,
  ref: ConsoleRef,
  prepare: ReturnType<typeof signedChat>,
  concurrency: number,
  options: ConsoleLoadOptions,
): Promise<ConsolePoint> {
  const connections = keepAliveAgent(concurrency);
  const common = { url: agent.url, prepare, agent: connections, concurrency };
  const runs: Record<'without' | 'with', Run[]> = { without: [], with: [] };
  const delivery: Delivery = { requests: 0, events: 0, minShare: Infinity, endedEarly: 0 };
  try {
    await runLoad({ ...common, durationMs: options.warmupMs / 4 });
    for (let block = 0; block < options.blocks; block++) {
      for (const side of ['without', 'with', 'with', 'without'] as const) {
        const readers =
          side === 'with'
            ? await Promise.all(Array.from({ length: options.clients }, () => EventReader.open(ref)))
            : [];
        try {
          await agent.sample();
          const clientMark = process.cpuUsage();
          const result = await runLoad({ ...common, durationMs: options.runMs });
          const client = process.cpuUsage(clientMark);
          const server = await agent.sample();
          runs[side].push({
            result,
            serverCpuUs: server.userUs + server.systemUs,
            clientCpuUs: client.user + client.system,
          });
          if (side === 'with') {
            const sent = result.ok + result.errors;
            await until(() => readers.every((r) => r.ended || r.envelopes >= sent), DRAIN_TIMEOUT_MS);
            delivery.requests += sent;
            for (const reader of readers) {
              delivery.events += reader.envelopes;
              delivery.minShare = Math.min(delivery.minShare, sent ? reader.envelopes / sent : 1);
              if (reader.ended) delivery.endedEarly++;
            }
          }
        } finally {
          for (const reader of readers) reader.close();
        }
      }
    }
  } finally {
    connections.destroy();
  }
  return {
    concurrency,
    without: pool(concurrency, runs.without),
    with: pool(concurrency, runs.with),
    delivery,
  };
}

function pool(concurrency: number, runs: Run[]): ConsoleArm {
  const sum = (pick: (run: Run) => number) => runs.reduce((total, run) => total + pick(run), 0);
  const ok = sum((run) => run.result.ok);
  const elapsedMs = sum((run) => run.result.elapsedMs);
  return {
    concurrency,
    rps: elapsedMs ? (ok / elapsedMs) * 1000 : 0,
    runRps: runs.map((run) => run.result.rps),
    p50: median(runs.map((run) => run.result.p50)),
    p99: median(runs.map((run) => run.result.p99)),
    ok,
    errors: sum((run) => run.result.errors),
    firstError: runs.find((run) => run.result.firstError)?.result.firstError,
    serverCpuUsPerCall: ok ? sum((run) => run.serverCpuUs) / ok : NaN,
    clientCpuUsPerCall: ok ? sum((run) => run.clientCpuUs) / ok : NaN,
  };
}

async function until(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done() && performance.now() < deadline) await sleep(5);
}

/** The start of every envelope event: events are separated by a blank line, and JSON data holds no newline. */
const ENVELOPE = '\nevent: envelope\n';
const HELLO = 'event: hello\n';

/**
 * A console client as cheap as can be: GET /api/events with the token, counting envelope events in the raw
 * bytes (a match may straddle two chunks) and dropping everything else.
 */
class EventReader {
  envelopes = 0;
  /** The stream ended or failed while we still read it. */
  ended = false;
  private tail = '';
  private closing = false;

  private constructor(private readonly request: http.ClientRequest) {}

  static open(ref: ConsoleRef): Promise<EventReader> {
    return new Promise((resolve, reject) => {
      const request = http.get(`${ref.url}/api/events`, {
        agent: false,
        headers: { authorization: `Bearer ${ref.token}`, accept: 'text/event-stream' },
      });
      const reader = new EventReader(request);
      let hello = false;
      const timer = setTimeout(() => {
        request.destroy();
        reject(new Error(`${ref.url}/api/events sent no hello within ${CONNECT_TIMEOUT_MS / 1000} s`));
      }, CONNECT_TIMEOUT_MS);
      const fail = (error: Error) => {
        clearTimeout(timer);
        reject(error);
      };
      request.on('error', (error) => {
        if (!hello) fail(error);
        else reader.ended ||= !reader.closing;
      });
      request.on('response', (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          fail(new Error(`GET ${ref.url}/api/events answered HTTP ${response.statusCode}`));
          return;
        }
        response.on('data', (chunk: Buffer) => {
          const text = reader.tail + chunk.toString('latin1');
          if (!hello && text.includes(HELLO)) {
            hello = true;
            clearTimeout(timer);
            resolve(reader);
          }
          for (let at = text.indexOf(ENVELOPE); at >= 0; at = text.indexOf(ENVELOPE, at + ENVELOPE.length)) {
            reader.envelopes++;
          }
          reader.tail = text.slice(-(ENVELOPE.length - 1));
        });
        response.on('error', () => undefined);
        response.on('close', () => {
          if (!hello) fail(new Error(`${ref.url}/api/events closed before its hello`));
          reader.ended ||= !reader.closing;
        });
      });
    });
  }

  close(): void {
    this.closing = true;
    this.request.destroy();
  }
}
