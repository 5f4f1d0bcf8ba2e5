import type { RouterContext, RouterMiddleware } from '@koa/router';

/**
 * A route handler returns what to answer and leaves HTTP to `reply`; it throws to refuse (error-reply.ts
 * turns that into the answer). One that takes over the response itself (the event stream) returns nothing.
 */
export type ApiHandler = (ctx: RouterContext) => unknown;

/** The handler's answer as the body (JSON unless the handler set a type), never cached. */
export function reply(handler: ApiHandler): RouterMiddleware {
  return async (ctx) => {
    const body = await handler(ctx);
    if (ctx.respond === false || body === undefined) return;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = body;
  };
}
