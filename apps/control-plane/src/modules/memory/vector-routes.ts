import Router from '@koa/router';
import type { Context } from 'koa';
import { parseJsonBody, parseWith } from '../../platform/http/request-body.ts';
import { scopeRequest } from './routes.ts';
import type { VectorEntry, VectorHit } from './vector-repository.ts';
import { vectorSchemas } from './vector-schemas.ts';
import type { StoredVector, VectorService } from './vector-service.ts';

export interface VectorMemoryRouterDeps {
  service: VectorService;
  /** memory.max_vector_dimensions: longer embeddings are refused while parsing (400). */
  maxVectorDimensions: number;
}

function storedView(stored: StoredVector) {
  return {
    key: stored.key,
    scope: stored.scope,
    scope_id: stored.scopeId,
    dimensions: stored.dimensions,
    created_at: stored.createdAt.toISOString(),
    updated_at: stored.updatedAt.toISOString(),
  };
}

function entryView(entry: VectorEntry) {
  return {
    key: entry.key,
    embedding: entry.embedding,
    metadata: entry.metadata,
    dimensions: entry.dimensions,
    scope: entry.scope,
    scope_id: entry.scopeId,
    created_at: entry.createdAt.toISOString(),
    updated_at: entry.updatedAt.toISOString(),
  };
}

function hitView(hit: VectorHit) {
  return { key: hit.key, score: hit.score, metadata: hit.metadata, scope: hit.scope, scope_id: hit.scopeId };
}

/**
 * Vector memory (spec §4): store, read, delete and search embeddings, with the older paths agent
 * SDKs use for writes (`/vector/set`, `/vector/delete`, wire notes). Answers are never cached.
 */
export function vectorMemoryRouter(deps: VectorMemoryRouterDeps): Router {
  const { service } = deps;
  const schemas = vectorSchemas(deps.maxVectorDimensions);
  const router = new Router();

  const store = async (ctx: Context) => {
    const body = await parseJsonBody(ctx, schemas.StoreBodySchema);
    const stored = await service.store(scopeRequest(ctx, body), body);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = storedView(stored);
  };
  router.post('/api/v1/memory/vector', store);
  router.post('/api/v1/memory/vector/set', store);

  router.post('/api/v1/memory/vector/search', async (ctx) => {
    const body = await parseJsonBody(ctx, schemas.SearchBodySchema);
    const hits = await service.search(scopeRequest(ctx, body), body);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { results: hits.map(hitView) };
  });

  router.post('/api/v1/memory/vector/delete', async (ctx) => {
    const body = await parseJsonBody(ctx, schemas.DeleteBodySchema);
    const { ref, deleted } = await service.delete(scopeRequest(ctx, body), body.key);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { key: body.key, scope: ref.scope, scope_id: ref.scopeId, deleted };
  });

  router.get('/api/v1/memory/vector/:key', async (ctx) => {
    const { key } = parseWith(schemas.KeyPathSchema, ctx.params, 'path');
    const query = parseWith(schemas.KeyQuerySchema, ctx.query, 'query');
    const entry = await service.get(scopeRequest(ctx, query), key);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = entryView(entry);
  });

  router.delete('/api/v1/memory/vector/:key', async (ctx) => {
    const { key } = parseWith(schemas.KeyPathSchema, ctx.params, 'path');
    const query = parseWith(schemas.KeyQuerySchema, ctx.query, 'query');
    const { ref, deleted } = await service.delete(scopeRequest(ctx, query), key);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { key, scope: ref.scope, scope_id: ref.scopeId, deleted };
  });

  return router;
}
