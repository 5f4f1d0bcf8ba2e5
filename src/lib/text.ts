// Text that came from a remote party (a card's name, a message preview, a sender id in a refusal) shown to
// the operator, written to a terminal, or put in front of the gateway agent.

// C0 and C1 controls (newlines, escape sequences, OSC titles), DEL, bidi overrides and isolates (text that
// reads backwards), zero-width and other invisible format characters.
const UNSAFE_CLASS = '[\\u0000-\\u001f\\u007f-\\u009f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2069\\ufeff]';
const UNSAFE_RUN = new RegExp(`${UNSAFE_CLASS}+`, 'g');
const UNSAFE_CHAR = new RegExp(UNSAFE_CLASS, 'g');
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Text for a terminal or a line-oriented log: every unsafe character is shown escaped (`\n`, `\x1b`,
 * `\u202e`), never acted on, so a remote string cannot forge a log line or drive the terminal.
 */
export function printable(text: string): string {
  return text.replace(UNSAFE_CHAR, (char) => {
    const code = char.charCodeAt(0);
    const hex = code.toString(16).padStart(code <= 0xff ? 2 : 4, '0');
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
