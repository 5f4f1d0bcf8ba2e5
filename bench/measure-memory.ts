// 5. Memory: many signed sync calls to a fresh agent process, its resident memory before and after
// (after a full GC), and its nonce store before and after a sweep past the acceptance window.
import { MAX_AGE_MS, MAX_FUTURE_MS } from '../src/agent/pipeline.js';
import type { ChildMemory } from './child-protocol.js';
import { keepAliveAgent, runLoad, type LoadResult } from './load.js';
import { signedChat } from './requests.js';
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
