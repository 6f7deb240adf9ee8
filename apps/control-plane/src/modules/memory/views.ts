import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import type { MemoryEntry } from './repository.ts';
import type { DeletedSchema, MemoryEntrySchema, WrittenSchema } from './responses.ts';
import type { ScopeRef } from './scopes.ts';
import type { VectorEntry, VectorHit } from './vector-repository.ts';
import type { StoredVectorSchema, VectorEntrySchema, VectorHitSchema } from './vector-responses.ts';
import type { StoredVector } from './vector-service.ts';

/** Where an entry lives, as every memory answer spells it. */
export function refView(entry: ScopeRef & { key: string }) {
  return { key: entry.key, scope: entry.scope, scope_id: entry.scopeId };
}

function times(entry: { createdAt: Date; updatedAt: Date }) {
  return { created_at: entry.createdAt.toISOString(), updated_at: entry.updatedAt.toISOString() };
}

/** A write as set answers it: where it went and when. */
export function writtenView(
  entry: ScopeRef & { key: string; createdAt: Date; updatedAt: Date },
): ResponseBody<typeof WrittenSchema> {
  return { ...refView(entry), ...times(entry) };
}

/** An entry as get and list answer it: the value, where it came from, and when it was written. */
export function entryView(entry: MemoryEntry): ResponseBody<typeof MemoryEntrySchema> {
  return { ...refView(entry), data: entry.data, ...times(entry) };
}

/** A delete of a value or a vector: where it looked, and whether something was there. */
export function deletedView(
  key: string,
  ref: ScopeRef,
  deleted: boolean,
): ResponseBody<typeof DeletedSchema> {
  return { ...refView({ key, ...ref }), deleted };
}

/** A stored vector as a store answers it. */
export function storedVectorView(stored: StoredVector): ResponseBody<typeof StoredVectorSchema> {
  return { ...refView(stored), dimensions: stored.dimensions, ...times(stored) };
}

/** A vector as a get answers it. */
export function vectorView(entry: VectorEntry): ResponseBody<typeof VectorEntrySchema> {
  return {
    key: entry.key,
    embedding: entry.embedding,
    metadata: entry.metadata,
    dimensions: entry.dimensions,
    scope: entry.scope,
    scope_id: entry.scopeId,
    ...times(entry),
  };
}

/** One search result. */
export function hitView(hit: VectorHit): ResponseBody<typeof VectorHitSchema> {
  return { key: hit.key, score: hit.score, metadata: hit.metadata, scope: hit.scope, scope_id: hit.scopeId };
}
