import { docsBaseUrl, MAX_JSON_DEPTH, PROBLEM_CONTENT_TYPE } from '@switchyard/shared';
import {
  createDocument,
  type oas31,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathItemObject,
  type ZodOpenApiPathsObject,
} from 'zod-openapi';
import { ProblemSchema, problemResponses } from './problem.ts';

/** Where the control plane serves its own OpenAPI document. */
export const OPENAPI_PATH = '/api/v1/openapi.json';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface OpenApiDocumentOptions {
  /** The control plane's version, as `info.version`. */
  version: string;
  /** Each feature's operations (its `openapi.ts`); a path and method may be declared only once. */
  paths: ZodOpenApiPathsObject[];
  /** Base URL of the documentation, for links; the docs URL problem documents use by default. */
  docsBase?: string;
  /** Security schemes besides the API key's, named by operations' `security` (the connector token). */
  securitySchemes?: Record<string, oas31.SecuritySchemeObject>;
}

/** The three carriers of SERVICE_API_KEY, in the order the server checks them. */
const SECURITY_SCHEMES: Record<string, oas31.SecuritySchemeObject> = {
  ApiKeyHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'The API key (SERVICE_API_KEY). Checked first: when present it decides.',
  },
  BearerToken: {
    type: 'http',
    scheme: 'bearer',
    description: '`Authorization: Bearer <API key>`, checked when X-API-Key is absent.',
  },
  ApiKeyQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'api_key',
    description: 'For SSE and WebSocket clients that cannot set headers; checked last.',
  },
};

/** Merges the features' path objects; two features declaring one operation is a mistake. */
function mergePaths(sources: ZodOpenApiPathsObject[]): ZodOpenApiPathsObject {
  const merged: ZodOpenApiPathsObject = {};
  for (const source of sources) {
    for (const [path, item] of Object.entries(source)) {
      const target: ZodOpenApiPathItemObject = merged[path] ?? {};
      merged[path] = target;
      for (const method of METHODS) {
        const operation = item[method];
        if (!operation) continue;
        if (target[method]) throw new Error(`OpenAPI: ${method.toUpperCase()} ${path} is declared twice`);
        target[method] = withCommonResponses(path, operation);
      }
    }
  }
  return merged;
}

/**
 * Adds what every operation shares: 401 when the operation is behind the API key (it is unless it
 * says `security: []`), and a `default` problem document for anything else (500 internal_error,
 * and a 400 for a request Node's HTTP parser refuses).
 */
function withCommonResponses(path: string, operation: ZodOpenApiOperationObject): ZodOpenApiOperationObject {
  const open = Array.isArray(operation.security) && operation.security.length === 0;
  const instance = path.replace(/\{[^}]+\}/g, 'x');
  return {
    ...operation,
    responses: {
      ...operation.responses,
      ...(open || operation.responses['401']
        ? {}
        : problemResponses(instance, [
            {
              code: 'unauthorized',
              when: 'An API key is set on the server and the request carries none, or a wrong one.',
              detail: 'This endpoint needs the API key.',
            },
          ])),
      default: operation.responses.default ?? {
        description:
          'Any other failure, as a problem document: `internal_error` (500), or `invalid_request` (400) for a request that is not valid HTTP/1.1.',
        content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema } },
      },
    },
  };
}

/** Adds `X-Request-ID`, which every answer carries, to every response of the document. */
function addRequestIdHeader(document: oas31.OpenAPIObject): void {
  document.components ??= {};
  document.components.headers = {
    ...document.components.headers,
    RequestId: {
      description:
        "The request id: the caller's `X-Request-ID` when usable, else a new one; it is on every log line about the request.",
      schema: { type: 'string' },
    },
  };
  for (const item of Object.values(document.paths ?? {}) as oas31.PathItemObject[]) {
    for (const method of METHODS) {
      const responses = item[method]?.responses ?? {};
      for (const response of Object.values(responses) as oas31.ResponseObject[]) {
        response.headers = {
          'X-Request-ID': { $ref: '#/components/headers/RequestId' },
          ...response.headers,
        };
      }
    }
  }
}

/**
 * The control plane's OpenAPI 3.1 document, generated with zod-openapi from the zod schemas each
 * feature's routes use (their `openapi.ts`) and the platform's shared pieces: problem documents,
 * API-key security, the request id header.
 */
export function createOpenApiDocument(options: OpenApiDocumentOptions): oas31.OpenAPIObject {
  const docsBase = (options.docsBase ?? docsBaseUrl()).replace(/\/+$/, '');
  const document = createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Switchyard control plane API',
      version: options.version,
      description: [
        'The HTTP API of the Switchyard control plane: agents register as nodes; callers discover and use their reasoners and skills. This document is generated from the schemas the routes validate with.',
        '',
        `- **Authentication**: off unless \`SERVICE_API_KEY\` is set; then every operation that lists security needs the key in one of its three carriers, else \`401 unauthorized\`.`,
        '- **Errors**: every non-2xx answer is an RFC 9457 problem document (`application/problem+json`) with a stable `code`.',
        `- **Bodies**: JSON (\`application/json\`), at most 1 MiB unless an operation says less, nested at most ${MAX_JSON_DEPTH} levels deep.`,
        '- **Unknown paths** answer `404 not_found` with `available_endpoints`; a known path with another method answers `405 method_not_allowed` with `Allow`.',
      ].join('\n'),
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    externalDocs: { description: 'Switchyard API reference', url: `${docsBase}/docs/api/openapi` },
    security: [{ ApiKeyHeader: [] }, { BearerToken: [] }, { ApiKeyQuery: [] }],
    components: { securitySchemes: { ...SECURITY_SCHEMES, ...options.securitySchemes } },
    paths: mergePaths(options.paths),
  });
  addRequestIdHeader(document);
  const tags = new Set<string>();
  for (const item of Object.values(document.paths ?? {}) as oas31.PathItemObject[]) {
    for (const method of METHODS) for (const tag of item[method]?.tags ?? []) tags.add(tag);
  }
  document.tags = [...tags].sort().map((name) => ({ name }));
  return document;
}
