import type { Router } from '@koa/router';
import type { ConsoleTokenResponse, McpResponse } from '../protocol/console-api.js';
import type { ApiDeps } from './api-deps.js';
import { readJson } from './body.js';
import { reply } from './reply.js';

/**
 * GET and PUT /api/settings (settings-api.ts), a tunnel preset, the console's own token, and the MCP server's
 * token and commands.
 */
export function settingsRoutes(router: Router, { settings, mcp, events, consoleToken }: ApiDeps): void {
  router.get(
    '/api/settings',
    reply(() => settings.view()),
  );
  router.put(
    '/api/settings',
    reply(async (ctx) => settings.update(await readJson(ctx))),
  );
  router.post(
    '/api/console/token',
    reply((ctx): ConsoleTokenResponse => {
      const answer = consoleToken();
      // Streams opened with the old token end once this answer is out: the tab that asked reconnects with
      // the new token, every other one is asked for it.
      ctx.res.once('finish', () => events.close());
      return answer;
    }),
  );
  router.post(
    '/api/tunnel/preset',
    reply(async (ctx) => settings.usePreset(await readJson(ctx))),
  );
  // The MCP token is shown only here and only on request: the status never carries it.
  router.get(
    '/api/mcp',
    reply((): McpResponse => mcp.view()),
  );
  router.post(
    '/api/mcp/token',
    reply((): McpResponse => {
      const view = mcp.regenerate();
      events.state('mcp');
      return view;
    }),
  );
}
