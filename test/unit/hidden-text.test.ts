// Remote text shown anywhere (the operator's log and terminal, the MCP untrusted blocks) has one definition
// of what must not pass as it is: characters that end a line, drive a terminal, reorder text or show
// nothing. A table of each kind, through the three functions that show remote text.
import { describe, expect, it } from 'vitest';
import { loggedError, oneLine, printable } from '../../src/lib/text.js';
import { oneLineJson } from '../../src/mcp/untrusted.js';

const HIDDEN: [string, string][] = [
  ['a line feed', '\n'],
  ['an escape (terminal sequences)', '\u001b'],
  ['DEL and a C1 control', '\u007f\u009b'],
  ['zero-width space, joiner and marks', '\u200b\u200d\u200e\u200f'],
  ['the Arabic letter mark', '\u061c'],
  ['the Mongolian vowel separator and free variation selectors', '\u180e\u180b\u180f'],
  ['bidi overrides and isolates', '\u202a\u202e\u2066\u2069'],
  ['line and paragraph separators', '\u2028\u2029'],
  ['word joiner and invisible operators', '\u2060\u2061\u2064'],
  ['variation selectors', '\ufe00\ufe0f'],
  ['a byte order mark', '\ufeff'],
  ['interlinear annotation', '\ufff9\ufffa\ufffb'],
  ['musical format characters', String.fromCodePoint(0x1d173, 0x1d17a)],
  ['tag characters', String.fromCodePoint(0xe0001, 0xe0041, 0xe007f)],
  ['supplementary variation selectors', String.fromCodePoint(0xe0100, 0xe01ef)],
  ['the combining grapheme joiner', '\u034f'],
  ['blank letters (Hangul fillers, the Braille blank)', '\u115f\u3164\uffa0\u2800'],
];

describe('hidden characters in remote text', () => {
  it.each(HIDDEN)('%s: escaped for a terminal, dropped from one line, escaped in JSON', (_what, hidden) => {
    const text = `before${hidden}after`;
    const shown = printable(text);
    expect(shown).toMatch(/^before(\\[xu][0-9a-f{}]+|\\n)+after$/);
    expect(oneLine(text, 100)).toBe('before after');
    const { text: json } = oneLineJson(text, 1000);
    expect(json).toMatch(/^"before(\\u[0-9a-f]{4}|\\n)+after"$/);
    expect(JSON.parse(json)).toBe(text);
  });

  it('leaves visible text alone, accents and emoji included', () => {
    const text = 'Grüße, 你好, café ☕ 🦊';
    expect(printable(text)).toBe(text);
    expect(oneLine(text, 100)).toBe(text);
    expect(JSON.parse(oneLineJson(text, 1000).text)).toBe(text);
  });
});

describe("an error in the operator's log", () => {
  const forged = 'bad answer\nAgent Bridge: forged line\u001b[2J\r\u202e';

  it('has its message on one escaped line, then its frames', () => {
    const lines = loggedError(new TypeError(forged)).split('\n');
    expect(lines[0]).toBe('TypeError: bad answer\\nAgent Bridge: forged line\\x1b[2J\\r\\u202e');
    expect(lines.length).toBeGreaterThan(1);
    for (const frame of lines.slice(1)) expect(frame).toMatch(/^ {4}at /);
  });

  it('is cut, and anything thrown is shown so', () => {
    expect(loggedError(new Error('x'.repeat(10_000)), 100).split('\n')[0]).toBe(`Error: ${'x'.repeat(93)}…`);
    expect(loggedError(forged)).toBe('bad answer\\nAgent Bridge: forged line\\x1b[2J\\r\\u202e');
    // A stack not in V8's form (set by hand) is not trusted to hold frames only.
    const odd = new Error('odd');
    odd.stack = `Error: odd\n${forged}\n    at place (file.js:1:1)`;
    expect(loggedError(odd)).toBe('Error: odd\n    at place (file.js:1:1)');
    odd.stack = forged;
    expect(loggedError(odd)).toBe('Error: odd');
  });
});
