import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * ../shared/reference beside the repo: published schemas and vectors, read by tests, never copied. A git
 * worktree sits elsewhere: AGENT_BRIDGE_REFERENCE names the folder then.
 */
export const REFERENCE_DIR =
  process.env.AGENT_BRIDGE_REFERENCE ||
  resolve(dirname(fileURLToPath(import.meta.url)), '../../../shared/reference');
export const hasReference = existsSync(join(REFERENCE_DIR, 'samvad-v1.2'));

if (!hasReference)
  console.warn(
    `SKIPPED: reference data not found at ${REFERENCE_DIR}; interop checks against it are skipped.`,
  );

export function readReference<T>(file: string): T {
  return JSON.parse(readFileSync(join(REFERENCE_DIR, file), 'utf8')) as T;
}
