// Throughput and latency measurements over HTTP: each warms up, then runs the closed loop for real.
import { signRequest } from '../src/protocol/index.js';
import { PATHS, envelope } from '../test/helpers/envelopes.js';
import type { ServerChild } from './child-host.js';
import { keepAliveAgent, runLoad, type LoadResult, type PreparedRequest } from './load.js';
import { a2aMessage, directGatewayChat, signedChat, type Caller } from './requests.js';
import type { BenchEnv } from './setup.js';
import { median, type LatencySummary } from './stats.js';
import type { CoreSpeeds } from './core-speed.js';

export interface PhaseOptions {
  concurrency: number;
  warmupMs: number;
  durationMs: number;
}

/** What the server process spent during the measured run (not the warm-up). */
export interface ServerStats {
  /** CPU time of the server process per successful call, user + system, µs. */
  cpuUsPerCall: number;
  systemShare: number;
  /** Main-thread garbage collection pauses per successful call, µs (part of cpuUsPerCall). */
  gcUsPerCall: number;
  /** Agent only: time inside handleEnvelope per call (its envelope log's durationMs). */
  handled?: LatencySummary;
}

export interface Measured extends LoadResult {
  server: ServerStats;
  /** CPU time of this process (the load generator: building, signing, sending, reading) per call, µs. */
  clientCpuUsPerCall: number;
  /** Through a relay (the tunnel server): CPU time of the relay process per call, µs. */
  relayCpuUsPerCall?: number;
}

/** Where the requests go when not straight to the server's own URL. */
export interface Route {
  /** Send here instead of `server.url` (e.g. the agent's public URL through the tunnel). */
  url?: string;
  /** A process between client and server whose CPU time per call is measured too. */
  relay?: ServerChild;
}

/** Warm-up then measurement on the same keep-alive connections, with the server's CPU time per call. */
export async function measure(
  server: ServerChild,
  prepare: () => PreparedRequest,
  options: PhaseOptions,
  route: Route = {},
): Promise<Measured> {
  const agent = keepAliveAgent(options.concurrency);
  const { relay } = route;
  try {
    const common = { url: route.url ?? server.url, prepare, agent, concurrency: options.concurrency };
    await runLoad({ ...common, durationMs: options.warmupMs });
    await Promise.all([server.sample(), relay?.sample()]);
    const clientMark = process.cpuUsage();
    const result = await runLoad({ ...common, durationMs: options.durationMs });
    const client = process.cpuUsage(clientMark);
    const [sample, relaySample] = await Promise.all([server.sample(), relay?.sample()]);
    const cpuUs = sample.userUs + sample.systemUs;
    const measured: Measured = {
      ...result,
      server: {
        cpuUsPerCall: result.ok ? cpuUs / result.ok : NaN,
        systemShare: cpuUs ? sample.systemUs / cpuUs : 0,
        gcUsPerCall: result.ok ? sample.gcUs / result.ok : NaN,
        handled: sample.handled,
      },
      clientCpuUsPerCall: result.ok ? (client.user + client.system) / result.ok : NaN,
    };
    if (relaySample) {
      measured.relayCpuUsPerCall = result.ok ? (relaySample.userUs + relaySample.systemUs) / result.ok : NaN;
    }
    return measured;
  } finally {
    agent.destroy();
  }
}

/** 1. Signed `chat` sync calls to the agent, each signed inside the loop with a fresh nonce. */
export function measureSignedChat(env: BenchEnv, options: PhaseOptions): Promise<Measured> {
  return measure(env.agent, signedChat(env.caller, env.agent.id), options);
}

/** 1a. A2A blocking `SendMessage` (JSON-RPC) to the same agent, with the A2A key its caller was issued. */
export function measureA2ASend(env: BenchEnv, options: PhaseOptions): Promise<Measured> {
  return measure(env.agent, a2aMessage(env.agent.a2aKey), options);
}

export interface PairedOptions {
  /** A B B A blocks: each gives two signed runs and two A2A runs. */
  blocks: number;
  warmupMs: number;
  runMs: number;
}

export interface PairedCpu {
  concurrency: number;
  /** Agent CPU per call of each run, µs, in run order. */
  signedRuns: number[];
  a2aRuns: number[];
  /** The median of each side's runs, µs (a run that met a GC of another process, say, moves it little). */
  signedUs: number;
  a2aUs: number;
  /** The same for the main thread's garbage collection pauses per call, µs. */
  signedGcUs: number;
  a2aGcUs: number;
}

/**
 * 1a. Agent CPU per call, A2A blocking send against signed chat, in alternating runs (signed, A2A, A2A,
 * signed in each block), so that a drift of the machine (a neighbour, a GC of another process) weighs on
 * both sides alike: one run of each, minutes apart, differs by more than the two do.
 */
