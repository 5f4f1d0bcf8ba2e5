import { readFileSync } from 'node:fs';
import { errorCode } from '../lib/atomic-file.js';

/**
 * What the log files kept from earlier runs, oldest first, at most `max` entries: after a restart the
 * console shows the history the files keep (issue 26), not only what came since. The newest file is read
 * first and the reading stops once `max` lines are found, so at most one file more than needed is read
 * (each stays under the rotation size). It runs once, before the first new entry can arrive.
 *
 * A line that does not parse (a write cut short when the machine stopped) is skipped, as is one without
 * the fields every entry has; `onError` hears of a file that exists but cannot be read.
 */
export function readHistory(
  files: readonly string[],
  max: number,
  onError: (error: unknown) => void,
): Record<string, unknown>[] {
  const newestFirst: Record<string, unknown>[] = [];
  for (const file of files) {
    const lines = readLines(file, onError);
    for (let i = lines.length - 1; i >= 0 && newestFirst.length < max; i--) {
      const entry = parsed(lines[i]!);
      if (entry) newestFirst.push(entry);
    }
    if (newestFirst.length >= max) break;
  }
  return newestFirst.reverse();
}

function readLines(file: string, onError: (error: unknown) => void): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n');
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') onError(error);
    return [];
  }
}

/** The fields every entry has, with their types: what the console's list and details rely on. */
const REQUIRED: Record<string, 'string' | 'number'> = {
  id: 'number',
  time: 'string',
  endpoint: 'string',
  signatureForm: 'string',
  verdict: 'string',
  status: 'number',
  durationMs: 'number',
  bytesIn: 'number',
  bytesOut: 'number',
};
/** Fields that hold objects when present: anything else there is dropped rather than shown. */
const OBJECTS = ['preview', 'screen', 'a2a'];

function parsed(line: string): Record<string, unknown> | undefined {
  if (!line.trim()) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const entry = value as Record<string, unknown>;
  for (const [field, type] of Object.entries(REQUIRED)) if (typeof entry[field] !== type) return undefined;
  if (!Number.isFinite(Date.parse(entry.time as string))) return undefined;
  for (const field of OBJECTS) {
    const held = entry[field];
    if (held !== undefined && (typeof held !== 'object' || held === null || Array.isArray(held)))
      delete entry[field];
  }
  return entry;
}
