import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** A free loopback port (the agent id includes the port, so a restarted child must reuse it). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
    server.on('error', reject);
  });
}

export interface ChildAgent {
  process: ChildProcess;
  url: string;
  output(): string;
  /** Resolves with the exit code or signal once the process has ended. */
  exited: Promise<string>;
}

/** Runs the real CLI (`src/cli.ts serve`) in a child process, as `npm run serve` would. */
export async function startChildAgent(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ChildAgent> {
  // Never the operator's console port (8788): the test runs beside an agent that may be running.
  const consolePort = args.includes('--console-port') ? [] : ['--console-port', '0'];
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve', ...args, ...consolePort], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<string>((resolveExit) =>
    child.on('exit', (code, signal) => resolveExit(signal ?? String(code))),
  );
  const port = args[args.indexOf('--port') + 1];
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`agent exited early:\n${output}`);
    try {
      if ((await fetch(`${url}/agent/health`)).ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`agent did not start in time:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { process: child, url, output: () => output, exited };
}
