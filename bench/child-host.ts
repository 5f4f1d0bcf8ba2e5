// The bench side of a server child: starts bench/server-child.ts with an IPC channel and asks it for
// its memory, a garbage collection, a nonce sweep or a clean stop.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TunnelState } from '../src/tunnel/state.js';
import type {
  ChildCommand,
  ChildConfig,
  ChildMemory,
  ChildMessage,
  ChildSample,
  ConsoleRef,
} from './child-protocol.js';

/** One tunnel state of a tunnelled agent child, stamped in the child as it happened. */
export interface TunnelEvent {
  state: TunnelState;
  /** `process.hrtime.bigint()` in the child (the machine's monotonic clock, the same in every process). */
  at: bigint;
  /** `Date.now()` in the child at the same moment (to read a reconnecting state's `nextTryAt`). */
  wallMs: number;
}

/** When a tunnel-stop / tunnel-start began and returned, on the shared monotonic clock. */
export interface ControlTiming {
  calledAt: bigint;
  doneAt: bigint;
}

export interface ServerChild {
  url: string;
  /** The agent's card id when it started (agent://127.0.0.1:PORT, or its public id when tunnelled). */
  id: string | undefined;
  /** An agent: the A2A key its bench caller presents. */
  a2aKey: string | undefined;
  pid: number;
  /** A tunnelled agent: its public URL, when its tunnel came online before it reported ready. */
  publicUrl: string | undefined;
  /** A tunnelled agent: its tunnel state when it reported ready. */
  tunnel: TunnelState | undefined;
  /** An agent started with `console`: its operator console's URL and token. */
  console: ConsoleRef | undefined;
  /** A tunnelled agent: calls `listener` with each later change of its tunnel state; returns the unsubscribe. */
  onTunnel(listener: (event: TunnelEvent) => void): () => void;
  /** The tunnel server child: stops it (as if it died) or starts it again on the same port. */
  control(cmd: 'tunnel-stop' | 'tunnel-start'): Promise<ControlTiming>;
  memory(): Promise<ChildMemory>;
  gc(): Promise<ChildMemory>;
  /** Starts the child's peak rss again from its rss now (where /proc allows it), then reports memory. */
  resetPeak(): Promise<ChildMemory>;
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
  /** More node options for the child (e.g. V8 heap flags being compared). */
  nodeFlags?: string[];
}

const SOURCE_CHILD = fileURLToPath(new URL('./server-child.ts', import.meta.url));
let builtChild: string | undefined;

/** Servers run from the compiled child once `useBuiltChild` was called (bench/run.ts does), else through tsx. */
export function useBuiltChild(path: string): void {
  builtChild = path;
}

export async function spawnServer(config: ChildConfig, options: SpawnOptions = {}): Promise<ServerChild> {
  const CHILD = builtChild ?? SOURCE_CHILD;
  // As `npm run serve` and `agent-bridge serve` run the core: without --enable-source-maps (which holds
  // each loaded file's map, about 7 MB of the agent's memory).
  const execArgv = builtChild ? ['--expose-gc'] : ['--expose-gc', '--import', 'tsx'];
  execArgv.push(...(options.nodeFlags ?? []));
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
  const tunnelListeners = new Set<(event: TunnelEvent) => void>();
  child.on('message', (raw) => {
    const message = raw as ChildMessage;
    if (message.type === 'tunnel') {
      const event = { state: message.state, at: BigInt(message.at), wallMs: message.wallMs };
      for (const listener of tunnelListeners) listener(event);
      return;
    }
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
    a2aKey: ready.a2aKey,
    pid: ready.pid,
    publicUrl: ready.publicUrl,
    tunnel: ready.tunnel,
    console: ready.console,
    onTunnel(listener) {
      tunnelListeners.add(listener);
      return () => void tunnelListeners.delete(listener);
    },
    async control(cmd) {
      const { calledAt, doneAt } = await ask({ cmd });
      if (calledAt === undefined || doneAt === undefined) throw new Error(`${config.role} child: no timing`);
      return { calledAt: BigInt(calledAt), doneAt: BigInt(doneAt) };
    },
    memory: () => askMemory({ cmd: 'memory' }),
    gc: () => askMemory({ cmd: 'gc' }),
    resetPeak: () => askMemory({ cmd: 'reset-peak' }),
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
