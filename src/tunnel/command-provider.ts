import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { TunnelConfigError, type TunnelConnection, type TunnelProvider } from './provider.js';

export interface CommandProviderOptions {
  /** A shell command line; `{port}` is replaced by the agent port. */
  command: string;
  /** How the URL appears in the command's output; the first match wins. */
  urlPattern?: string;
  /** How long the command may take to print its URL. */
  urlTimeoutMs?: number;
}

// An https origin not followed by a path: cloudflared prints a docs link (with a path) before its URL.
export const DEFAULT_URL_PATTERN = 'https://[A-Za-z0-9.-]+(?::\\d+)?(?![\\w/.:-])';

/** After the command exits, how long its last output may take to be read (a child it left may hold the pipes). */
const LAST_OUTPUT_MS = 1000;

/**
 * Runs an operator's tunnel command (cloudflared, ngrok, ...), reads the first https URL it prints, and
 * treats the process ending as the tunnel breaking. Stopping kills the whole process group, so a shell
 * wrapper cannot leave the real tunnel running.
 */
export class CommandProvider implements TunnelProvider {
  readonly name = 'command';
  readonly asksForName = false;
  private readonly pattern: RegExp;

  constructor(private readonly options: CommandProviderOptions) {
    if (!options.command.trim()) {
      throw new TunnelConfigError(
        'The command tunnel needs a command: set --tunnel-command, e.g. "cloudflared tunnel --url http://127.0.0.1:{port}".',
      );
    }
    try {
      this.pattern = new RegExp(options.urlPattern ?? DEFAULT_URL_PATTERN);
    } catch (error) {
      throw new TunnelConfigError(
        `The tunnel URL pattern is not a valid regular expression: ${(error as Error).message}`,
      );
    }
  }

  open(port: number, { signal }: { signal: AbortSignal }): Promise<TunnelConnection> {
    const command = this.options.command.replaceAll('{port}', String(port));
    const child = spawn(command, {
      shell: true,
      detached: process.platform !== 'win32',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const kill = () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        if (child.pid && process.platform !== 'win32') process.kill(-child.pid, 'SIGTERM');
        else child.kill('SIGTERM');
      } catch {
        child.kill('SIGTERM');
      }
      // A command that ignores SIGTERM is killed for good after a moment.
      setTimeout(() => {
        try {
          if (child.pid && child.exitCode === null && process.platform !== 'win32')
            process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }, 3000).unref();
    };
    const lastLines: string[] = [];
    const tail = () => (lastLines.length ? `; last output: ${lastLines.slice(-3).join(' | ')}` : '');
    const readers = [child.stdout, child.stderr].map((stream) => createInterface({ input: stream }));
    const allRead = Promise.all(readers.map((reader) => once(reader, 'close').catch(() => undefined)));
    const exited = new Promise<Error>((resolve) => {
      child.once('exit', (code, sig) => {
        // The exit can be reported before the last output is read (its complaint): read that first.
        void Promise.race([allRead, delay(LAST_OUTPUT_MS, undefined, { ref: false })]).then(() =>
          resolve(new Error(`tunnel command exited (${sig ?? `code ${code}`})${tail()}`)),
        );
      });
      child.once('error', (error) => resolve(new Error(`tunnel command could not start: ${error.message}`)));
    });

    return new Promise<TunnelConnection>((resolve, reject) => {
      let settled = false;
      const finish = (outcome: { url: string } | { error: Error }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        // Once closed by us, the exit that follows is not a breakage: `broken` stays pending.
        let closed = false;
        const broken = new Promise<Error>(
          (resolveBroken) => void exited.then((error) => !closed && resolveBroken(error)),
        );
        const close = () => {
          closed = true;
          kill();
        };
        if ('url' in outcome) resolve({ url: outcome.url, broken, close });
        else {
          kill();
          reject(outcome.error);
        }
      };
      const timeoutMs = this.options.urlTimeoutMs ?? 30_000;
      const timer = setTimeout(
        () =>
          finish({
            error: new Error(
              `tunnel command printed no URL matching ${this.pattern.source} within ${timeoutMs / 1000} s${tail()}`,
            ),
          }),
        timeoutMs,
      );
      const onAbort = () => finish({ error: new Error('cancelled') });
      signal.addEventListener('abort', onAbort, { once: true });
      void exited.then((error) => finish({ error }));
      for (const reader of readers) {
        reader.on('line', (line) => {
          lastLines.push(line.slice(0, 200));
          if (lastLines.length > 10) lastLines.shift();
          const match = this.pattern.exec(line);
          if (match) finish({ url: match[0].replace(/\/+$/, '') });
        });
      }
    });
  }
}
