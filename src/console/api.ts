import { Router, type RouterContext } from '@koa/router';
import type { Context, Next } from 'koa';
import { a2aKeyRoutes } from './a2a-key-routes.js';
import { accessRoutes } from './access-routes.js';
import { agentRoutes } from './agent-routes.js';
import type { ApiDeps } from './api-deps.js';
import { budgetRoutes } from './budget-routes.js';
import { checkDeclaredLength } from './body.js';
import { credentialRoutes } from './credential-routes.js';
import { gatewayRoutes } from './gateway-routes.js';
import { knockRoutes } from './knock-routes.js';
import { ConsoleError } from './errors.js';
import { settingsRoutes } from './settings-routes.js';
import { skillsRoutes } from './skills-routes.js';
import { trafficRoutes } from './traffic-routes.js';

/**
 * The operator API of DESIGN.md on @koa/router. Each concern registers its routes; the handlers only
 * translate HTTP to the app's own methods and throw to refuse. error-reply.ts turns every error into the
 * answer, so no route catches one. Mounted behind the token and same-origin checks (console-server.ts).
 */
export function consoleApi(deps: ApiDeps): (ctx: Context) => Promise<void> {
  // Paths match only as written: no trailing slash, no other case.
  const router = new Router({ strict: true, sensitive: true });
  router.use(beforeHandlers);
  agentRoutes(router, deps);
  gatewayRoutes(router, deps);
  trafficRoutes(router, deps);
  accessRoutes(router, deps);
  a2aKeyRoutes(router, deps);
  knockRoutes(router, deps);
  skillsRoutes(router, deps);
  settingsRoutes(router, deps);
  credentialRoutes(router, deps);
  budgetRoutes(router, deps);

  const routes = router.routes();
  return async (ctx: Context): Promise<void> => {
    // The router answers HEAD with each GET route; the console does not (HEAD /api/events would hold a
    // stream open that has no body).
    if (ctx.method === 'HEAD') return noRoute(router, ctx);
    // The router sets `params` and `router` on the context itself.
    await routes(ctx as RouterContext, async () => noRoute(router, ctx));
  };
}

/**
 * Runs before the matched handler only, so an unknown path or method is told so first. Refuses a declared
 * body over the limit unread, and a path that is not valid URL encoding (the router would pass the
 * parameter on undecoded; the paths' fixed parts hold no `%`, so only a parameter can be at fault).
 */
async function beforeHandlers(ctx: Context, next: Next): Promise<void> {
  checkDeclaredLength(ctx);
  try {
    decodeURIComponent(ctx.path);
  } catch {
    throw new ConsoleError(400, 'The path is not valid URL encoding.');
  }
  await next();
}

/** 404 when no route has this path, else 405 naming the methods it has (also in `Allow`). */
function noRoute(router: Router, ctx: Context): never {
  const methods = router.match(ctx.path, ctx.method).path.flatMap((layer) => layer.methods);
  const allowed = [...new Set(methods)].filter((method) => method !== 'HEAD');
  if (allowed.length === 0) {
    throw new ConsoleError(
      404,
      `No console API at ${ctx.path.slice(0, 200)}.`,
      'See "Operator console API" in DESIGN.md for the paths.',
    );
  }
  const allow = allowed.join(', ');
  throw new ConsoleError(405, `Use ${allow} for ${ctx.path}.`, undefined, undefined, { Allow: allow });
}
