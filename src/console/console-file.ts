import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { readJsonFile, writeFileAtomic } from '../lib/atomic-file.js';

export const CONSOLE_FILE = 'console.json';

export interface ConsoleFile {
  url: string;
  token: string;
}

/** `<dataDir>/console.json`, so local tools can reach the console; 0600, since it holds the token. */
export function writeConsoleFile(dataDir: string, info: ConsoleFile): string {
  const path = join(dataDir, CONSOLE_FILE);
  writeFileAtomic(path, `${JSON.stringify(info, null, 2)}\n`, 0o600);
  return path;
}

/** Removes the file only while it names this launch: a newer console on the same data dir keeps its own. */
export function removeConsoleFile(dataDir: string, token: string): void {
  const path = join(dataDir, CONSOLE_FILE);
  try {
    if (readJsonFile<Partial<ConsoleFile>>(path)?.token === token) unlinkSync(path);
  } catch {
    // Gone or unreadable: nothing of this launch is left to remove.
  }
}
