// The bench side of a server child: starts bench/server-child.ts with an IPC channel and asks it for
// its memory, a garbage collection, a nonce sweep or a clean stop.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ChildCommand, ChildConfig, ChildMemory, ChildMessage, ChildSample } from './child-protocol.js';

export interface ServerChild {
  url: string;
  /** The agent's id (agent://127.0.0.1:PORT); undefined for the echo server. */
  id: string | undefined;
  pid: number;
  memory(): Promise<ChildMemory>;
  gc(): Promise<ChildMemory>;
  /** CPU time (and, for the agent, handler times) since the previous sample. */
  sample(): Promise<ChildSample>;
  /** Moves the agent's clock forward by `advanceMs`, sweeps the nonce store, then puts the clock back. */
  sweep(advanceMs: number): Promise<ChildMemory>;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  /** Write a V8 CPU profile of the child into this directory when it stops. */
  cpuProfileDir?: string;
  startTimeoutMs?: number;
  /** Run the child on this CPU only (Linux `taskset`), so that it has a core to itself. */
  cpu?: number;
}

const SOURCE_CHILD = fileURLToPath(new URL('./server-child.ts', import.meta.url));
let builtChild: string | undefined;

/** Servers run from the compiled child once `useBuiltChild` was called (bench/run.ts does), else through tsx. */
export function useBuiltChild(path: string): void {
  builtChild = path;
}

export async function spawnServer(config: ChildConfig, options: SpawnOptions = {}): Promise<ServerChild> {
  const CHILD = builtChild ?? SOURCE_CHILD;
  const execArgv = builtChild ? ['--expose-gc', '--enable-source-maps'] : ['--expose-gc', '--import', 'tsx'];
  if (options.cpuProfileDir) execArgv.push('--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`);
  // taskset execs node in place, so the IPC channel fork() sets up is inherited as usual.
  const pinned = options.cpu === undefined ? {} : { execPath: 'taskset' };
  if (options.cpu !== undefined) execArgv.unshift('-c', String(options.cpu), process.execPath);
  const child = fork(CHILD, [JSON.stringify(config)], {
    ...pinned,
    execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await waitForReady(child, options.startTimeoutMs ?? 20_000);

  let seq = 0;
  type Reply = Extract<ChildMessage, { type: 'reply' }>;
  const pending = new Map<number, { resolve: (m: Reply) => void; reject: (e: Error) => void }>();
  child.on('message', (raw) => {
    const message = raw as ChildMessage;
    if (message.type !== 'reply') return;
    const waiter = pending.get(message.seq);
    pending.delete(message.seq);
    if (message.error) waiter?.reject(new Error(`${config.role} child: ${message.error}`));
    else waiter?.resolve(message);
  });
  child.on('exit', (code) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`${config.role} child exited (${code})`));
    pending.clear();
  });
  const ask = (command: ChildCommand) =>
    new Promise<Reply>((resolve, reject) => {
      const id = ++seq;
      pending.set(id, { resolve, reject });
      child.send({ ...command, seq: id });
    });
  const askMemory = async (command: ChildCommand) => {
    const { memory } = await ask(command);
    if (!memory) throw new Error(`${config.role} child sent no memory figures`);
    return memory;
  };

  let stopped: Promise<void> | undefined;
  return {
    url: ready.url,
    id: ready.id,
    pid: ready.pid,
    memory: () => askMemory({ cmd: 'memory' }),
    gc: () => askMemory({ cmd: 'gc' }),
    sweep: (advanceMs) => askMemory({ cmd: 'sweep', advanceMs }),
    async sample() {
      const { sample } = await ask({ cmd: 'sample' });
      if (!sample) throw new Error(`${config.role} child sent no sample`);
      return sample;
    },
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        ask({ cmd: 'stop' }).catch(() => child.kill());
      });
      return stopped;
    },
  };
}

function waitForReady(child: ChildProcess, timeoutMs: number) {
  return new Promise<Extract<ChildMessage, { type: 'ready' }>>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`server child did not start within ${timeoutMs} ms`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server child exited with code ${code} before it was ready`));
    });
    child.on('message', function onReady(raw) {
      const message = raw as ChildMessage;
      if (message.type !== 'ready') return;
      clearTimeout(timer);
      child.off('message', onReady);
      resolve(message);
    });
  });
}
