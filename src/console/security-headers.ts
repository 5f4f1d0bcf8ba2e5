import type { Context, Next } from 'koa';

/** Only the console's own files may run, load or frame anything (XSS, clickjacking, data exfiltration). */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  // Other sites may not embed or read the console's responses as subresources (Spectre-style leaks).
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** Sets the headers first, so every answer carries them, refusals and errors included. */
export async function securityHeaders(ctx: Context, next: Next): Promise<void> {
  ctx.set(HEADERS);
  await next();
}
