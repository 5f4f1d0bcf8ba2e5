import { join } from 'node:path';
import { readJsonFile, writeFileAtomic } from '../lib/atomic-file.js';
import type { RegistryRecordView, RegistryStatus } from '../protocol/index.js';
import { RegistryError, registerWithRegistry } from './registry-client.js';

/** The record as kept in the data dir and shown by the console. */
export type Registration = RegistryRecordView;

export type RegistryState = RegistryStatus;

/** The record in the data dir (when no Redis holds it for every replica). */
export const REGISTRATION_FILE = 'registration.json';

export interface RegistrarOptions {
  dataDir: string;
  registryUrl(): string;
  /**
   * Proves the public URL serves our card before asking the registry to fetch it. It rejects with what it
   * found: an error with `detail` and `fix` (tunnel/unreachable.ts), or a plain one.
   */
  checkReachable(url: string): Promise<void>;
  onState?(state: RegistryState): void;
  /** Where the record is kept when replicas share it (Redis), instead of `registration.json`. */
  shared?: { save(record: Registration): void };
}

/**
 * Registration with the agent registry, kept in `<dataDir>/registration.json`. When the public URL changes
 * and the agent was registered, it registers the new URL by itself; a failure is reported, not retried in a
 * loop (the next URL change or the operator tries again).
 */
export class Registrar {
  private state: RegistryState;
  private readonly path: string;

  constructor(private readonly options: RegistrarOptions) {
    this.path = join(options.dataDir, REGISTRATION_FILE);
    const saved = options.shared ? undefined : readJsonFile<Registration>(this.path);
    this.state = saved ? { status: 'registered', record: saved } : { status: 'unregistered' };
  }

  /** The record another replica registered (shared state). */
  replace(record: Registration | undefined): void {
    if (this.state.status === 'registering') return;
    if (JSON.stringify(record) === JSON.stringify(this.record)) return;
    this.setState(record ? { status: 'registered', record } : { status: 'unregistered' });
  }

  get current(): RegistryState {
    return this.state;
  }

  get record(): Registration | undefined {
    return this.state.status === 'registered' ? this.state.record : undefined;
  }

  /** Registers `url`; resolves with the record or rejects with a RegistryError saying what to do. */
  async register(url: string): Promise<Registration> {
    const previous = this.state;
    this.setState({ status: 'registering', url });
    let unreachable = false;
    try {
      try {
        await this.options.checkReachable(url);
      } catch (error) {
        unreachable = true;
        // What the check measured names the fix, not a guess about the tunnel's state.
        const { detail, fix } = measuredFailure(error);
        throw new RegistryError(
          `Not registered: ${url} does not reach this agent (${detail}), so the registry could not read its card.`,
          `${fix}; then register again.`,
        );
      }
      const registry = this.options.registryUrl();
      const record: Registration = { ...(await registerWithRegistry(registry, url)), registry, url };
      if (this.options.shared) this.options.shared.save(record);
      else writeFileAtomic(this.path, JSON.stringify(record, null, 2));
      this.setState({ status: 'registered', record });
      return record;
    } catch (error) {
      const failure =
        error instanceof RegistryError ? error : new RegistryError((error as Error).message, 'Try again.');
      const lastError = {
        message: failure.message,
        fix: failure.fix,
        at: new Date().toISOString(),
        ...(unreachable ? { cause: 'unreachable' as const } : {}),
      };
      this.setState(
        previous.status === 'registered' ? { ...previous, lastError } : { status: 'unregistered', lastError },
      );
      throw failure;
    }
  }

  /** Called on every public address change: re-registers only when registered under another URL. */
  async addressChanged(url: string): Promise<Registration | undefined> {
    const record = this.record;
    if (!record || record.url === url) return undefined;
    try {
      return await this.register(url);
    } catch {
      return undefined; // Reported through the state; the operator sees it and the fix.
    }
  }

  private setState(state: RegistryState): void {
    this.state = state;
    this.options.onState?.(state);
  }
}

/** A failed reachability check's finding and fix; a plain error's message, and the self-test to find out more. */
function measuredFailure(error: unknown): { detail: string; fix: string } {
  const { detail, fix, message } = error as { detail?: unknown; fix?: unknown; message?: unknown };
  if (typeof detail === 'string' && typeof fix === 'string') return { detail, fix };
  return {
    detail: typeof message === 'string' ? message : String(error),
    fix: 'Run the self-test on the Overview to see where calls stop',
  };
}
