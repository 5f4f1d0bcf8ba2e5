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

/**
 * Whether `serve` may print the console link with its token: only to a person at a terminal. A service's or
 * a container's output is kept in logs (journald, `docker logs`) that others may read, and the token opens
 * the whole console for as long as the process runs. Both stdin and stdout must be terminals: `docker run
 * -t` without `-i` gives stdout a terminal whose output still goes to the container's log.
 */
export function mayPrintConsoleToken(streams: {
  stdin: { isTTY?: boolean };
  stdout: { isTTY?: boolean };
}): boolean {
  return streams.stdin.isTTY === true && streams.stdout.isTTY === true;
}

/**
 * The `Console:` lines `serve` prints (indented to its start block): at a terminal the link with its token
 * (in the `#` fragment, which browsers never send); elsewhere the address and a command that prints the
 * link from console.json (0600), run by the operator on the machine.
 */
export function consoleLinkLines(info: ConsoleFile, file: string, withToken: boolean): string[] {
  if (withToken) {
    return [
      `  Console:    ${info.url}/#token=${info.token}`,
      `              (open it in a browser; the link is also in ${file})`,
    ];
  }
  return [
    `  Console:    ${info.url}/ (its token is not printed here: this output may be kept in a log)`,
    `              Get the link with the token: jq -r '.url + "/#token=" + .token' ${shellQuote(file)}`,
  ];
}

/** One POSIX shell word: the data dir may hold spaces ("Agent Bridge") or quotes. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
