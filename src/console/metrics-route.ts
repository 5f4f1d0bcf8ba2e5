import type { Context, Next } from 'koa';
import type { BridgeMetrics } from '../metrics/metrics.js';
import { ConsoleError } from './errors.js';

export const METRICS_PATH = '/metrics';

export interface MetricsRouteOptions {
  /** Built at the first scrape that passes the token check (the metrics switch on then). */
  metrics: () => Promise<BridgeMetrics>;
  /** The console token check (auth.ts), as for /api. */
  requireToken: (ctx: Context, next: Next) => Promise<void>;
  /** The `metricsNoAuth` setting, read per request; only the machine's operator sets it (flag or file). */
  noAuth: () => boolean;
}

/**
 * GET /metrics in Prometheus's text format, behind the console token unless `metricsNoAuth` is on. Either
 * way it is on the console's loopback listener only, behind its Host and Origin checks (DNS rebinding):
 * never on the agent port, so never through the tunnel.
 */
export function metricsRoute(options: MetricsRouteOptions) {
  const serve = async (ctx: Context): Promise<void> => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new ConsoleError(405, `Use GET for ${METRICS_PATH}.`, undefined, undefined, {
        Allow: 'GET, HEAD',
      });
    }
    const metrics = await options.metrics();
    const text = await metrics.text();
    ctx.set('Cache-Control', 'no-store');
    ctx.type = metrics.contentType;
    ctx.body = text;
  };
  return (ctx: Context): Promise<void> =>
    options.noAuth() ? serve(ctx) : options.requireToken(ctx, () => serve(ctx));
}
