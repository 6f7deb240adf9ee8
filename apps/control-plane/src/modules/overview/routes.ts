import Router from '@koa/router';
import type { Database } from '@switchyard/shared/db';
import type { Clock } from '../../platform/clock.ts';
import { readOverview } from './queries.ts';

/** GET /api/ui/v1/overview: the fleet at a glance for the dashboard, from the database. */
export function overviewRouter(deps: {
  db: Database;
  clock: Clock;
  /** Whether the connector API is on now (a token is configured). */
  connectorEnabled: () => boolean;
}): Router {
  const router = new Router();
  router.get('/api/ui/v1/overview', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await readOverview(deps.db, new Date(deps.clock.now()), {
      connectorEnabled: deps.connectorEnabled(),
    });
  });
  return router;
}
