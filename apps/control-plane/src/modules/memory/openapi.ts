import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { DEFAULT_BODY_LIMIT } from '../../platform/http/request-body.ts';
import { type ProblemCase, problemResponses } from '../../platform/openapi/problem.ts';
import { DeletedSchema, MemoryEntryListSchema, MemoryEntrySchema, WrittenSchema } from './responses.ts';
import { KeyBodySchema, LIST_PAGE_SIZE, ListQuerySchema, SetBodySchema } from './schemas.ts';
import { quotaExceededCase } from './scope-quota.ts';

/*
 * Key-value memory as routes.ts serves it; the request schemas are the ones the routes parse
 * with. Vector memory and the memory event streams document themselves in their own files.
 */

const contextHeader = (description: string) => z.string().min(1).max(256).optional().meta({ description });

/** The headers that select memory scopes; scopes.ts resolves them. */
export const MemoryScopeHeaders = z.object({
  'X-Workflow-ID': contextHeader('Names the workflow scope: the most specific of the four.'),
  'X-Session-ID': contextHeader('Names the session scope.'),
  'X-Actor-ID': contextHeader('Names the actor scope.'),
});

const entry = {
  key: 'draft',
  data: { subject: 'Q3 report', words: 412 },
  scope: 'workflow',
  scope_id: 'wf_9',
  created_at: '2026-11-22T06:00:12.031Z',
  updated_at: '2026-11-22T06:01:00.250Z',
};

const { data: _value, ...written } = entry;

function json(schema: z.ZodType, example: unknown) {
  return { content: { 'application/json': { schema, example } } };
}

function body(schema: z.ZodType, example: unknown) {
  return { required: true, content: { 'application/json': { schema, example } } };
}

const badBody: ProblemCase = {
  code: 'invalid_request',
  when: 'The body is missing, not JSON, nested too deep, or a field is invalid (a key over 255 characters or with control characters, text the database cannot store or a number beyond double precision (`1e400`) in `data`, an unknown scope, a named scope without its id, a context header that is not printable ASCII).',
  detail: 'The body is invalid: key: must not contain control characters',
  extensions: { errors: [{ field: 'key', message: 'must not contain control characters' }] },
};

const tooLarge = (what: string): ProblemCase => ({
  code: 'payload_too_large',
  when: what,
  detail:
    'The value is 1048577 bytes as JSON; memory values are limited to 1048576 bytes (memory.max_value_bytes).',
});

/** get and delete read their small body with the platform's default limit. */
const keyBodyTooLarge: ProblemCase = {
  code: 'payload_too_large',
  when: `The body is over ${DEFAULT_BODY_LIMIT} bytes (by Content-Length, or as counted for a chunked body).`,
  detail: `The body exceeds the limit of ${DEFAULT_BODY_LIMIT} bytes.`,
};

const scopeText =
  'Without `scope`, a write goes to the most specific scope the headers name (workflow, then session, then actor), else global. A named scope takes its id from `scope_id` or its header; without either a write is refused (400).';

export const memoryOpenApi: ZodOpenApiPathsObject = {
  '/api/v1/memory/set': {
    post: {
      operationId: 'setMemory',
      tags: ['Memory'],
      summary: 'Write a memory value',
      description: `Stores any JSON value under \`key\`, replacing the previous value atomically (concurrent writers: the last write wins, none is lost half-way). ${scopeText} Every write emits a \`memory_change\` event on the memory streams.`,
      requestParams: { header: MemoryScopeHeaders },
      requestBody: body(SetBodySchema, { key: 'draft', data: { subject: 'Q3 report', words: 412 } }),
      responses: {
        '200': { description: 'Written.', ...json(WrittenSchema, written) },
        ...problemResponses('/api/v1/memory/set', [
          badBody,
          quotaExceededCase,
          tooLarge(
            'The value is larger than memory.max_value_bytes (1 MiB by default) as compact JSON, or the body is larger than six times that (room for `\\u` escapes) plus 64 KiB.',
          ),
        ]),
      },
    },
  },
  '/api/v1/memory/get': {
    post: {
      operationId: 'getMemory',
      tags: ['Memory'],
      summary: 'Read a memory value',
      description:
        'Without `scope`, looks in the workflow, session and actor scopes the headers name, in that order, then in global, and answers the first hit; the answer says which scope it came from. With `scope`, looks only there.',
      requestParams: { header: MemoryScopeHeaders },
      requestBody: body(KeyBodySchema, { key: 'draft' }),
      responses: {
        '200': { description: 'The entry.', ...json(MemoryEntrySchema, entry) },
        ...problemResponses('/api/v1/memory/get', [
          badBody,
          keyBodyTooLarge,
          {
            code: 'not_found',
            when: 'The key is in none of the scopes searched, or the named scope has no id in this request (agent SDKs read 404 as "not set" and try the next scope).',
            detail: 'No memory key "draft" in the workflow and global scopes.',
          },
        ]),
      },
    },
  },
  '/api/v1/memory/delete': {
    post: {
      operationId: 'deleteMemory',
      tags: ['Memory'],
      summary: 'Delete a memory value',
      description: `Removes \`key\` from one scope. ${scopeText} Deleting a missing key is not an error. \`DELETE\` is not registered for plain memory.`,
      requestParams: { header: MemoryScopeHeaders },
      requestBody: body(KeyBodySchema, { key: 'draft' }),
      responses: {
        '200': {
          description: 'Deleted, or there was nothing to delete.',
          ...json(DeletedSchema, { key: 'draft', scope: 'workflow', scope_id: 'wf_9', deleted: true }),
        },
        ...problemResponses('/api/v1/memory/delete', [badBody, keyBodyTooLarge]),
      },
    },
  },
  '/api/v1/memory/list': {
    get: {
      operationId: 'listMemory',
      tags: ['Memory'],
      summary: 'List the entries of one scope',
      description: `A JSON array of the entries of one scope, in key order (bytewise). The scope is chosen as for a write. At most \`limit\` (default and maximum ${LIST_PAGE_SIZE}) entries per page; when more follow, the \`Link\` header gives the next page (\`rel="next"\`, with \`after\` set to the last key).`,
      requestParams: { query: ListQuerySchema, header: MemoryScopeHeaders },
      responses: {
        '200': {
          description: 'The entries.',
          headers: z.object({
            Link: z.string().optional().meta({
              description: 'The next page, when there is one.',
              example: '</api/v1/memory/list?scope=workflow&limit=1&after=draft>; rel="next"',
            }),
          }),
          ...json(MemoryEntryListSchema, [entry]),
        },
        ...problemResponses('/api/v1/memory/list', [
          {
            code: 'invalid_request',
            when: 'A query parameter is invalid or repeated, or the named scope has no id.',
            detail: 'The session scope needs its id: send the X-Session-ID header or scope_id.',
            extensions: { errors: [{ field: 'scope', message: 'has no id' }] },
          },
        ]),
      },
    },
  },
};
