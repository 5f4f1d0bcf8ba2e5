/**
 * What libraries we do not control print, as the bridge's own lines: escaped, cut, and few.
 *
 * The A2A SDK (and others: its client, ioredis, electron-updater) print with console.* directly, sometimes
 * quoting what a caller or a called agent sent: a reference task id, a v0.3 push config's schemes, a whole
 * stream event (outside review, findings 4 and 6: forged lines, terminal escapes, 22 MB of log in seconds).
 * The known cases are refused before the library sees them; this is for the ones nobody found yet.
 */
import { formatWithOptions, inspect, type InspectOptions } from 'node:util';
import { escapedLine } from './text.js';

/** The most of one library call's text that is shown (before escaping); a stack trace's first frames fit. */
export const LIBRARY_LINE_CHARS = 400;
/** At most this many library lines each LIBRARY_WINDOW_MS, then one line that counts the rest. */
export const LIBRARY_LINES = 20;
export const LIBRARY_WINDOW_MS = 10_000;

const METHODS = ['log', 'info', 'debug', 'warn', 'error', 'trace', 'dir'] as const;
type Method = (typeof METHODS)[number];
type Print = (...args: unknown[]) => void;

/** Objects as one line, bounded, however deep or long what a library passed. */
const INSPECT: InspectOptions = {
  depth: 2,
  breakLength: Infinity,
  maxArrayLength: 20,
  maxStringLength: LIBRARY_LINE_CHARS,
};

/** The package this file belongs to when the bridge itself is installed as one (npm i -g): never a library. */
const OWN_PACKAGE = packageOf(import.meta.url);

let uninstall: (() => void) | undefined;

/**
 * Replaces the console's methods: a call from the bridge's own code prints as before (a multi-line banner
 * stays whole); a call from a library, or from Node's internals for one (a warning), prints one line:
 * `Library <package>: <what it said, escaped, cut at LIBRARY_LINE_CHARS>`, at most LIBRARY_LINES in each
 * LIBRARY_WINDOW_MS, so a caller that makes a library print cannot flood the log either. Who called is read
 * from the call's stack: the first frame outside Node's internals, library when it is in a node_modules
 * folder (of a package other than the bridge's own), or when there is none. Installed once, by the entry
 * points (the CLI, the desktop app's core); returns what restores the console (for tests).
 */
export function installConsoleGuard(): () => void {
  if (uninstall) return uninstall;
  const target = console;
  const originals = new Map<Method, Print>(METHODS.map((method) => [method, target[method] as Print]));
  const budget = new LineBudget((line) => originals.get('warn')?.call(target, line));
  for (const [method, original] of originals) {
    const guarded = function (this: unknown, ...args: unknown[]): void {
      const library = libraryOf(guarded);
      if (library === undefined) return void Reflect.apply(original, this, args);
      if (!budget.take()) return;
      const said = method === 'dir' ? inspect(args[0], INSPECT) : formatted(args);
      const line = `Library ${library}: ${method === 'trace' ? 'Trace: ' : ''}${escapedLine(said, LIBRARY_LINE_CHARS)}`;
      // trace and dir print nothing but their own output: their line goes where console.log's would.
      const to = method === 'trace' ? 'error' : method === 'dir' ? 'log' : method;
      originals.get(to)?.call(target, line);
    };
    target[method] = guarded as never;
  }
  uninstall = () => {
    for (const [method, original] of originals) target[method] = original as never;
    budget.flush();
    uninstall = undefined;
  };
  return uninstall;
}

/** What console.log would print, with each string argument cut first (an SSE event can be 256 KiB). */
function formatted(args: unknown[]): string {
  const cut = args.map((arg) =>
    typeof arg === 'string' && arg.length > LIBRARY_LINE_CHARS ? arg.slice(0, LIBRARY_LINE_CHARS + 1) : arg,
  );
  return formatWithOptions(INSPECT, ...cut);
}

/** The library a console call came from ('node' for Node's internals alone); undefined for our own code. */
function libraryOf(guarded: Print): string | undefined {
  const holder: { stack?: unknown } = {};
  const { prepareStackTrace, stackTraceLimit } = Error;
  let sites: NodeJS.CallSite[];
  try {
    // The frames themselves, not text: no source-map lookups, no parsing of a format that may change.
    Error.prepareStackTrace = (_error, callSites) => callSites;
    Error.stackTraceLimit = 8;
    Error.captureStackTrace(holder, guarded);
    sites = Array.isArray(holder.stack) ? (holder.stack as NodeJS.CallSite[]) : [];
  } finally {
    Error.prepareStackTrace = prepareStackTrace;
    Error.stackTraceLimit = stackTraceLimit;
  }
  for (const site of sites) {
    const file = site.getFileName() ?? '';
    // Node's own frames (console.assert calls warn; a process warning is printed by Node) say nothing.
    if (file === '' || file.startsWith('node:')) continue;
    const name = packageOf(file);
    return name === OWN_PACKAGE ? undefined : name;
  }
  return 'node';
}

/** The package a file is in: the folder after its path's last node_modules; undefined outside any. */
function packageOf(file: string): string | undefined {
  const path = file.replaceAll('\\', '/');
  const at = path.lastIndexOf('/node_modules/');
  if (at < 0) return undefined;
  const [first, second] = path.slice(at + '/node_modules/'.length).split('/');
  return first?.startsWith('@') ? `${first}/${second}` : first;
}

/** LIBRARY_LINES per window; past them, one line at the window's end counts what was not shown. */
class LineBudget {
  private windowStart = -Infinity;
  private shown = 0;
  private held = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly print: (line: string) => void) {}

  take(): boolean {
    const now = Date.now();
    if (now - this.windowStart >= LIBRARY_WINDOW_MS) {
      this.flush();
      this.windowStart = now;
      this.shown = 0;
    }
    if (this.shown < LIBRARY_LINES) {
      this.shown++;
      return true;
    }
    this.held++;
    this.timer ??= setTimeout(() => this.flush(), this.windowStart + LIBRARY_WINDOW_MS - now).unref();
    return false;
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const held = this.held;
    if (held === 0) return;
    this.held = 0;
    const lines = held === 1 ? '1 more line from libraries was' : `${held} more lines from libraries were`;
    this.print(
      `Library output: ${lines} not shown in the last ${LIBRARY_WINDOW_MS / 1000} s (at most ${LIBRARY_LINES} are).`,
    );
  }
}
