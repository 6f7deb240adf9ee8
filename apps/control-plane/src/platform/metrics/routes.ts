import Router from '@koa/router';
import type { Registry } from 'prom-client';

/** GET /metrics: every metric of the registry in the Prometheus text exposition format. */
export function metricsRouter(deps: { registry: Registry }): Router {
  const router = new Router();
  router.get('/metrics', async (ctx) => {
    ctx.body = await deps.registry.metrics();
    ctx.set('Content-Type', deps.registry.contentType);
    ctx.set('Cache-Control', 'no-store');
  });
  return router;
}
