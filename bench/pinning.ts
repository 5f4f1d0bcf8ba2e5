// Optional CPU pinning (Linux `taskset`): the server under test gets CPU 0 to itself, and the load
// generator and the gateway share CPU 1. Without it, the scheduler's placement of four busy processes on
// two cores changes from run to run, and so does the throughput at c=32 (seen: 1,600 to 2,450 req/s
// with the same CPU time per call).
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';

export interface PinPlan {
  /** For the agent and the echo server. */
  server: number;
  /** For this process (the load generator) and the gateway. */
  client: number;
}

/** The plan, or undefined where pinning is not possible (not Linux, one CPU, no taskset). */
export function pinPlan(): PinPlan | undefined {
  if (process.platform !== 'linux' || cpus().length < 2) return undefined;
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  return { server: 0, client: 1 };
}

/** Pins every thread of this process to `cpu`. */
export function pinSelf(cpu: number): void {
  execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(process.pid)], { stdio: 'ignore' });
}

/** Lets every thread of this process run on any CPU again. */
export function unpinSelf(): void {
  const all = `0-${cpus().length - 1}`;
  execFileSync('taskset', ['-a', '-p', '-c', all, String(process.pid)], { stdio: 'ignore' });
}
