import type { Router } from '@koa/router';
import type { OutboundBudgetView } from '../protocol/console-api.js';
import type { ApiDeps } from './api-deps.js';
import { reply } from './reply.js';

/**
 * GET /api/outbound/budgets: today's calls and tokens to each agent the operator's own agent called, and the
 * daily budgets per agent (mcp/outbound-budget.ts). The Calls out card shows it.
 */
export function budgetRoutes(router: Router, { app }: ApiDeps): void {
  router.get(
    '/api/outbound/budgets',
    reply((): OutboundBudgetView => app.outbound.budget.view()),
  );
}
