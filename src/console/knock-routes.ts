import type { Router } from '@koa/router';
import type { AgentBridgeApp } from '../app.js';
import type { KnockApproveResponse, KnocksResponse } from '../protocol/console-api.js';
import type { ApiDeps } from './api-deps.js';
import { readJson } from './body.js';
import { ConsoleError } from './errors.js';
import { reply } from './reply.js';

/**
 * GET /api/a2a/knocks, POST /api/a2a/knocks/:code/approve (the key's fields as POST /api/a2a/keys takes
 * them: name, expiresAt, limits, skills; the answer holds the key's view, never the key: its caller reads it
 * in its task) and POST /api/a2a/knocks/:code/deny (`reason`). A request the knocks or the keys refuse
 * (KnockError, A2AKeyError) is answered by error-reply.ts.
 */
export function knockRoutes(router: Router, { app }: ApiDeps): void {
  router.get(
    '/api/a2a/knocks',
    reply(async (): Promise<KnocksResponse> => knocksResponse(app)),
  );
  router.post(
    '/api/a2a/knocks/:code/approve',
    reply(async (ctx): Promise<KnockApproveResponse> => {
      const body = await readJson(ctx);
      const key = await decisions(app).approve(ctx.params.code ?? '', body);
      return { ...(await knocksResponse(app)), key };
    }),
  );
  router.post(
    '/api/a2a/knocks/:code/deny',
    reply(async (ctx): Promise<KnocksResponse> => {
      const body = await readJson(ctx);
      await decisions(app).deny(ctx.params.code ?? '', (body as { reason?: unknown } | null)?.reason);
      return knocksResponse(app);
    }),
  );
}

function decisions(app: AgentBridgeApp) {
  const knocks = app.a2a.knocks;
  if (!knocks) {
    throw new ConsoleError(
      409,
      'A2A callers cannot knock on this agent: it runs with replicas (Redis), and the knocks are not shared between them yet.',
      'Issue a key for the caller instead (POST /api/a2a/keys).',
    );
  }
  return knocks;
}

async function knocksResponse(app: AgentBridgeApp): Promise<KnocksResponse> {
  const settings = app.currentSettings;
  const knocks = app.a2a.knocks;
  if (knocks) await knocks.sweep();
  const names = new Map(app.published.published().map((skill) => [skill.id, skill]));
  return {
    policy: settings.access,
    available: knocks !== undefined && settings.access === 'pairing',
    knocks: knocks?.view() ?? [],
    limits: {
      maxWaiting: knocks?.limits.maxWaiting ?? 0,
      maxPerAddress: knocks?.limits.maxPerAddress ?? 0,
      expiryHours: settings.pendingExpiryHours,
    },
    refused: knocks?.refused ?? 0,
    skills: app.published.ids().map((id) => {
      const skill = names.get(id);
      const setting = settings.skills.find((each) => each.id === id);
      return {
        id,
        name: skill?.name ?? setting?.name ?? id,
        audience: skill?.audience ?? setting?.audience ?? 'public',
      };
    }),
    defaults: { requestsPerMinute: settings.perSender, tokensPerDay: settings.tokensPerDay },
  };
}
