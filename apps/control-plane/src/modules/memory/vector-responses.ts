import { z } from 'zod';
import { SCOPES } from './scopes.ts';

/*
 * What vector memory answers: the shapes views.ts builds, as the OpenAPI document describes them.
 */

const Timestamp = z.iso.datetime();

const ScopeOut = z.enum(SCOPES);

export const StoredVectorSchema = z
  .looseObject({
    key: z.string(),
    scope: ScopeOut.meta({ description: 'The scope written to.' }),
    scope_id: z.string().meta({ description: 'Its id (`global` for the global scope).' }),
    dimensions: z.int().min(1).meta({ description: 'How many numbers the embedding has.' }),
    created_at: Timestamp.meta({ description: 'When the key was first written in this scope.' }),
    updated_at: Timestamp.meta({ description: 'When this write happened.' }),
  })
  .meta({ id: 'VectorWrite' });

export const VectorEntrySchema = z
  .looseObject({
    key: z.string(),
    embedding: z.array(z.number()).meta({
      description: 'The numbers as stored: float4, so a number may come back rounded (0.1 stays 0.1).',
    }),
    metadata: z.record(z.string(), z.unknown()),
    dimensions: z.int().min(1),
    scope: ScopeOut.meta({ description: 'The scope the vector came from.' }),
    scope_id: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'VectorEntry', description: 'A stored vector with its metadata.' });

export const VectorDeletedSchema = z
  .looseObject({
    key: z.string(),
    scope: ScopeOut,
    scope_id: z.string(),
    deleted: z.boolean().meta({ description: 'False when there was no vector (not an error).' }),
  })
  .meta({ id: 'VectorDelete' });

export const VectorHitSchema = z
  .looseObject({
    key: z.string(),
    score: z.number().min(-1).max(1).meta({ description: 'Cosine similarity to the query, -1 to 1.' }),
    metadata: z.record(z.string(), z.unknown()),
    scope: ScopeOut,
    scope_id: z.string(),
  })
  .meta({ id: 'VectorSearchHit' });

export const VectorResultsSchema = z.looseObject({ results: z.array(VectorHitSchema) }).meta({
  id: 'VectorSearchResults',
  description: 'The answer by default (`memory.vector_search_response: results`).',
});

export const VectorHitListSchema = z.array(VectorHitSchema).meta({
  id: 'VectorSearchHitList',
  description:
    'The answer with `memory.vector_search_response: array`: the same results, bare, as the agent SDKs expect.',
});

/** One shape per server, chosen by memory.vector_search_response: never both in one deployment. */
export const VectorSearchAnswerSchema = z.xor([VectorResultsSchema, VectorHitListSchema]);
