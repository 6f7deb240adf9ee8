import Router from '@koa/router';
import { parseWith, readJsonBody } from '../../platform/http/request-body.ts';
import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import { WorkflowPathSchema } from '../executions/index.ts';
import type { PublishedSchema } from './responses.ts';
import { BundleQuerySchema, SHARE_BODY_LIMIT, ShareBodySchema } from './schemas.ts';
import type { ShareService } from './service.ts';

/** Inputs and outputs are withheld unless the caller asks for them: a share is public. */
const REDACT_BY_DEFAULT = true;

/**
 * The dashboard's sharing routes (under /api/ui/v1, behind the API key): the run bundle of a
 * workflow, and publishing it to the docs site. The dashboard's CSP lets it talk to its own
 * origin only, so the control plane posts to the docs site for it.
 */
export function sharesRouter(deps: { service: ShareService }): Router {
  const router = new Router();
  const workflowOf = (params: Record<string, string | undefined>) =>
    parseWith(WorkflowPathSchema, { workflow_id: String(params.workflow_id) }, 'workflow id').workflow_id;

  router.get('/api/ui/v1/workflows/:workflow_id/bundle', async (ctx) => {
    const workflowId = workflowOf(ctx.params);
    const query = parseWith(BundleQuerySchema, ctx.query, 'query');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await deps.service.bundle(workflowId, {
      redact: query.redact === undefined ? REDACT_BY_DEFAULT : query.redact === 'true',
      title: query.title,
    });
  });

  router.post('/api/ui/v1/workflows/:workflow_id/share', async (ctx) => {
    const workflowId = workflowOf(ctx.params);
    // An empty body reads as undefined and is refused: the body is a JSON object, `{}` for the
    // defaults, so a client that lost its body is told rather than publishing with defaults.
    const body = parseWith(ShareBodySchema, await readJsonBody(ctx, SHARE_BODY_LIMIT));
    const published = await deps.service.share(workflowId, {
      redact: body.redact ?? REDACT_BY_DEFAULT,
      title: body.title,
    });
    ctx.status = 201;
    ctx.set('Location', published.url);
    ctx.body = { id: published.id, url: published.url } satisfies ResponseBody<typeof PublishedSchema>;
  });

  return router;
}
