import Router from '@koa/router';
import { parseWith } from '../../platform/http/request-body.ts';
import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import type { DeadLetterPageSchema, HistorySchema } from './responses.ts';
import { DeadLetterQuerySchema, encodeCursor, executionIdOf } from './schemas.ts';
import type { WebhookService } from './service.ts';
import { attemptView, deliveryView } from './views.ts';

/**
 * The operator's webhook API: delivery history and manual retry per execution
 * (/api/ui/v1/executions/{id}/webhook/...), and the dead-letter queue (/api/ui/v1/webhooks/...).
 */
export function webhooksRouter(deps: { service: WebhookService }): Router {
  const { service } = deps;
  const router = new Router();

  router.post('/api/ui/v1/executions/:execution_id/webhook/retry', async (ctx) => {
    const delivery = await service.retry(executionIdOf(ctx.params.execution_id));
    ctx.status = 202;
    ctx.body = deliveryView(delivery);
  });

  router.get('/api/ui/v1/executions/:execution_id/webhook/deliveries', async (ctx) => {
    const executionId = executionIdOf(ctx.params.execution_id);
    const found = await service.history(executionId);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      execution_id: executionId,
      deliveries: found.map(({ delivery, attempts }) => ({
        ...deliveryView(delivery),
        attempts: attempts.map(attemptView),
      })),
    } satisfies ResponseBody<typeof HistorySchema>;
  });

  router.get('/api/ui/v1/webhooks/dead-letters', async (ctx) => {
    const query = parseWith(DeadLetterQuerySchema, ctx.query, 'query');
    const page = await service.deadLetters({ limit: query.limit, after: query.cursor });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      dead_letters: page.items.map(deliveryView),
      next_cursor: page.next ? encodeCursor(page.next) : null,
    } satisfies ResponseBody<typeof DeadLetterPageSchema>;
  });

  return router;
}
