import { randomFillSync } from 'node:crypto';

// Random bytes from a pool refilled 4 KiB at a time: one call into OpenSSL per 512 span ids rather than one
// per id (each cost several µs on the hot path). Every byte is handed out once.
const pool = Buffer.allocUnsafe(4096);
let offset = pool.length;

/** `bytes` random bytes (at most 4096) as lower-case hex. */
export function randomHex(bytes: number): string {
  if (bytes > pool.length) throw new RangeError(`randomHex gives at most ${pool.length} bytes at once`);
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}
