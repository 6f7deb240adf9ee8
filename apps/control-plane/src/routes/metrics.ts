import Router from '@koa/router';
import { EXPOSITION_CONTENT_TYPE } from '../metrics/registry.ts';
import type { ServiceMetrics } from '../metrics/service-metrics.ts';

/** GET /metrics: every service_* metric in the Prometheus text exposition format 0.0.4. */
export function metricsRouter(deps: { metrics: ServiceMetrics }): Router {
  const router = new Router();
  router.get('/metrics', (ctx) => {
    ctx.body = deps.metrics.registry.render();
    ctx.set('Content-Type', EXPOSITION_CONTENT_TYPE);
    ctx.set('Cache-Control', 'no-store');
  });
  return router;
}
