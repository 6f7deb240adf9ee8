import {
  buildProblem,
  ERROR_CATALOGUE,
  ERROR_CODES,
  type ErrorCode,
  MAX_JSON_DEPTH,
  PROBLEM_CONTENT_TYPE,
} from '@switchyard/shared';
import { z } from 'zod';
import type { ZodOpenApiResponseObject, ZodOpenApiResponsesObject } from 'zod-openapi';

/** One failing field of a 400 problem, spelled as both apps spell it. */
export const FieldErrorSchema = z
  .object({
    field: z.string().meta({
      description: 'Where: a dotted path with array indices in brackets (`reasoners[0].id`), or `(body)`.',
    }),
    message: z.string().meta({ description: 'What is wrong with the value.' }),
  })
  .meta({ id: 'FieldError' });

/** An RFC 9457 problem document with Switchyard's members: every non-2xx answer is one. */
export const ProblemSchema = z
  .looseObject({
    type: z
      .string()
      .meta({ description: 'URL of the page that explains the code (same as documentation_url).' }),
    title: z.string().meta({ description: 'Short name of the code.' }),
    status: z.int().min(400).max(599).meta({ description: 'The HTTP status of the answer.' }),
    detail: z.string().meta({ description: 'What went wrong with this request, in prose (may change).' }),
    instance: z.string().meta({ description: 'The request path.' }),
    code: z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]).meta({
      description: 'The stable error code clients branch on.',
    }),
    resolution: z.string().meta({ description: 'What to do next.' }),
    documentation_url: z.string().meta({ description: 'The docs section about this code.' }),
    errors: z
      .array(FieldErrorSchema)
      .optional()
      .meta({ description: 'On 400 invalid_request for a body or query: each failing field.' }),
    available_endpoints: z.record(z.string(), z.array(z.string())).optional().meta({
      description: 'On 404 not_found for an unknown path: every path this server answers, with its methods.',
    }),
  })
  .meta({
    id: 'Problem',
    description: 'An RFC 9457 problem document (`application/problem+json`); clients branch on `code`.',
  });

/** One way a request can fail, for {@link problemResponses}. */
export interface ProblemCase {
  code: ErrorCode;
  /** When it happens, for the response's description. */
  when: string;
  /** A realistic `detail` for the example. */
  detail: string;
  /** Members besides the standard ones (e.g. `errors`) for the example. */
  extensions?: Record<string, unknown>;
}

/**
 * The problem responses of one operation, keyed by status: each case becomes part of its status's
 * description and an example (the real document the server would send for it).
 */
export function problemResponses(instance: string, cases: ProblemCase[]): ZodOpenApiResponsesObject {
  const byStatus = new Map<number, ProblemCase[]>();
  for (const c of cases) {
    const status = ERROR_CATALOGUE[c.code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), c]);
  }
  const responses: ZodOpenApiResponsesObject = {};
  for (const [status, list] of byStatus) {
    const examples = Object.fromEntries(
      list.map((c, i) => [
        list.length === 1 ? c.code : `${c.code}_${i + 1}`,
        {
          summary: c.when,
          value: buildProblem(c.code, { detail: c.detail, instance, extensions: c.extensions }),
        },
      ]),
    );
    const response: ZodOpenApiResponseObject = {
      description: list.map((c) => `\`${c.code}\`: ${c.when}`).join(' '),
      content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema, examples } },
    };
    responses[String(status) as `4${string}`] = response;
  }
  return responses;
}

/**
 * The ways the platform's JSON body reader (platform/http/request-body.ts) refuses a body, for an
 * operation that reads one with the given limit, plus the operation's own field errors.
 */
export function jsonBodyProblems(limitBytes: number, invalidField: ProblemCase): ProblemCase[] {
  return [
    invalidField,
    {
      code: 'invalid_request',
      when: 'The body is not JSON, or not sent as application/json.',
      detail: 'The body is not valid JSON: Unexpected end of JSON input',
      extensions: { errors: [{ field: '(body)', message: 'not valid JSON' }] },
    },
    {
      code: 'invalid_request',
      when: `The JSON is nested deeper than ${MAX_JSON_DEPTH} levels of objects and arrays.`,
      detail: `The JSON body is nested 5001 levels deep; the limit is ${MAX_JSON_DEPTH} levels of objects and arrays.`,
      extensions: { errors: [{ field: '(body)', message: `nested deeper than ${MAX_JSON_DEPTH} levels` }] },
    },
    {
      code: 'payload_too_large',
      when: `The body is over ${limitBytes} bytes (by Content-Length, or as counted for a chunked body).`,
      detail: `The body exceeds the limit of ${limitBytes} bytes.`,
    },
  ];
}
