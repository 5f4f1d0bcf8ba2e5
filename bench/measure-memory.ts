// 5. Memory: many signed sync calls to a fresh agent process, its resident memory before and after
// (after a full GC), and its nonce store before and after a sweep past the acceptance window.
import { MAX_AGE_MS, MAX_FUTURE_MS } from '../src/agent/pipeline.js';
import type { ChildMemory } from './child-protocol.js';
import { keepAliveAgent, runLoad, type LoadResult } from './load.js';
import { a2aMessage, signedChat } from './requests.js';
import { startAgentChild, type BenchEnv } from './setup.js';

export interface MemoryOptions {
  requests: number;
  concurrency: number;
  warmupRequests: number;
}

export interface MemoryResult {
  load: LoadResult;
  /** After the warm-up, after a GC. */
  baseline: ChildMemory;
  /** After the run, after a GC; `peakRss` is the highest resident set the process ever had. */
  afterRun: ChildMemory;
  /** After a nonce sweep with the agent's clock past every envelope's window, after a GC. */
  afterSweep: ChildMemory;
  /** CPU time of the agent process per call during the run, µs. */
  cpuUsPerCall: number;
  /** Bytes per remembered nonce: the heap and array buffers the sweep freed over the nonces it dropped. */
  heapBytesPerNonce: number;
}

/** Past this, every nonce recorded so far has expired (it lives until timestamp + window + 1 s). */
export const SWEEP_ADVANCE_MS = MAX_AGE_MS + MAX_FUTURE_MS + 5_000;

const held = (memory: ChildMemory) => memory.heapUsed + memory.arrayBuffers;

export async function measureMemory(env: BenchEnv, options: MemoryOptions): Promise<MemoryResult> {
  const child = await startAgentChild(env.gateway, { cpu: env.pin?.server, approved: [env.peer.id] });
  const agent = keepAliveAgent(options.concurrency);
  try {
    const common = { url: child.url, prepare: signedChat(env.caller, child.id), agent };
    await runLoad({ ...common, concurrency: options.concurrency, count: options.warmupRequests });
    const baseline = await child.gc();
    await child.sample();
    const load = await runLoad({ ...common, concurrency: options.concurrency, count: options.requests });
    const cpu = await child.sample();
    const afterRun = await child.gc();
    const afterSweep = await child.sweep(SWEEP_ADVANCE_MS);
    const dropped = (afterRun.nonces ?? 0) - (afterSweep.nonces ?? 0);
    return {
      load,
      baseline,
      afterRun,
      afterSweep,
      cpuUsPerCall: load.ok ? (cpu.userUs + cpu.systemUs) / load.ok : NaN,
      heapBytesPerNonce: dropped > 0 ? (held(afterRun) - held(afterSweep)) / dropped : NaN,
    };
  } finally {
    agent.destroy();
    await child.stop();
  }
}

export interface A2AMemoryOptions {
  requests: number;
  /** Read the process's memory after every this many calls (no GC: what the process holds as it runs). */
  every: number;
  concurrency: number;
  warmupRequests: number;
}

export interface A2AMemoryPoint {
  /** Calls answered so far (after the warm-up). */
  calls: number;
  rss: number;
  heapUsed: number;
}

export interface A2AMemoryResult {
  requests: number;
  concurrency: number;
  /** After the warm-up, after a GC. */
  baseline: ChildMemory;
  points: A2AMemoryPoint[];
  /** The highest resident set during the measured calls (VmHWM, reset after the warm-up), at the end. */
  peakRss: number;
  /** The same since the process started: the warm-up's JIT compiling included. */
  peakSinceStart: number;
  /** Answers other than 200 over the whole run. */
  errors: number;
  rps: number;
  cpuUsPerCall: number;
}

/**
 * 5a. A2A blocking sends (an issued key) to a fresh agent process: its resident memory every `every` calls
 * and its peak. Every task is kept (the data dir's task store) and swept only by retention, so a process
 * that held each task in memory would grow with the run; this one must stay flat after the first points.
 */
export async function measureA2AMemory(
  env: BenchEnv,
  options: A2AMemoryOptions,
  progress: (step: string) => void = () => {},
): Promise<A2AMemoryResult> {
  const child = await startAgentChild(env.gateway, { cpu: env.pin?.server, approved: [env.peer.id] });
  const agent = keepAliveAgent(options.concurrency);
  try {
    const common = {
      url: child.url,
      prepare: a2aMessage(child.a2aKey),
      agent,
      concurrency: options.concurrency,
    };
    await runLoad({ ...common, count: options.warmupRequests });
    const baseline = await child.gc();
    const warm = await child.resetPeak();
    await child.sample();
    const points: A2AMemoryPoint[] = [];
    let calls = 0;
    let errors = 0;
    let elapsedMs = 0;
    while (calls < options.requests) {
      const load = await runLoad({ ...common, count: Math.min(options.every, options.requests - calls) });
      calls += load.ok + load.errors;
      errors += load.errors;
      elapsedMs += load.elapsedMs;
      const memory = await child.memory();
      points.push({ calls, rss: memory.rss, heapUsed: memory.heapUsed });
      progress(`5a. ${calls.toLocaleString('en')} A2A sends: rss ${(memory.rss / 1048576).toFixed(1)} MB`);
    }
    const cpu = await child.sample();
    const end = await child.memory();
    return {
      requests: calls,
      concurrency: options.concurrency,
      baseline,
      points,
      peakRss: Math.max(end.peakRss ?? 0, ...points.map((p) => p.rss)),
      peakSinceStart: Math.max(warm.peakRss ?? 0, baseline.peakRss ?? 0, end.peakRss ?? 0),
      errors,
      rps: elapsedMs > 0 ? ((calls - errors) / elapsedMs) * 1000 : NaN,
      cpuUsPerCall: calls - errors > 0 ? (cpu.userUs + cpu.systemUs) / (calls - errors) : NaN,
    };
  } finally {
    agent.destroy();
    await child.stop();
  }
}
