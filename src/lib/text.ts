// Text that came from a remote party (a card's name, a message preview) shown to the operator or put in front
// of the gateway agent: one line, no control or bidi-override characters, bounded length.

// C0 and C1 controls (escape sequences, newlines), bidi overrides and isolates (text that reads backwards),
// zero-width and other invisible format characters.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]+/g;

/** One printable line of at most `max` characters ('…' marks a cut); undefined for a non-string or empty text. */
export function oneLine(value: unknown, max: number): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.replace(UNSAFE, ' ').replace(/\s+/g, ' ').trim();
  if (!text) return undefined;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
