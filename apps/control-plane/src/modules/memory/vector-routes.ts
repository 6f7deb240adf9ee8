import Router from '@koa/router';
import type { Context } from 'koa';
import type { ValuesOf } from '../../platform/config/setting.ts';
import { parseJsonBody, parseWith } from '../../platform/http/request-body.ts';
import { scopeRequest } from './routes.ts';
import type { memorySettings } from './settings.ts';
import { vectorSchemas } from './vector-schemas.ts';
import type { VectorService } from './vector-service.ts';
import { deletedView, hitView, storedVectorView, vectorView } from './views.ts';

export interface VectorMemoryRouterDeps {
  service: VectorService;
  /** memory.max_vector_dimensions: longer embeddings are refused while parsing (400). */
  maxVectorDimensions: number;
  /**
   * memory.vector_search_response: `results` answers `{ results }`; `array` answers the bare array
   * that agents built with the platform's SDKs read (their `searchVector()` returns the body).
   */
  searchResponse: ValuesOf<typeof memorySettings>['vectorSearchResponse'];
}

/**
 * Vector memory: store, read, delete and search embeddings, with the older paths agent
 * SDKs use for writes (`/vector/set`, `/vector/delete`). Answers are never cached.
 */
export function vectorMemoryRouter(deps: VectorMemoryRouterDeps): Router {
  const { service } = deps;
  const schemas = vectorSchemas(deps.maxVectorDimensions);
  const router = new Router();

  const store = async (ctx: Context) => {
    const body = await parseJsonBody(ctx, schemas.StoreBodySchema);
    const stored = await service.store(scopeRequest(ctx, body), body);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = storedVectorView(stored);
  };
  router.post('/api/v1/memory/vector', store);
  router.post('/api/v1/memory/vector/set', store);

  router.post('/api/v1/memory/vector/search', async (ctx) => {
    const body = await parseJsonBody(ctx, schemas.SearchBodySchema);
    const hits = await service.search(scopeRequest(ctx, body), body);
    ctx.set('Cache-Control', 'no-store');
    const results = hits.map(hitView);
    ctx.body = deps.searchResponse === 'array' ? results : { results };
  });

  router.post('/api/v1/memory/vector/delete', async (ctx) => {
    const body = await parseJsonBody(ctx, schemas.DeleteBodySchema);
    const { ref, deleted } = await service.delete(scopeRequest(ctx, body), body.key);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = deletedView(body.key, ref, deleted);
  });

  router.get('/api/v1/memory/vector/:key', async (ctx) => {
    const { key } = parseWith(schemas.KeyPathSchema, ctx.params, 'path');
    const query = parseWith(schemas.KeyQuerySchema, ctx.query, 'query');
    const entry = await service.get(scopeRequest(ctx, query), key);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = vectorView(entry);
  });

  router.delete('/api/v1/memory/vector/:key', async (ctx) => {
    const { key } = parseWith(schemas.KeyPathSchema, ctx.params, 'path');
    const query = parseWith(schemas.KeyQuerySchema, ctx.query, 'query');
    const { ref, deleted } = await service.delete(scopeRequest(ctx, query), key);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = deletedView(key, ref, deleted);
  });

  return router;
}
