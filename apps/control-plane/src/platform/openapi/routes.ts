import Router from '@koa/router';
import type { oas31 } from 'zod-openapi';
import { OPENAPI_PATH } from './document.ts';

/**
 * GET /api/v1/openapi.json: the control plane's OpenAPI 3.1 document. It is built on the first
 * request (generation walks every schema once) and then served as the same bytes; it needs no API
 * key, like the health report, so tools can read what the server offers before they have a key.
 */
export function openApiRouter(deps: { document: () => oas31.OpenAPIObject }): Router {
  let text: string | undefined;
  const router = new Router();
  router.get(OPENAPI_PATH, (ctx) => {
    text ??= JSON.stringify(deps.document());
    ctx.type = 'application/json; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = text;
  });
  return router;
}
