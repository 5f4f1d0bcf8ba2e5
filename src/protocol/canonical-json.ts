/**
 * RFC 8785 (JSON Canonicalization Scheme): object keys sorted by UTF-16 code units at every depth,
 * no whitespace, and numbers and strings exactly as ECMAScript's JSON.stringify writes them.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) {
      throw new TypeError('Canonical JSON cannot represent NaN or Infinity');
    }
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`Canonical JSON cannot represent a ${typeof value}`);
    return text;
  }
  if (Array.isArray(value)) {
    // JSON.stringify writes undefined array members as null; so do we.
    return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  // Default sort compares UTF-16 code units, which is what RFC 8785 §3.2.3 asks for.
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
}
