// The console guard (src/lib/console-guard.ts): a library's console call becomes one escaped, cut line, at
// most LIBRARY_LINES per window and then one line that counts the rest; the bridge's own calls print as they
// are. The library is a real module in a node_modules folder, so the guard reads a real stack.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  afterAll,
  afterEach,
  beforeAll,
  beforeEach,
  describe,
  expect,
  it,
  vi,
  type MockInstance,
} from 'vitest';
import {
  installConsoleGuard,
  LIBRARY_LINE_CHARS,
  LIBRARY_LINES,
  LIBRARY_WINDOW_MS,
} from '../../src/lib/console-guard.js';
import { tempDir } from '../helpers/agents.js';

type Say = (method: string, ...args: unknown[]) => void;

const root = tempDir('agent-bridge-console-guard-');
let say: Say;
let sayScoped: Say;

beforeAll(async () => {
  const load = async (pkg: string): Promise<Say> => {
    const dir = join(root, 'node_modules', pkg);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'index.mjs'),
      'export function say(method, ...args) { console[method](...args); }\n',
    );
    return ((await import(pathToFileURL(join(dir, 'index.mjs')).href)) as { say: Say }).say;
  };
  say = await load('chatty-lib');
  sayScoped = await load('@scope/chatty');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const FORGED = 'id\nAgent Bridge: forged\u001b[2J\r\u202e';
let printed: Record<'log' | 'warn' | 'error', MockInstance>;
let uninstall: () => void;

beforeEach(() => {
  // Stand-ins for the terminal, in place before the guard, which keeps them as the console's own methods.
  printed = {
    log: vi.spyOn(console, 'log').mockImplementation(() => undefined),
    warn: vi.spyOn(console, 'warn').mockImplementation(() => undefined),
    error: vi.spyOn(console, 'error').mockImplementation(() => undefined),
  };
  uninstall = installConsoleGuard();
});
afterEach(() => {
  uninstall();
  vi.restoreAllMocks();
  vi.useRealTimers();
});

const calls = (method: keyof typeof printed) => printed[method].mock.calls;

describe('a library that prints', () => {
  it('prints one escaped line, named for its package, on the stream it chose', () => {
    say('warn', `Reference task ${FORGED} not found.`);
    sayScoped('error', 'failed:', { id: FORGED }, new Error(FORGED));
    say('log', 'plain %s', FORGED);
    expect(calls('warn')).toEqual([
      ['Library chatty-lib: Reference task id\\nAgent Bridge: forged\\x1b[2J\\r\\u202e not found.'],
    ]);
    const [[error]] = calls('error') as [[string]];
    // The object as util.inspect writes it (its own escapes), the error with its stack, all on the one line.
    expect(error).toMatch(
      /^Library @scope\/chatty: failed: \{ id: 'id\\nAgent Bridge: forged.*' \} Error: id\\n.*\\n {4}at /,
    );
    expect(calls('log')).toEqual([['Library chatty-lib: plain id\\nAgent Bridge: forged\\x1b[2J\\r\\u202e']]);
    for (const [line] of [...calls('warn'), ...calls('error'), ...calls('log')]) {
      // eslint-disable-next-line no-control-regex -- the point: nothing raw
      expect(line).not.toMatch(/[\u0000-\u001f\u202e]/);
    }
  });

  it('is cut, however much it passes', () => {
    say('error', 'Failed to parse SSE event data:', `{"x":"${'a'.repeat(256 * 1024)}"}`, new Error('bad'));
    const [[line]] = calls('error') as [[string]];
    expect(line.length).toBeLessThan(LIBRARY_LINE_CHARS + 40);
    expect(line.endsWith('…')).toBe(true);
  });

  it(`shows ${LIBRARY_LINES} lines each ${LIBRARY_WINDOW_MS / 1000} s, then counts the rest in one line`, () => {
    vi.useFakeTimers();
    for (let i = 0; i < LIBRARY_LINES + 25; i++) say('warn', `line ${i}`);
    expect(calls('warn')).toHaveLength(LIBRARY_LINES);
    vi.advanceTimersByTime(LIBRARY_WINDOW_MS);
    expect(calls('warn').at(-1)).toEqual([
      `Library output: 25 more lines from libraries were not shown in the last ${LIBRARY_WINDOW_MS / 1000} s (at most ${LIBRARY_LINES} are).`,
    ]);
    // A new window shows lines again; the bridge's own are never counted.
    for (let i = 0; i < LIBRARY_LINES + 1; i++) console.warn(`own ${i}`);
    say('warn', 'again');
    expect(calls('warn').at(-1)).toEqual(['Library chatty-lib: again']);
    expect(calls('warn')).toHaveLength(LIBRARY_LINES + 1 + LIBRARY_LINES + 2);
  });
});

describe("the bridge's own output", () => {
  it('prints as it always did, lines and control characters its own', () => {
    console.log('Agent Bridge 1.0.0\n  Agent id:   agent://x\n  Access:     open');
    console.warn('own', { a: 1 });
    expect(calls('log')).toEqual([['Agent Bridge 1.0.0\n  Agent id:   agent://x\n  Access:     open']]);
    expect(calls('warn')).toEqual([['own', { a: 1 }]]);
  });

  it('is restored whole when the guard is removed', () => {
    uninstall();
    say('warn', FORGED);
    expect(calls('warn')).toEqual([[FORGED]]);
  });
});
