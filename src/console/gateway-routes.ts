import type { Router } from '@koa/router';
import type { GatewayCheckResponse } from '../protocol/console-api.js';
import type { ApiDeps } from './api-deps.js';
import { readJson } from './body.js';
import { ConsoleError } from './errors.js';
import { reply } from './reply.js';

/**
 * The gateway and the agent callers reach: POST /api/gateway/check probes it now ("Check again": health,
 * agent list and tool policy, replacing whatever the answers contradict); POST /api/gateway/accept with
 * `{"agent", "tools"}` lets callers reach an agent that exposes host tools, exactly as the operator saw it;
 * POST /api/gateway/withdraw takes that back.
 */
export function gatewayRoutes(router: Router, deps: ApiDeps): void {
  const { app } = deps;
  const answer = (): GatewayCheckResponse => ({
    agent: app.gatewayTarget.view,
    gateway: deps.status().gateway,
  });

  // A probe's own requests time out after 3 s, but a loaded machine or a gateway reloading its config can
  // stretch it: past `gatewayCheckWaitMs` the operator gets what is known and "still checking" (202), never
  // a request left hanging. The probe goes on and reports through the state events as always.
  router.post(
    '/api/gateway/check',
    reply(async (ctx): Promise<GatewayCheckResponse> => {
      const probe = app.gatewayWatch.probeNow();
      if (await settlesWithin(probe, deps.gatewayCheckWaitMs)) return answer();
      const since = new Date().toISOString();
      ctx.status = 202;
      return { ...answer(), checking: app.gatewayWatch.progress ?? { since, waitingFor: [] } };
    }),
  );
  router.post(
    '/api/gateway/accept',
    reply(async (ctx) => {
      const { agent, tools } = acceptanceOf(await readJson(ctx));
      const record = app.gatewayTarget.acceptance(agent, tools);
      if (!record) {
        throw new ConsoleError(
          409,
          `Callers would not reach agent "${agent.slice(0, 200)}" with exactly those tools now, so nothing was accepted.`,
          'The agent or its tools changed since the page was loaded: look at the Gateway card again and accept what it shows.',
        );
      }
      deps.settings.update({ acceptedExposedAgent: record });
      return answer();
    }),
  );
  router.post(
    '/api/gateway/withdraw',
    reply(() => {
      if (app.currentSettings.acceptedExposedAgent) deps.settings.update({ acceptedExposedAgent: null });
      return answer();
    }),
  );
}

function acceptanceOf(body: unknown): { agent: string; tools: string[] } {
  const { agent, tools } = (body ?? {}) as { agent?: unknown; tools?: unknown };
  if (
    typeof agent !== 'string' ||
    !Array.isArray(tools) ||
    !tools.every((tool): tool is string => typeof tool === 'string')
  ) {
    throw new ConsoleError(
      400,
      'The body must name the agent and the tools you accept.',
      'Send {"agent": "main", "tools": ["exec", "read"]}, as the Gateway card shows them.',
    );
  }
  return { agent, tools };
}

/** Whether `work` ends (either way) within `ms`; it goes on regardless. */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)));
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
