/**
 * Every route the docs front server answers besides static files: the site API, its unversioned
 * aliases and the share permalinks. The router dispatches from this list and the OpenAPI
 * description is checked against it, so a route cannot exist in one and not the other.
 */
export interface RouteSpec {
  /** Path as OpenAPI writes it (`{id}` for a path parameter). */
  path: string;
  method: 'GET' | 'POST';
  operationId: string;
  /** How to call it, for `available_endpoints` in 404 answers. */
  usage: string;
  /** For an unversioned alias: the versioned endpoint that succeeds it. */
  successor?: string;
}

export const API_ROUTES: readonly RouteSpec[] = [
  {
    path: '/api/v1/search',
    method: 'GET',
    operationId: 'searchDocumentation',
    usage: 'GET /api/v1/search?q={terms}&limit={1-20}',
  },
  {
    path: '/api/v1/topics',
    method: 'GET',
    operationId: 'listDocumentationTopics',
    usage: 'GET /api/v1/topics?category={category}',
  },
  {
    path: '/api/v1/page',
    method: 'GET',
    operationId: 'getDocumentationPage',
    usage: 'GET /api/v1/page?path=/docs/{slug}',
  },
  {
    path: '/api/v1/shares',
    method: 'POST',
    operationId: 'createRunShare',
    usage: 'POST /api/v1/shares with a run bundle as JSON',
  },
  {
    path: '/api/agent/search',
    method: 'GET',
    operationId: 'searchDocumentationAlias',
    usage: 'GET /api/agent/search?q={terms} (alias of /api/v1/search)',
    successor: '/api/v1/search',
  },
  {
    path: '/api/agent/topics',
    method: 'GET',
    operationId: 'listDocumentationTopicsAlias',
    usage: 'GET /api/agent/topics (alias of /api/v1/topics)',
    successor: '/api/v1/topics',
  },
  {
    path: '/api/agent/page',
    method: 'GET',
    operationId: 'getDocumentationPageAlias',
    usage: 'GET /api/agent/page?path=/docs/{slug} (alias of /api/v1/page)',
    successor: '/api/v1/page',
  },
];

/** Public pages of published runs; HTML by default, the bundle on `Accept: application/json`. */
export const PERMALINK_ROUTES: readonly RouteSpec[] = [
  { path: '/s/{id}', method: 'GET', operationId: 'getRunShare', usage: 'GET /s/{id}' },
  {
    path: '/share/{id}',
    method: 'GET',
    operationId: 'getRunShareLongForm',
    usage: 'GET /share/{id} (same as /s/{id})',
  },
];

/** The `available_endpoints` member of 404 answers: what a client can call instead. */
export function availableEndpoints(): Record<string, string> {
  const endpoints: Record<string, string> = {};
  for (const route of API_ROUTES) if (!route.successor) endpoints[route.operationId] = route.usage;
  endpoints.mcp = 'POST /mcp (Model Context Protocol, Streamable HTTP)';
  endpoints.openapi = 'GET /openapi.json';
  endpoints.llms = 'GET /llms.txt';
  return endpoints;
}
