import type { Router } from '@koa/router';
import type { AgentBridgeApp } from '../app.js';
import type { A2AKeyIssueResponse, A2AKeyRevokeResponse, A2AKeysResponse } from '../protocol/console-api.js';
import type { ApiDeps } from './api-deps.js';
import { readJson } from './body.js';
import { reply } from './reply.js';

/**
 * GET /api/a2a/keys, POST /api/a2a/keys (issue: the one answer that holds the key) and
 * POST /api/a2a/keys/:id/revoke. A request the keys refuse (A2AKeyError: its status, message, fix and
 * fields) is answered by error-reply.ts.
 */
export function a2aKeyRoutes(router: Router, { app }: ApiDeps): void {
  router.get(
    '/api/a2a/keys',
    reply(async (): Promise<A2AKeysResponse> => keysResponse(app)),
  );
  router.post(
    '/api/a2a/keys',
    reply(async (ctx): Promise<A2AKeyIssueResponse> => {
      const issued = await app.a2aKeys.issue(await readJson(ctx));
      ctx.status = 201;
      return { ...(await keysResponse(app)), ...issued };
    }),
  );
  router.post(
    '/api/a2a/keys/:id/revoke',
    reply(async (ctx): Promise<A2AKeyRevokeResponse> => {
      const key = await app.a2aKeys.revoke(ctx.params.id ?? '');
      return { ...(await keysResponse(app)), key };
    }),
  );
}

async function keysResponse(app: AgentBridgeApp): Promise<A2AKeysResponse> {
  const { perSender, tokensPerDay } = app.currentSettings;
  return { keys: await app.a2aKeys.list(), defaults: { requestsPerMinute: perSender, tokensPerDay } };
}
