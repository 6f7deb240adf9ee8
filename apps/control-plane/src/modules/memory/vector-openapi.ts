import type { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import { DEFAULT_BODY_LIMIT } from '../../platform/http/request-body.ts';
import { jsonBodyProblems, type ProblemCase, problemResponses } from '../../platform/openapi/problem.ts';
import { MemoryScopeHeaders } from './openapi.ts';
import { quotaExceededCase } from './scope-quota.ts';
import { memorySettings } from './settings.ts';
import {
  StoredVectorSchema,
  VectorDeletedSchema,
  VectorEntrySchema,
  VectorSearchAnswerSchema,
} from './vector-responses.ts';
import { DEFAULT_TOP_K, MAX_METADATA_BYTES, MAX_TOP_K, vectorSchemas } from './vector-schemas.ts';
import { EXACT_BELOW, HNSW_MAX_DIMENSIONS } from './vector-search.ts';

/*
 * Vector memory as vector-routes.ts serves it. Requests are the schemas the routes parse with, at
 * the default dimension limit (the running server's limit is memory.max_vector_dimensions).
 */

const MAX_DIMENSIONS = memorySettings.maxVectorDimensions.schema.parse(
  memorySettings.maxVectorDimensions.default,
);
const schemas = vectorSchemas(MAX_DIMENSIONS);

// ---- examples ----

const embedding = [0.12, -0.48, 0.33, 0.91];
const metadata = { title: 'Q3 report', content: 'Revenue grew 12 %.', source: 'finance' };
const hit = { key: 'doc-42', score: 0.9731, metadata, scope: 'workflow', scope_id: 'wf_9' };
const stored = {
  key: 'doc-42',
  scope: 'workflow',
  scope_id: 'wf_9',
  dimensions: 4,
  created_at: '2026-11-22T06:00:12.031Z',
  updated_at: '2026-11-22T06:01:00.250Z',
};

function json(schema: z.ZodType, example: unknown) {
  return { content: { 'application/json': { schema, example } } };
}

function body(schema: z.ZodType, examples: Record<string, { summary: string; value: unknown }>) {
  return { required: true, content: { 'application/json': { schema, examples } } };
}

const badField = (detail: string, field: string, message: string): ProblemCase => ({
  code: 'invalid_request',
  when: 'A field is invalid: a key over 255 characters or with control characters, an embedding that is not 1 to max dimensions finite float4 numbers or is all zeros or has a length (square root of the sum of squares) outside 1e-15 to 1e15, metadata or filters that are not an object or hold a NUL character or a number beyond double precision, an unknown scope, a named scope without its id, a context header that is not printable ASCII.',
  detail,
  extensions: { errors: [{ field, message }] },
});

const badEmbedding = badField(
  'The body is invalid: embedding[2]: must be a finite number a float4 can hold (|x| ≤ 3.4028235e38); got "NaN"',
  'embedding[2]',
  'must be a finite number a float4 can hold (|x| ≤ 3.4028235e38); got "NaN"',
);

const scopeText =
  'Without `scope`, the write goes to the most specific scope the headers name (workflow, then session, then actor), else global. A named scope takes its id from `scope_id` or its header; without either the write is refused (400).';

function storeOperation(operationId: string, path: string, extra: string): ZodOpenApiOperationObject {
  return {
    operationId,
    tags: ['Memory'],
    summary: 'Store a vector',
    description: `Stores \`embedding\` and \`metadata\` under \`key\`, replacing what the key held. ${scopeText} One scope instance holds vectors of one dimension: storing another dimension than its other keys have is a 409 (replacing a key's only vector with another dimension is allowed). Vector writes emit no memory-change events.${extra}`,
    requestParams: { header: MemoryScopeHeaders },
    requestBody: body(schemas.StoreBodySchema, {
      store: { summary: 'A vector with metadata', value: { key: 'doc-42', embedding, metadata } },
    }),
    responses: {
      '200': { description: 'Stored.', ...json(StoredVectorSchema, stored) },
      ...problemResponses(path, [
        ...jsonBodyProblems(DEFAULT_BODY_LIMIT, badEmbedding),
        {
          code: 'conflict',
          when: 'The scope instance holds vectors of another dimension under other keys.',
          detail:
            'The workflow scope "wf_9" holds vectors of 384 dimensions; this one has 4. One scope holds vectors of one dimension: use another scope, or delete its vectors first.',
        },
        quotaExceededCase,
        {
          code: 'payload_too_large',
          when: `The metadata is over ${MAX_METADATA_BYTES} bytes as JSON.`,
          detail: `The metadata is 70001 bytes as JSON; vector metadata is limited to ${MAX_METADATA_BYTES} bytes.`,
        },
      ]),
    },
  };
}

const keyPath = (operation: string) =>
  badField(
    `The path is invalid: key: must not contain control characters`,
    'key',
    `must not contain control characters (${operation})`,
  );

export const vectorMemoryOpenApi: ZodOpenApiPathsObject = {
  '/api/v1/memory/vector': {
    post: storeOperation('storeVector', '/api/v1/memory/vector', ''),
  },
  '/api/v1/memory/vector/set': {
    post: storeOperation(
      'storeVectorSet',
      '/api/v1/memory/vector/set',
      ' The path agent SDKs use; the same operation as `POST /api/v1/memory/vector`.',
    ),
  },
  '/api/v1/memory/vector/{key}': {
    get: {
      operationId: 'getVector',
      tags: ['Memory'],
      summary: 'Read a vector',
      description:
        'Without `scope`, looks in the workflow, session and actor scopes the headers name, in that order, then in global, and answers the first hit; the answer says which scope it came from. With `scope`, looks only there.',
      requestParams: {
        path: schemas.KeyPathSchema,
        query: schemas.KeyQuerySchema,
        header: MemoryScopeHeaders,
      },
      responses: {
        '200': {
          description: 'The vector.',
          ...json(VectorEntrySchema, { ...stored, embedding, metadata, updated_at: stored.created_at }),
        },
        ...problemResponses('/api/v1/memory/vector/doc-42', [
          keyPath('or a bad scope, scope_id or context header'),
          {
            code: 'not_found',
            when: 'No vector has this key in the scopes searched, or the named scope has no id in this request.',
            detail: 'No vector "doc-42" in the workflow and global scopes.',
          },
        ]),
      },
    },
    delete: {
      operationId: 'deleteVector',
      tags: ['Memory'],
      summary: 'Delete a vector',
      description: `Removes the vector of \`key\` from one scope. ${scopeText} Deleting a missing vector is not an error.`,
      requestParams: {
        path: schemas.KeyPathSchema,
        query: schemas.KeyQuerySchema,
        header: MemoryScopeHeaders,
      },
      responses: {
        '200': {
          description: 'Deleted, or there was nothing to delete.',
          ...json(VectorDeletedSchema, { key: 'doc-42', scope: 'workflow', scope_id: 'wf_9', deleted: true }),
        },
        ...problemResponses('/api/v1/memory/vector/doc-42', [
          keyPath('or a bad scope, scope_id or context header'),
        ]),
      },
    },
  },
  '/api/v1/memory/vector/delete': {
    post: {
      operationId: 'deleteVectorByBody',
      tags: ['Memory'],
      summary: 'Delete a vector (the path agent SDKs use)',
      description: `The same as \`DELETE /api/v1/memory/vector/{key}\`, with the key and scope in the body. ${scopeText}`,
      requestParams: { header: MemoryScopeHeaders },
      requestBody: body(schemas.DeleteBodySchema, {
        delete: { summary: 'One key', value: { key: 'doc-42', scope: 'workflow' } },
      }),
      responses: {
        '200': {
          description: 'Deleted, or there was nothing to delete.',
          ...json(VectorDeletedSchema, {
            key: 'doc-42',
            scope: 'workflow',
            scope_id: 'wf_9',
            deleted: false,
          }),
        },
        ...problemResponses(
          '/api/v1/memory/vector/delete',
          jsonBodyProblems(
            DEFAULT_BODY_LIMIT,
            badField(
              'The body is invalid: key: Too big: expected string to have <=255 characters',
              'key',
              'Too big: expected string to have <=255 characters',
            ),
          ),
        ),
      },
    },
  },
  '/api/v1/memory/vector/search': {
    post: {
      operationId: 'searchVectors',
      tags: ['Memory'],
      summary: 'Find the most similar vectors',
      description: `Cosine similarity between the query and the stored vectors of its dimension, best first; equal scores in scope precedence (workflow, session, actor, global), then key order. Without \`scope\`, searches every scope the headers name plus global, merged by score; with \`scope\`, that scope only. Two name sets are accepted, one per request: \`query_embedding\`, \`top_k\`, \`threshold\` (agent SDKs) or \`embedding\`, \`limit\`, \`min_score\`; \`top_k\` is 1 to ${MAX_TOP_K} (default ${DEFAULT_TOP_K}). Where the database has pgvector (\`memory.vector_search\` \`auto\`), searches of up to ${HNSW_MAX_DIMENSIONS} dimensions among ${EXACT_BELOW} or more candidates (stored vectors of the query's dimension in the searched scopes that match the filters) walk an HNSW index (approximate, \`memory.vector_ef_search\` candidates kept); otherwise, and always with \`exact\`, every candidate is compared. Scores are computed exactly either way. The answer is \`{ results: [...] }\`, or with the setting \`memory.vector_search_response: array\` the bare array of the same results, which agents built with the platform's SDKs expect.`,
      requestParams: { header: MemoryScopeHeaders },
      requestBody: body(schemas.SearchBodySchema, {
        sdk: {
          summary: 'As agent SDKs send it',
          value: { query_embedding: embedding, top_k: 5 },
        },
        other: {
          summary: 'The other name set, with a filter',
          value: { embedding, limit: 5, min_score: 0.5, filters: { source: 'finance' } },
        },
      }),
      responses: {
        '200': {
          description:
            'The results, best first (fewer than asked when fewer match): `{ results: [...] }`, or the bare array of the same results when the server runs with `memory.vector_search_response: array`.',
          content: {
            'application/json': {
              schema: VectorSearchAnswerSchema,
              examples: {
                results: { summary: 'By default (`results`)', value: { results: [hit] } },
                array: { summary: 'With `memory.vector_search_response: array`', value: [hit] },
              },
            },
          },
        },
        ...problemResponses(
          '/api/v1/memory/vector/search',
          jsonBodyProblems(
            DEFAULT_BODY_LIMIT,
            badField(
              'The body is invalid: limit: mixes the two name sets (query_embedding given too): send query_embedding, top_k and threshold, or embedding, limit and min_score',
              'limit',
              'mixes the two name sets (query_embedding given too): send query_embedding, top_k and threshold, or embedding, limit and min_score',
            ),
          ),
        ),
      },
    },
  },
};
