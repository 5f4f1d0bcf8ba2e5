// The whole bench in order: setup, each measurement after its warm-up, teardown. run.ts prints it.
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildMemory } from './child-protocol.js';
import {
  measureA2ASend,
  measureAgainstAnchor,
  measureDirectGateway,
  measureEcho,
  measureSdkA2ASend,
  measureSignedChat,
  measurePairedCpu,
  measureSigningCost,
  type Anchored,
  type Measured,
  type PairedCpu,
  type PairedOptions,
  type PhaseOptions,
  type SigningCost,
} from './measure.js';
import {
  measureConsoleLoad,
  type ConsoleLoadFailure,
  type ConsoleLoadOptions,
  type ConsoleLoadResult,
} from './measure-console.js';
import { measureMcp, type McpFailure, type McpOptions, type McpResult } from './measure-mcp.js';
import {
  measureA2AMemory,
  measureMemory,
  type A2AMemoryResult,
  type MemoryOptions,
  type MemoryResult,
} from './measure-memory.js';
import { measureWithRedis, type RedisFailure, type RedisResult } from './measure-redis.js';
import { measureA2AStream, measureStream, type StreamOptions, type StreamResult } from './measure-stream.js';
import {
  measureTunnel,
  type TunnelFailure,
  type TunnelOptions,
  type TunnelResult,
} from './measure-tunnel.js';
import { measureUi, type UiOptions, type UiOutcome } from './measure-ui.js';
import { spawnServer } from './child-host.js';
import { pinPlan, type PinPlan } from './pinning.js';
import { probeCores, type CoreSpeeds } from './core-speed.js';
import { checkA2ASend, setupBench } from './setup.js';

export interface BenchConfig {
  name: 'full' | 'quick';
  warmupMs: number;
  durationMs: number;
  stream: StreamOptions;
  memory: MemoryOptions;
  tunnel: TunnelOptions;
  /** 7: the agent with its operator console, without and with console clients; the UI in Chromium. */
  console: ConsoleLoadOptions;
  ui: UiOptions;
  /** 8: samvad_call through the MCP server against the same call made directly with the client. */
  mcp: McpOptions;
  /** 1a: agent CPU per call, A2A against signed chat, in alternating runs at each concurrency. */
  paired: PairedOptions & { concurrency: number[] };
  /**
   * Ours against the anchors in alternating runs, at each of `paired.concurrency`: A2A sends against the
   * minimal A2A SDK server (1a), signed chat against the plain echo (2).
   */
  anchors: PairedOptions;
  /** 5a: A2A blocking sends to a fresh agent process, its memory every `every` calls. */
  a2aMemory: { requests: number; every: number; concurrency: number; warmupRequests: number };
  /** Write a CPU profile of the agent process (the throughput runs) into this directory. */
  cpuProfileDir?: string;
  /** Pin the server under test to one CPU and the client and gateway to another, where possible. */
  pin: boolean;
}

export const FULL: BenchConfig = {
  name: 'full',
  warmupMs: 1500,
  durationMs: 5000,
  stream: { streams: 8, deltas: 50, intervalMs: 2, warmupStreams: 2 },
  memory: { requests: 100_000, concurrency: 32, warmupRequests: 3000 },
  tunnel: { concurrency: [1, 8], warmupMs: 1000, durationMs: 3000, restarts: 3, downMs: 1000 },
  console: { concurrency: [32, 1], clients: 2, warmupMs: 3000, runMs: 800, blocks: 3 },
  ui: { entries: 10_000, scrollMs: 2000, filterRuns: 3, filterText: 'nonce' },
  mcp: { warmupCalls: 500, callsPerRun: 250, blocks: 4 },
  paired: { concurrency: [32, 1], blocks: 3, warmupMs: 500, runMs: 1500 },
  anchors: { blocks: 3, warmupMs: 500, runMs: 1500 },
  a2aMemory: { requests: 100_000, every: 10_000, concurrency: 32, warmupRequests: 3000 },
  pin: true,
};

