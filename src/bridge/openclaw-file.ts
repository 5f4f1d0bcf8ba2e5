// OpenClaw's config file (`openclaw.json`, JSON5) as the bridge reads it: for the tool policy of the agent
// callers reach, and for a snippet that fits the roster the operator has.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import JSON5 from 'json5';

export type OpenClawFile =
  | { ok: true; path: string; config: unknown }
  | { ok: false; path: string; reason: 'missing' | 'unreadable' | 'invalid'; detail: string };

/** Reads and parses the file; `~/` is the given HOME. Never throws. */
export function readOpenClawFile(configPath: string, env: NodeJS.ProcessEnv = process.env): OpenClawFile {
  const path = configPath.startsWith('~/') ? join(env.HOME || homedir(), configPath.slice(2)) : configPath;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      return { ok: false, path, reason: 'missing', detail: `No OpenClaw config at ${path}` };
    const why = code ?? (error as Error).message;
    return {
      ok: false,
      path,
      reason: 'unreadable',
      detail: `Cannot read the OpenClaw config at ${path} (${why})`,
    };
  }
  try {
    return { ok: true, path, config: JSON5.parse<unknown>(text) };
  } catch (error) {
    const why = (error as Error).message;
    return {
      ok: false,
      path,
      reason: 'invalid',
      detail: `The OpenClaw config at ${path} is not valid JSON5 (${why})`,
    };
  }
}
