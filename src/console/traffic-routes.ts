import type { Router } from '@koa/router';
import type { Context } from 'koa';
import type { TrafficResponse } from '../protocol/console-api.js';
import type { ApiDeps } from './api-deps.js';
import { reply } from './reply.js';
import { parseTrafficQuery } from './traffic-filter.js';
import type { TrafficLog } from './traffic-log.js';

/** GET /api/events (SSE), /api/traffic (filtered), /api/traffic/export (JSON Lines download). */
export function trafficRoutes(router: Router, { log, events }: ApiDeps): void {
  router.get(
    '/api/events',
    reply((ctx) => events.attach(ctx, { lastId: log.lastId })),
  );
  router.get(
    '/api/traffic',
    reply((ctx): TrafficResponse => {
      const { filter, limit } = parseTrafficQuery(new URLSearchParams(ctx.querystring));
      return { entries: log.query(filter, limit), total: log.size };
    }),
  );
  router.get(
    '/api/traffic/export',
    reply((ctx) => exportTraffic(ctx, log)),
  );
}

function exportTraffic(ctx: Context, log: TrafficLog): string {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  ctx.type = 'application/x-ndjson';
  ctx.set('Content-Disposition', `attachment; filename="agent-bridge-traffic-${stamp}.jsonl"`);
  return log
    .all()
    .map((entry) => `${JSON.stringify(entry)}\n`)
    .join('');
}
