import { join } from 'node:path';
import { TokenFile, type SavedToken } from '../lib/token-file.js';

export const CONSOLE_FILE = 'console.json';

/** `<dataDir>/console.json` (0600): the console's address and its token, so local tools can reach it. */
export type ConsoleFile = SavedToken;

/**
 * The console token. It stays the same across restarts, so an open tab and a saved link keep working,
 * until the operator asks for a new one (the console's "New console token", or `--new-console-token`).
 */
export class ConsoleToken extends TokenFile {
  constructor(dataDir: string) {
    super(join(dataDir, CONSOLE_FILE));
  }
}

/**
 * Whether `serve` may print the console link with its token: only to a person at a terminal. A service's or
 * a container's output is kept in logs (journald, `docker logs`) that others may read, and the token opens
 * the whole console, across restarts, until the operator replaces it. Both stdin and stdout must be terminals: `docker run
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
