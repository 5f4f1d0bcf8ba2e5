import type { Context, Next } from 'koa';
import { AccessError } from '../access/access-control.js';
import { A2AKeyError } from '../access/a2a-keys.js';
import { KnockError } from '../access/knocks.js';
import { KeyStoreError } from '../keys/keystore.js';
import { SkillEditError } from '../skills/skill-edits.js';
import { RegistryError } from '../registry/registry-client.js';
import { ConsoleError } from './errors.js';

/**
 * The one place a console failure becomes a reply: ApiError JSON, never cached. Errors written for the
 * operator (forOperator) say what went wrong and what to do; anything else is reported to `onError` and
 * answered with a generic 500, so internal messages and stacks never reach the client (koa's `expose` rule).
 */
export function errorsAsJson(onError: (error: unknown) => void) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
    } catch (error) {
      const known = forOperator(error);
      if (!known) onError(error);
      // A stream that already started cannot change its status: just end it.
      if (ctx.headerSent || ctx.respond === false) {
        ctx.res.destroy();
        return;
      }
      const reply = known ?? unexpected(ctx);
      ctx.status = reply.status;
      ctx.set(reply.headers);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = reply.toBody();
    }
  };
}

/** The errors whose message (and fix) are written for the operator, as a ConsoleError; undefined for the rest. */
export function forOperator(error: unknown): ConsoleError | undefined {
  if (error instanceof ConsoleError) return error;
  if (error instanceof AccessError) return new ConsoleError(error.status, error.message, error.fix);
  // Knock messages name codes and fields, never a key or what a caller sent.
  if (error instanceof KnockError) return new ConsoleError(error.status, error.message, error.fix);
  // Key messages name fields, ids and store problems, never a key or its hash.
  if (error instanceof A2AKeyError)
    return new ConsoleError(error.status, error.message, error.fix, error.fields);
  // Skill messages name skills, agents, tools and fields: the operator's own configuration.
  if (error instanceof SkillEditError)
    return new ConsoleError(error.status, error.message, error.fix, error.fields);
  // The registry (or the path to it) failed, not the console: 502, with the registrar's own fix.
  if (error instanceof RegistryError) return new ConsoleError(502, error.message, error.fix);
  if (error instanceof KeyStoreError) {
    if (error.code === 'unknown-kid') {
      return new ConsoleError(
        404,
        error.message,
        'Pick a kid from the Keys page (GET /api/status lists them).',
      );
    }
    // Keystore messages say what to do and never contain key material: safe to pass on.
    return new ConsoleError(500, error.message);
  }
  return undefined;
}

function unexpected(ctx: Context): ConsoleError {
  return new ConsoleError(
    500,
    `The console failed to handle ${ctx.method} ${ctx.path.slice(0, 200)}.`,
    'The details are in the terminal (stderr) of Agent Bridge; try again, and report it if it repeats.',
  );
}
