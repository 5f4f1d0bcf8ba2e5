import { createHash, timingSafeEqual } from 'node:crypto';

/** Constant-time comparison (hashing first makes the lengths equal), so timing reveals nothing of the secret. */
export function secretMatches(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(expected), digest(given));
}