export async function measurePairedCpu(
  env: BenchEnv,
  concurrency: number,
  options: PairedOptions,
): Promise<PairedCpu> {
  const phase = { concurrency, warmupMs: options.warmupMs, durationMs: options.runMs };
  const sides = {
    signed: { runs: [] as number[], gc: [] as number[], run: () => measureSignedChat(env, phase) },
    a2a: { runs: [] as number[], gc: [] as number[], run: () => measureA2ASend(env, phase) },
  };
  for (let block = 0; block < options.blocks; block++) {
    for (const side of [sides.signed, sides.a2a, sides.a2a, sides.signed]) {
      const { server } = await side.run();
      side.runs.push(server.cpuUsPerCall);
      side.gc.push(server.gcUsPerCall);
    }
  }
  return {
    concurrency,
    signedRuns: sides.signed.runs,
    a2aRuns: sides.a2a.runs,
    signedUs: median(sides.signed.runs),
    a2aUs: median(sides.a2a.runs),
    signedGcUs: median(sides.signed.gc),
    a2aGcUs: median(sides.a2a.gc),
  };
}

/** 2. The same requests (built and signed the same way) to a plain node:http JSON echo server: the ceiling. */
export function measureEcho(env: BenchEnv, options: PhaseOptions): Promise<Measured> {
  return measure(env.echo, signedChat(env.caller, env.agent.id), options);
}

/** The A2A anchor: the same blocking sends to the minimal SDK server (bench/sdk-a2a-server.ts). */
export function measureSdkA2ASend(env: BenchEnv, options: PhaseOptions): Promise<Measured> {
  return measure(env.sdkA2A, a2aMessage(env.agent.a2aKey), options);
}

/** One side of an anchored comparison: each run's figures, in run order, and their medians. */
export interface AnchorSide {
  rps: number[];
  /** Server CPU per successful call of each run, µs. */
  cpuUs: number[];
  medianRps: number;
  medianCpuUs: number;
  /** Answers other than 200 (or no answer) over all runs. */
  errors: number;
}

export interface Anchored {
  concurrency: number;
  ours: AnchorSide;
  anchor: AnchorSide;
  /** Ours / the anchor, median req/s: the row's figure. */
  ratio: number;
  /** Ours / the anchor, median CPU per call. */
  cpuRatio: number;
  /** Each core's speed probed before each block and after the last (see core-speed.ts), when pinned. */
  cores?: CoreSpeeds[];
}

/**
 * Ours against its anchor, in alternating runs (ours, anchor, anchor, ours in each block) on the same CPU,
 * so that a drift of the machine weighs on both sides alike; each side is the median of its runs.
 */
export async function measureAgainstAnchor(
  concurrency: number,
  sides: {
    ours: (phase: PhaseOptions) => Promise<Measured>;
    anchor: (phase: PhaseOptions) => Promise<Measured>;
  },
  options: PairedOptions,
  probe?: () => CoreSpeeds,
): Promise<Anchored> {
  const phase = { concurrency, warmupMs: options.warmupMs, durationMs: options.runMs };
  const runs = { ours: [] as Measured[], anchor: [] as Measured[] };
  const cores: CoreSpeeds[] = [];
  for (let block = 0; block < options.blocks; block++) {
    if (probe) cores.push(probe());
    for (const side of ['ours', 'anchor', 'anchor', 'ours'] as const)
      runs[side].push(await sides[side](phase));
  }
  if (probe) cores.push(probe());
  const summary = (measured: Measured[]): AnchorSide => {
    const rps = measured.map((m) => m.rps);
    const cpuUs = measured.map((m) => m.server.cpuUsPerCall);
    const errors = measured.reduce((sum, m) => sum + m.errors, 0);
    return { rps, cpuUs, medianRps: median(rps), medianCpuUs: median(cpuUs), errors };
  };
  const ours = summary(runs.ours);
  const anchor = summary(runs.anchor);
  return {
    concurrency,
    ours,
    anchor,
    ratio: ours.medianRps / anchor.medianRps,
    cpuRatio: ours.medianCpuUs / anchor.medianCpuUs,
    ...(probe ? { cores } : {}),
  };
}

/** 3. The bridge's own gateway call, sent straight to the gateway with the same HTTP client. */
export function measureDirectGateway(env: BenchEnv, options: PhaseOptions): Promise<Measured> {
  return measure(env.gateway.child, directGatewayChat(env.gateway.token), options);
}

export interface SigningCost {
  /** Building the envelope, serialising it and signing it (what the loop does per request), µs. */
  requestUs: number;
  /** Of which Content-Digest + Ed25519 signature, µs. */
  signUs: number;
}

/** The client-side cost of one signed request, measured on its own (after a warm-up). */
export function measureSigningCost(caller: Caller, to: string, iterations = 5000): SigningCost {
  const prepare = signedChat(caller, to);
  const body = JSON.stringify(envelope(caller.id, to, 'sync', { message: 'hi' }));
  const time = (work: () => unknown) => {
    for (let i = 0; i < Math.min(500, iterations); i++) work();
    const started = performance.now();
    for (let i = 0; i < iterations; i++) work();
    return ((performance.now() - started) / iterations) * 1000;
  };
  return {
    requestUs: time(prepare),
    signUs: time(() => signRequest(caller.signer, { method: 'POST', path: PATHS.sync, body })),
  };
}
