import Router from '@koa/router';
import type { Clock } from '../../platform/clock.ts';
import { parseWith, readJsonBody } from '../../platform/http/request-body.ts';
import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import type { ClearedSchema, DlqPageSchema } from './responses.ts';
import { CollectorSettingsBodySchema, DlqQuerySchema, RedriveBodySchema } from './schemas.ts';
import type { ObservabilityService } from './service.ts';
import { parkedView, redriveView, settingsView, statusView } from './views.ts';

/**
 * Bodies here are small (a URL of at most 2 KB, 20 headers of at most 1 KB, a secret, or 100 batch
 * ids): anything larger is refused with 413 before it is parsed.
 */
export const SETTINGS_BODY_LIMIT = 64 * 1024;

const PREFIX = '/api/v1/settings/observability-webhook';

/**
 * The observability forwarder's API: its settings (where events go), its status, the dead-letter
 * queue of batches the collector never took, and their redrive. Answers are never cached.
 */
export function observabilityRouter(deps: { service: ObservabilityService; clock: Clock }): Router {
  const { service } = deps;
  const router = new Router();
  router.use(async (ctx, next) => {
    await next();
    ctx.set('Cache-Control', 'no-store');
  });

  router.get(PREFIX, async (ctx) => {
    ctx.body = settingsView(await service.settings());
  });

  router.post(PREFIX, async (ctx) => {
    const body = parseWith(CollectorSettingsBodySchema, await readJsonBody(ctx, SETTINGS_BODY_LIMIT));
    ctx.body = settingsView(await service.update(body));
  });

  router.delete(PREFIX, async (ctx) => {
    await service.remove();
    ctx.status = 204;
  });

  router.get(`${PREFIX}/status`, async (ctx) => {
    ctx.body = statusView(await service.status(), deps.clock.now());
  });

  router.get(`${PREFIX}/dlq`, async (ctx) => {
    const query = parseWith(DlqQuerySchema, ctx.query, 'query');
    const page = await service.parked({ after: query.cursor, limit: query.limit });
    ctx.body = {
      batches: page.items.map(parkedView),
      next_cursor: page.next === undefined ? null : String(page.next),
      total_batches: page.totals.batches,
      total_events: page.totals.events,
    } satisfies ResponseBody<typeof DlqPageSchema>;
  });

  router.delete(`${PREFIX}/dlq`, async (ctx) => {
    const cleared = await service.clearParked();
    ctx.body = {
      cleared_batches: cleared.batches,
      cleared_events: cleared.events,
    } satisfies ResponseBody<typeof ClearedSchema>;
  });

  router.post(`${PREFIX}/redrive`, async (ctx) => {
    const raw = await readJsonBody(ctx, SETTINGS_BODY_LIMIT);
    const body = raw === undefined ? {} : parseWith(RedriveBodySchema, raw);
    ctx.body = redriveView(await service.redrive(body.batch_ids));
  });

  return router;
}
