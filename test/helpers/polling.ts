import { readFileSync } from 'node:fs';

// Small waiting helpers for the tunnel and registry tests: poll a condition instead of sleeping.

/** Resolves once `condition()` is truthy (it may be async); rejects with `what` after `timeoutMs`. */
export async function until(
  condition: () => unknown,
  timeoutMs = 5000,
  what = 'condition',
  intervalMs = 10,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Whether a process with this pid is still running. Signal 0 only says the pid exists: a killed process
 * whose parent has not reaped it yet (a zombie, e.g. an orphan waiting for a slow init) still exists, so on
 * Linux its state in /proc decides.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    // Gone in between, or no /proc (not Linux): then signal 0 is all we know.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
  // "pid (comm) S ...": the state follows the command name, which may itself hold spaces or parentheses.
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}
