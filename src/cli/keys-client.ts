import { join } from 'node:path';
import { A2AKeyError, A2AKeys } from '../access/a2a-keys.js';
import { CONSOLE_FILE } from '../console/console-file.js';
import { readJsonFile } from '../lib/atomic-file.js';
import type {
  A2AKeyIssueResponse,
  A2AKeyRevokeResponse,
  A2AKeysResponse,
  A2AKeyView,
  ApiError,
} from '../protocol/console-api.js';
import { DEFAULT_SKILL } from '../protocol/skill-ids.js';
import { openSettingsStore } from '../settings/store.js';
import { A2AKeyFile } from '../state/a2a-key-store.js';
import { RedisA2AKeyRecords } from '../state/redis-a2a-key-store.js';
import { maskedRedisUrl, RedisConnection } from '../state/redis-connection.js';

/** The operator's A2A keys as the CLI reaches them, and where it reached them (said after each change). */
export interface KeysClient {
  list(): Promise<A2AKeyView[]>;
  issue(request: unknown): Promise<{ key: A2AKeyView; secret: string }>;
  revoke(id: string): Promise<A2AKeyView>;
  /** Where the change was made, and when it applies: for the operator. */
  readonly where: string;
  close(): Promise<void>;
}

/** A refusal with the operator's fix (and the fields at fault), from the console or the keys themselves. */
export class KeysCommandError extends Error {
  constructor(
    message: string,
    readonly fix?: string,
    readonly fields: { field: string; message: string }[] = [],
  ) {
    super(message);
    this.name = 'KeysCommandError';
  }
}

/**
 * The keys of the agent on `dataDir`. When an agent runs there, through its console (the URL and token in
 * `console.json`): the running agent makes the change, so it applies there at once and is announced to its
 * replicas, and the console shows it. When none answers there (none runs, or a crash left an old URL), the
 * keys directly: the data dir's `a2a-keys.json`, or with replicas the Redis they share (`redisUrl`).
 */
export async function openKeysClient(options: {
  dataDir: string;
  redisUrl?: string;
  timeoutMs?: number;
}): Promise<KeysClient> {
  const running = readConsoleFile(options.dataDir);
  if (running) {
    const client = new ConsoleKeys(running.url, running.token, options.timeoutMs ?? 10_000);
    if (await client.answers()) return client;
  }
  return openStore(options.dataDir, options.redisUrl);
}

/** The running agent's console (address and token) from `console.json`; undefined when there is none. */
export function readConsoleFile(dataDir: string): { url: string; token: string } | undefined {
  try {
    const saved = readJsonFile<{ url?: unknown; token?: unknown }>(join(dataDir, CONSOLE_FILE));
    if (typeof saved?.url !== 'string' || !saved.url || typeof saved.token !== 'string') return undefined;
    return { url: saved.url, token: saved.token };
  } catch {
    return undefined; // Unreadable: the console's own start says so; the keys are reached directly.
  }
}

class ConsoleKeys implements KeysClient {
  readonly where: string;

  constructor(
    private readonly url: string,
    private readonly token: string,
    private readonly timeoutMs: number,
  ) {
    this.where = `through the running agent's console (${url}): it applies there now, and at its replicas within a second`;
  }

  /** Whether a console listens there: refused means none runs (an old URL after a crash); anything else is one. */
  async answers(): Promise<boolean> {
    try {
      await this.call<A2AKeysResponse>('GET', '/api/a2a/keys');
      return true;
    } catch (error) {
      if (error instanceof NotRunning) return false;
      throw error;
    }
  }

  async list(): Promise<A2AKeyView[]> {
    return (await this.call<A2AKeysResponse>('GET', '/api/a2a/keys')).keys;
  }

  async issue(request: unknown): Promise<{ key: A2AKeyView; secret: string }> {
    const { key, secret } = await this.call<A2AKeyIssueResponse>('POST', '/api/a2a/keys', request);
    return { key, secret };
  }

  async revoke(id: string): Promise<A2AKeyView> {
    const path = `/api/a2a/keys/${encodeURIComponent(id)}/revoke`;
    return (await this.call<A2AKeyRevokeResponse>('POST', path, {})).key;
  }

  async close(): Promise<void> {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.url}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      // Only a refused connection means nothing runs there: the request never left, so nothing was changed.
      const code = ((error as Error).cause as { code?: unknown } | undefined)?.code;
      if (code === 'ECONNREFUSED') throw new NotRunning();
      throw new KeysCommandError(
        `The agent's console at ${this.url} did not answer (${(error as Error).name === 'TimeoutError' ? 'timed out' : (error as Error).message}).`,
        'Check that the agent is well, then try again.',
      );
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (response.ok && parsed !== undefined) return parsed as T;
    const error = (parsed as Partial<ApiError> | undefined)?.error;
    throw new KeysCommandError(
      error?.message ?? `The agent's console at ${this.url} answered ${response.status}.`,
      error?.fix,
      error?.fields,
    );
  }
}

class NotRunning extends Error {}

async function openStore(dataDir: string, redisUrlFlag: string | undefined): Promise<KeysClient> {
  const saved = openSettingsStore(dataDir).get();
  const redisUrl = redisUrlFlag ?? saved.redisUrl;
  // A scope names the skills the agent on this data dir has (its saved settings): a typo is refused.
  const skills = () => [DEFAULT_SKILL, ...saved.skills.map((skill) => skill.id)];
  if (!redisUrl) {
    const records = new A2AKeyFile(dataDir);
    return directKeys(
      new A2AKeys({ records, skills }),
      `in ${records.path} (no agent answered on this data dir; one started later reads it)`,
    );
  }
  const connection = new RedisConnection({ url: redisUrl });
  await connection.connect();
  const keys = new A2AKeys({
    records: new RedisA2AKeyRecords(connection),
    unavailable: () => connection.health().problem,
    skills,
  });
  const where = `in Redis at ${maskedRedisUrl(redisUrl)} (no agent answered on this data dir): every replica applies it within a second`;
  return directKeys(keys, where, () => connection.disconnect());
}

function directKeys(keys: A2AKeys, where: string, disconnect: () => void = () => undefined): KeysClient {
  const refusals = async <T>(action: () => Promise<T>): Promise<T> => {
    try {
      return await action();
    } catch (error) {
      if (error instanceof A2AKeyError) throw new KeysCommandError(error.message, error.fix, error.fields);
      throw error;
    }
  };
  return {
    where,
    list: () => refusals(() => keys.list()),
    issue: (request) => refusals(() => keys.issue(request)),
    revoke: (id) => refusals(() => keys.revoke(id)),
    close: async () => {
      await keys.close();
      disconnect();
    },
  };
}
