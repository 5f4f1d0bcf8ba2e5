import { createHash, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import type { Context, Next } from 'koa';
import { CONSOLE_FILE } from './console-file.js';
import { ConsoleError } from './errors.js';

/** Constant-time comparison (hashing first makes the lengths equal), so timing reveals nothing of the token. */
export function tokenMatches(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(expected), digest(given));
}

/**
 * Refuses requests not addressed to the console itself: a `Host` other than its loopback address (DNS
 * rebinding: a web page whose name now resolves to 127.0.0.1) or an `Origin` of any other page (CSRF).
 */
export function sameOriginOnly(port: () => number) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const hosts = [`127.0.0.1:${port()}`, `localhost:${port()}`];
    const address = `http://127.0.0.1:${port()}`;
    const host = (ctx.req.headers.host ?? '').toLowerCase();
    if (!hosts.includes(host)) {
      throw new ConsoleError(
        403,
        `Refused: Host "${host.slice(0, 100)}" is not this console's address; it answers only at ${address} (a guard against DNS rebinding).`,
        `Open ${address}/ directly.`,
      );
    }
    const origin = ctx.req.headers.origin;
    if (origin !== undefined && !hosts.some((own) => origin.toLowerCase() === `http://${own}`)) {
      throw new ConsoleError(
        403,
        `Refused: a page from ${JSON.stringify(origin.slice(0, 100))} may not call the console.`,
        `Use the console at ${address}/ itself; other web pages may not reach it.`,
      );
    }
    await next();
  };
}

/**
 * Every /api call carries the console token (`token()`: the operator may replace it) as `Authorization:
 * Bearer`. `/api/events` may instead take `?token=`, because the browser's EventSource cannot send headers;
 * the console never logs URLs.
 */
export function requireToken(token: () => string, dataDir: string) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const header = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'))?.[1];
    const query =
      ctx.path === '/api/events'
        ? (new URLSearchParams(ctx.querystring).get('token') ?? undefined)
        : undefined;
    if (!tokenMatches(token(), header ?? query)) {
      throw new ConsoleError(
        401,
        `Missing or wrong console token (it changes only when the operator asks for a new one): open the ` +
          `console URL printed at start (it ends in #token=...), or read "token" from ${join(dataDir, CONSOLE_FILE)}.`,
        'Send it as "Authorization: Bearer <token>".',
        undefined,
        { 'WWW-Authenticate': 'Bearer realm="agent-bridge-console"' },
      );
    }
    await next();
  };
}
