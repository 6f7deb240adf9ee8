import Router from '@koa/router';
import type { HealthService } from './service.ts';

/** GET /api/v1/health: the health report; 503 when a check fails so load balancers notice. */
export function healthRouter(deps: { health: HealthService }): Router {
  const router = new Router();
  router.get('/api/v1/health', async (ctx) => {
    const report = await deps.health.report();
    ctx.status = report.status === 'healthy' ? 200 : 503;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = report;
  });
  return router;
}
