import { fieldPath, ProblemError } from '@switchyard/shared';
import type { Knex } from 'knex';
import type { Clock } from '../../platform/clock.ts';
import type { ValuesOf } from '../../platform/config/setting.ts';
import { findInfinite, findUnstorable } from '../../platform/json-storable.ts';
import type { Logger } from '../../platform/logger.ts';
import type { MemoryMetrics } from './metrics.ts';
import { refusedPastQuota } from './scope-quota.ts';
import {
  notFoundIn,
  readScopes,
  requireReadScopes,
  type ScopeRef,
  type ScopeRequest,
  writeScope,
} from './scopes.ts';
import type { memorySettings } from './settings.ts';
import {
  deleteVector,
  encodeEmbedding,
  findVector,
  lockScope,
  otherDimension,
  upsertVector,
  type VectorEntry,
  type VectorHit,
} from './vector-repository.ts';
import { MAX_METADATA_BYTES } from './vector-schemas.ts';
import { createVectorSearch } from './vector-search.ts';

export interface VectorServiceDeps {
  db: Knex;
  clock: Clock;
  metrics: MemoryMetrics;
  settings: Pick<
    ValuesOf<typeof memorySettings>,
    'vectorSearch' | 'vectorEfSearch' | 'scopeMaxEntries' | 'scopeMaxBytes'
  >;
  log: Logger;
}

/** What a store wrote: where, how many dimensions, when. */
export interface StoredVector extends ScopeRef {
  key: string;
  dimensions: number;
  createdAt: Date;
  updatedAt: Date;
}

/** A search, its embedding already parsed (float4-rounded, not all zero). */
export interface VectorSearchRequest {
  embedding: number[];
  topK: number;
  threshold?: number;
  filters?: Record<string, unknown>;
}

/**
 * A JSON object as jsonb text, refused when the database cannot keep a string of it or it holds a
 * number JSON.stringify would write as null.
 */
function jsonText(field: string, value: Record<string, unknown>): string {
  const unstorable = findUnstorable(value);
  if (unstorable) {
    const where = fieldPath([field, ...unstorable]);
    throw new ProblemError(
      'invalid_request',
      `${where} holds text the database cannot store (a NUL character or a lone UTF-16 surrogate).`,
      { extensions: { errors: [{ field: where, message: 'contains U+0000 or a lone surrogate' }] } },
    );
  }
  const infinite = findInfinite(value);
  if (infinite) {
    const where = fieldPath([field, ...infinite]);
    throw new ProblemError(
      'invalid_request',
      `${where} is a number beyond double precision (about ±1.8e308): it would be stored as null.`,
      { extensions: { errors: [{ field: where, message: 'is beyond ±1.8e308' }] } },
    );
  }
  return JSON.stringify(value);
}

/**
 * Vector memory: embeddings with metadata under keys, in the same scopes as key-value memory, and
 * cosine-similarity search over them. Vector writes are not memory-change events: those streams
 * describe key-value memory.
 */
export function createVectorService(deps: VectorServiceDeps) {
  const { db, clock, metrics } = deps;
  const engines = createVectorSearch({ db, settings: deps.settings, log: deps.log });
  const count = (type: string, scope: string) => metrics.operationsTotal.inc({ type, scope });
  const quota = { maxEntries: deps.settings.scopeMaxEntries, maxBytes: deps.settings.scopeMaxBytes };

  return {
    /** The engine searches use: `pgvector` or `exact` (setting and database decide). */
    engine: engines.engine,

    /**
     * Stores `embedding` and `metadata` under `key` in the write scope, replacing what the key
     * held. One scope instance holds vectors of one dimension: a vector of another dimension than
     * the scope's other keys is a 409 conflict (replacing a key's only vector with another
     * dimension is fine). Writers of one scope instance are serialised by an advisory lock held
     * until commit, so two replicas storing different dimensions into an empty scope cannot both
     * succeed. A vector that would take the scope past its quota (keys and vectors count
     * together) answers 409 quota_exceeded.
     */
    async store(
      request: ScopeRequest,
      vector: { key: string; embedding: number[]; metadata?: Record<string, unknown> },
    ): Promise<StoredVector> {
      const ref = writeScope(request);
      const metadata = jsonText('metadata', vector.metadata ?? {});
      const bytes = Buffer.byteLength(metadata);
      if (bytes > MAX_METADATA_BYTES) {
        throw new ProblemError(
          'payload_too_large',
          `The metadata is ${bytes} bytes as JSON; vector metadata is limited to ${MAX_METADATA_BYTES} bytes.`,
        );
      }
      const embedding = encodeEmbedding(vector.embedding);
      const { dimensions } = embedding;
      const written = await refusedPastQuota(
        db.transaction(async (trx) => {
          await lockScope(trx, ref, quota);
          const other = await otherDimension(trx, ref, vector.key, dimensions);
          if (other !== undefined) {
            throw new ProblemError(
              'conflict',
              `The ${ref.scope} scope "${ref.scopeId}" holds vectors of ${other} dimensions; this one has ${dimensions}. One scope holds vectors of one dimension: use another scope, or delete its vectors first.`,
            );
          }
          return upsertVector(trx, { ref, key: vector.key, embedding, metadata, at: new Date(clock.now()) });
        }),
      );
      await engines.ensureIndex(dimensions);
      count('vector_set', ref.scope);
      return { ...ref, key: vector.key, dimensions, ...written };
    },

    /**
     * The vector of `key` in the first scope that has one (workflow, session, actor, global), or
     * in the named scope only. Missing → 404 not_found.
     */
    async get(request: ScopeRequest, key: string): Promise<VectorEntry> {
      const refs = readScopes(request);
      const entry = await findVector(db, refs, key);
      count('vector_get', entry?.scope ?? 'none');
      if (entry) return entry;
      throw notFoundIn('vector', key, request, refs);
    },

    /** Removes the vector of `key` from the write scope; says whether there was one. */
    async delete(request: ScopeRequest, key: string): Promise<{ ref: ScopeRef; deleted: boolean }> {
      const ref = writeScope(request);
      const deleted = await deleteVector(db, ref, key);
      count('vector_delete', ref.scope);
      return { ref, deleted };
    },

    /**
     * The stored vectors most similar to the query (cosine similarity), among those of its
     * dimension in the named scope, or in every scope the headers name plus global. Best first;
     * equal scores in scope precedence, then key order. Below `threshold`: dropped.
     */
    async search(request: ScopeRequest, search: VectorSearchRequest): Promise<VectorHit[]> {
      const refs = requireReadScopes(request);
      const filters = search.filters === undefined ? undefined : jsonText('filters', search.filters);
      const hits = await engines.search({
        query: encodeEmbedding(search.embedding),
        refs,
        filters,
        topK: search.topK,
      });
      count('vector_search', refs.length === 1 ? (refs[0] as ScopeRef).scope : 'any');
      const { threshold } = search;
      return threshold === undefined ? hits : hits.filter((hit) => hit.score >= threshold);
    },
  };
}

export type VectorService = ReturnType<typeof createVectorService>;