export const QUICK: BenchConfig = {
  name: 'quick',
  warmupMs: 300,
  durationMs: 1000,
  stream: { streams: 3, deltas: 40, intervalMs: 2, warmupStreams: 1 },
  memory: { requests: 5000, concurrency: 32, warmupRequests: 500 },
  tunnel: { concurrency: [1, 8], warmupMs: 200, durationMs: 700, restarts: 1, downMs: 1000 },
  console: { concurrency: [32, 1], clients: 2, warmupMs: 800, runMs: 400, blocks: 1 },
  ui: { entries: 10_000, scrollMs: 1000, filterRuns: 1, filterText: 'nonce' },
  mcp: { warmupCalls: 100, callsPerRun: 100, blocks: 1 },
  paired: { concurrency: [32, 1], blocks: 1, warmupMs: 200, runMs: 400 },
  anchors: { blocks: 1, warmupMs: 200, runMs: 400 },
  a2aMemory: { requests: 5000, every: 1000, concurrency: 32, warmupRequests: 500 },
  pin: true,
};

export interface BenchResults {
  config: BenchConfig;
  machine: {
    node: string;
    cpus: number;
    cpuModel: string;
    pinned: PinPlan | undefined;
    /** Share of all CPUs other processes used in the second before the bench started. */
    busyBefore: number;
    /** Each pinned core's speed before any load (core-speed.ts); the anchored rows are read against it. */
    coresAtStart?: CoreSpeeds;
  };
  /** The process measured in 1-4 (its CPU profile's file name carries this pid). */
  agentPid: number;
  /** Right after start, after a GC: what the runtime (node + tsx) and the code cost before any load. */
  idle: { agent: ChildMemory; echo: ChildMemory; runtime: ChildMemory };
  signing: SigningCost;
  signed: { c1: Measured; c32: Measured; c64: Measured };
  /**
   * 1a. A2A blocking sends (JSON-RPC, an issued key) to the same agent; then signed chat c=32 again, so
   * the run shows whether A2A traffic left SAMVAD's throughput where it was.
   */
  a2a: {
    c1: Measured;
    c32: Measured;
    stream: StreamResult;
    /** Signed chat at c=32 just before the A2A runs and just after them: three runs each. */
    signedBefore: Measured[];
    signedAfter: Measured[];
    paired: PairedCpu[];
    /** Against the minimal A2A SDK server, alternating runs, at c=32 then c=1. */
    anchored: Anchored[];
  };
  echo: { c1: Measured; c32: Measured };
  /** 2. Signed chat against the plain echo, alternating runs, at c=32 then c=1. */
  echoAnchored: Anchored[];
  /** 1r: the signed path with shared state on a redis-server on loopback; or why it was not measured. */
  redis: RedisResult | RedisFailure;
  direct: Measured;
  stream: StreamResult;
  memory: MemoryResult;
  /** 5a: A2A sends to a fresh agent process: memory along the run. */
  a2aMemory: A2AMemoryResult;
  /** 6: its own agent process behind the loopback tunnel server; or why it could not be measured. */
  tunnel: TunnelResult | TunnelFailure;
  /** 7a: an agent process running its console: throughput without and with console clients streaming. */
  console: ConsoleLoadResult | ConsoleLoadFailure;
  /** 7b: the console UI's Traffic page with 10,000 entries in Chromium; or why it was not measured. */
  ui: UiOutcome;
  /** 8: what the MCP tool adds to an outbound call (in this process, unpinned); or why it failed. */
  mcp: McpResult | McpFailure;
}

