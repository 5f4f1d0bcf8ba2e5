import type { Router } from '@koa/router';
import type { McpResponse } from '../protocol/console-api.js';
import type { ApiDeps } from './api.js';
import { readJson } from './body.js';
import { reply } from './reply.js';

/** GET and PUT /api/settings (settings-api.ts), a tunnel preset, and the MCP server's token and commands. */
export function settingsRoutes(router: Router, { settings, mcp, events }: ApiDeps): void {
  router.get(
    '/api/settings',
    reply(() => settings.view()),
  );
  router.put(
    '/api/settings',
    reply(async (ctx) => settings.update(await readJson(ctx))),
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
