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
  // Same as JSON.stringify: a value with toJSON (a Date, say) is signed as what goes on the wire.
  const withToJson = value as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === 'function') return canonicalJson(withToJson.toJSON());
  if (Array.isArray(value)) {
    return `[${value.map((item) => (omitted(item) ? 'null' : canonicalJson(item))).join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  // Default sort compares UTF-16 code units, which is what RFC 8785 §3.2.3 asks for.
  const keys = Object.keys(record)
    .filter((key) => !omitted(record[key]))
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
}

// JSON.stringify leaves these out of objects (and writes null for them in arrays).
function omitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}