export async function runSuite(
  config: BenchConfig,
  progress: (step: string) => void = () => {},
): Promise<BenchResults> {
  const busyBefore = await machineBusy(1000);
  progress('starting the gateway, the peer agent, the agent and the echo server');
  const pin = config.pin ? pinPlan() : undefined;
  const env = await setupBench({ cpuProfileDir: config.cpuProfileDir, pin });
  let results: Omit<BenchResults, 'ui' | 'mcp'>;
  try {
    const phase = (concurrency: number): PhaseOptions => ({
      concurrency,
      warmupMs: config.warmupMs,
      durationMs: config.durationMs,
    });
    const idle = { agent: await env.agent.gc(), echo: await env.echo.gc(), runtime: await runtimeMemory() };
    // Each core's speed before any load: the anchored rows say how fast each was while they ran.
    const coresAtStart = pin && probeCores(pin);
    const probe = pin && (() => probeCores(pin));
    progress('client signing cost');
    const signing = measureSigningCost(env.caller, env.agent.id);
    // A cold agent (JIT, caches, first card fetch) would make the first point, c=1, look slower than it is.
    progress('warming up the agent');
    await measureSignedChat(env, { concurrency: 32, warmupMs: config.warmupMs * 2, durationMs: 500 });
    progress('1. signed chat, concurrency 1');
    const signedC1 = await measureSignedChat(env, phase(1));
    // Right after the c=1 run, so both sides of the added latency see the same machine state.
    progress('3. gateway called directly, concurrency 1');
    const direct = await measureDirectGateway(env, phase(1));
    progress('1. signed chat, concurrency 32');
    const signedC32 = await measureSignedChat(env, phase(32));
    // Twice the c=32 crowd: whole bodies then wait for a read/verify slot (intake.ts) rather than a 503.
    progress('1. signed chat, concurrency 64');
    const signedC64 = await measureSignedChat(env, phase(64));
    // Three runs each side, right before and right after the A2A runs: one run minutes from another moves
    // by 10-15 % on a shared machine, as much as what the row is there to catch.
    const signedRuns = async (side: string) => {
      const runs: Measured[] = [];
      for (let i = 1; i <= 3; i++) {
        progress(`1a. signed chat ${side} the A2A runs, concurrency 32 (${i}/3)`);
        runs.push(await measureSignedChat(env, phase(32)));
      }
      return runs;
    };
    const signedBefore = await signedRuns('before');
    progress('1a. A2A blocking send, concurrency 1');
    const a2aC1 = await measureA2ASend(env, phase(1));
    progress('1a. A2A blocking send, concurrency 32');
    const a2aC32 = await measureA2ASend(env, phase(32));
    progress('1a. A2A streaming send');
    const a2aStream = await measureA2AStream(env, config.stream);
    // JSON-RPC answers 200 to a refusal too: one checked call shows the runs were sends, not refusals.
    await checkA2ASend(env.agent.url, env.agent.a2aKey);
    const paired: PairedCpu[] = [];
    for (const concurrency of config.paired.concurrency) {
      progress(`1a. agent CPU per call, signed and A2A in alternating runs, concurrency ${concurrency}`);
      paired.push(await measurePairedCpu(env, concurrency, config.paired));
    }
    const signedAfter = await signedRuns('after');
    // After the signed runs that show what A2A traffic left behind: the anchors are other processes, and
    // their runs (with more of ours between them) would blur that row.
    // Both anchors warm up as the agent did (JIT), so that the first alternating run is not a cold one.
    progress('warming up the anchors: the minimal A2A SDK server and the echo server');
    await measureSdkA2ASend(env, { concurrency: 32, warmupMs: config.warmupMs * 2, durationMs: 500 });
    await measureEcho(env, { concurrency: 32, warmupMs: config.warmupMs, durationMs: 500 });
    const anchored: Anchored[] = [];
    const echoAnchored: Anchored[] = [];
    for (const concurrency of config.paired.concurrency) {
      progress(
        `1a. A2A send against the minimal A2A SDK server, alternating runs, concurrency ${concurrency}`,
      );
      const a2aSides = {
        ours: (p: PhaseOptions) => measureA2ASend(env, p),
        anchor: (p: PhaseOptions) => measureSdkA2ASend(env, p),
      };
      anchored.push(await measureAgainstAnchor(concurrency, a2aSides, config.anchors, probe));
      progress(`2. signed chat against the plain echo, alternating runs, concurrency ${concurrency}`);
      const echoSides = {
        ours: (p: PhaseOptions) => measureSignedChat(env, p),
        anchor: (p: PhaseOptions) => measureEcho(env, p),
      };
      echoAnchored.push(await measureAgainstAnchor(concurrency, echoSides, config.anchors, probe));
    }
    progress('2. plain echo, concurrency 1');
    const echoC1 = await measureEcho(env, phase(1));
    progress('2. plain echo, concurrency 32');
    const echoC32 = await measureEcho(env, phase(32));
    progress('1r. signed chat with shared state on Redis, concurrency 32');
    const redis = await measureWithRedis(env, phase(32), config.cpuProfileDir);
    progress('4. stream deltas');
    const stream = await measureStream(env, config.stream);
    progress(
      `5. memory: ${config.memory.requests.toLocaleString('en')} signed calls to a fresh agent process`,
    );
    const memory = await measureMemory(env, config.memory);
    progress(
      `5a. memory: ${config.a2aMemory.requests.toLocaleString('en')} A2A sends to a fresh agent process`,
    );
    const a2aMemory = await measureA2AMemory(env, config.a2aMemory, progress);
    // With an agent process of its own: a tunnel that cannot open is reported, not fatal to 1-5.
    const tunnel = await measureTunnel(env, config.tunnel, progress).catch(
      (error: unknown): TunnelFailure => ({ error: (error as Error).message }),
    );
    const consoleLoad = await measureConsoleLoad(env, config.console, progress).catch(
      (error: unknown): ConsoleLoadFailure => ({ error: (error as Error).message }),
    );
    results = {
      config,
      machine: {
        node: process.version,
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
        pinned: pin,
        busyBefore,
        ...(coresAtStart ? { coresAtStart } : {}),
      },
      agentPid: env.agent.pid,
      idle,
      signing,
      signed: { c1: signedC1, c32: signedC32, c64: signedC64 },
      a2a: { c1: a2aC1, c32: a2aC32, stream: a2aStream, signedBefore, signedAfter, paired, anchored },
      echo: { c1: echoC1, c32: echoC32 },
      echoAnchored,
      redis,
      direct,
      stream,
      memory,
      a2aMemory,
      tunnel,
      console: consoleLoad,
    };
  } finally {
    await env.close();
  }
  // After the servers are gone and this process is unpinned: the browser gets both CPUs, as on a desktop.
  const ui = await measureUi(config.ui, progress).catch((error: unknown): UiOutcome => ({
    error: (error as Error).message,
  }));
  const mcp = await measureMcp(config.mcp, progress).catch((error: unknown): McpFailure => ({
    error: (error as Error).message,
  }));
  return { ...results, ui, mcp };
}

/** A child that loads nothing but node and tsx: the floor under every server's memory. */
async function runtimeMemory(): Promise<ChildMemory> {
  const child = await spawnServer({ role: 'idle' });
  try {
    return await child.gc();
  } finally {
    await child.stop();
  }
}

/** How busy the machine is before we add any load: other work on it skews every figure. */
async function machineBusy(ms: number): Promise<number> {
  const total = () =>
    cpus().reduce(
      (sum, cpu) => {
        const { idle, user, nice, sys, irq } = cpu.times;
        return { idle: sum.idle + idle, all: sum.all + idle + user + nice + sys + irq };
      },
      { idle: 0, all: 0 },
    );
  const before = total();
  await sleep(ms);
  const after = total();
  const all = after.all - before.all;
  return all > 0 ? 1 - (after.idle - before.idle) / all : 0;
}
