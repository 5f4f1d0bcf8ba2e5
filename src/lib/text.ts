// Text that came from a remote party (a card's name, a message preview, a sender id in a refusal) shown to
// the operator, written to a terminal, or put in front of the gateway agent.

/**
 * Characters that end a line, drive a terminal, reorder text or show nothing, in one definition for every
 * place remote text is shown (the operator's log and terminal here, the MCP untrusted blocks): controls
 * (C0, DEL, C1), format characters (zero-width, bidi marks, overrides and isolates, U+061C included, the
 * invisible operators, interlinear annotation, tag characters: "ASCII smuggling"), line and paragraph
 * separators, variation selectors (U+180B-180F, U+FE00-FE0F, U+E0100-E01EF), the combining grapheme joiner,
 * and the blank letters (Hangul fillers, the Braille blank). A RegExp character class for the `u` flag.
 */
export const HIDDEN_CHARS =
  '[\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\u034f\\u115f\\u1160\\u180b-\\u180f\\u2800\\u3164\\ufe00-\\ufe0f\\uffa0\\u{e0000}-\\u{e0fff}]';
// Combining marks alone in the class on purpose: each one is to be found, whatever it follows.
// eslint-disable-next-line no-misleading-character-class
const UNSAFE_RUN = new RegExp(`${HIDDEN_CHARS}+`, 'gu');
// eslint-disable-next-line no-misleading-character-class
const UNSAFE_CHAR = new RegExp(HIDDEN_CHARS, 'gu');
const unit = (char: string, i: number) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Text for a terminal or a line-oriented log: every unsafe character is shown escaped (`\n`, `\x1b`,
 * `\u202e`), never acted on, so a remote string cannot forge a log line or drive the terminal.
 */
export function printable(text: string): string {
  return text.replace(UNSAFE_CHAR, (char) => {
    const code = char.codePointAt(0) as number;
    const hex = code.toString(16).padStart(code <= 0xff ? 2 : 4, '0');
    if (code > 0xffff) return `\\u{${hex}}`;
    return NAMED[char] ?? (code <= 0xff ? `\\x${hex}` : `\\u${hex}`);
  });
}

/** One printable line of at most `max` characters ('…' marks a cut); undefined for a non-string or empty text. */
export function oneLine(value: unknown, max: number): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.replace(UNSAFE_RUN, ' ').replace(/\s+/g, ' ').trim();
  if (!text) return undefined;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * Remote text quoted in one of the bridge's own lines (what a server answered, a value a reply carried): cut to
 * `max` characters ('…' marks a cut), then escaped as `printable` does, so it stays one line, shows exactly
 * what was sent, and is never acted on.
 */
export function escapedLine(text: string, max: number): string {
  return printable(text.length > max ? `${text.slice(0, max)}…` : text);
}

/**
 * An error for the operator's log: its first line (name and message, which may quote what a remote party
 * sent) escaped and cut as escapedLine does, then the frames of its stack as they are (places in the code,
 * one a line). Anything else thrown: as String() reads it, escaped and cut.
 */
export function loggedError(error: unknown, max = 500): string {
  if (!(error instanceof Error)) return escapedLine(thrownString(error), max);
  const head = error.message ? `${error.name}: ${error.message}` : error.name;
  const stack = typeof error.stack === 'string' ? error.stack : '';
  // V8 writes the stack as the error's first line(s), then a line per frame; a stack in any other form
  // (a message changed after the error was made) is left out rather than trusted.
  const frames = stack.startsWith(`${head}\n`)
    ? stack
        .slice(head.length + 1)
        .split('\n')
        .filter((line) => line.startsWith('    at '))
        .map(printable)
    : [];
  return [escapedLine(head, max), ...frames].join('\n');
}

function thrownString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/**
 * Text made by JSON.stringify (which escapes only C0) with every other hidden character written as a \u
 * escape, each UTF-16 unit on its own (a character beyond U+FFFF becomes its surrogate pair): one line that
 * reads as it is, and still the same JSON, since those characters can only occur inside its strings.
 */
export function safeJson(json: string): string {
  return json.replace(UNSAFE_CHAR, (char) =>
    char.length === 1 ? unit(char, 0) : unit(char, 0) + unit(char, 1),
  );
}
