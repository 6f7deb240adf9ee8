/**
 * The OpenAPI 3.1 description of the docs site API, served prerendered at /openapi.json. The
 * bounds come from the contract module the front server enforces them from
 * (apps/docs/contract/site-contract.ts); a test checks that every route the server answers is
 * described here and that every operation described here is answered.
 */

import { MAX_JSON_DEPTH, SITE_ERROR_CODES } from '@switchyard/shared';
import {
  CATEGORY_MAX_LENGTH,
  CATEGORIES as DOCUMENTATION_CATEGORIES,
  EXECUTION_STATUSES,
  PAGE_PATH_MAX_LENGTH,
  RUN_BUNDLE_LIMITS,
  SEARCH_LIMIT_DEFAULT,
  SEARCH_LIMIT_MAX,
  SEARCH_LIMIT_MIN,
  SEARCH_QUERY_MAX_LENGTH,
  SHARE_ID_PATTERN,
  SHARES_DEFAULT_MAX_BYTES,
  SHARES_DEFAULT_WRITE_BUDGET_BYTES,
  SHARES_DEFAULT_WRITE_WINDOW_SECONDS,
} from '../../contract/site-contract.ts';

type Json = Record<string, unknown>;

export const API_LIFECYCLE = {
  current_version: 'v1',
  versioning: 'url-path',
  deprecation_notice_days: 180,
  deprecation_headers: ['Deprecation', 'Sunset', 'Link'],
  aliases: {
    '/api/agent/search': '/api/v1/search',
    '/api/agent/topics': '/api/v1/topics',
    '/api/agent/page': '/api/v1/page',
  },
} as const;

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** Headers every response of the site carries. */
const COMMON_HEADERS: Json = {
  'RateLimit-Limit': ref('headers', 'RateLimitLimit'),
  'RateLimit-Remaining': ref('headers', 'RateLimitRemaining'),
  'RateLimit-Reset': ref('headers', 'RateLimitReset'),
  'RateLimit-Policy': ref('headers', 'RateLimitPolicy'),
  'X-API-Version': ref('headers', 'XApiVersion'),
  Link: ref('headers', 'Link'),
};

function jsonResponse(description: string, schema: Json, headers: Json = {}): Json {
  return {
    description,
    headers: { ...COMMON_HEADERS, ...headers },
    content: { 'application/json': { schema } },
  };
}

function problemResponse(description: string, headers: Json = {}): Json {
  return {
    description,
    headers: { ...COMMON_HEADERS, ...headers },
    content: { 'application/problem+json': { schema: ref('schemas', 'Problem') } },
  };
}

/** Errors any operation can answer with. */
const ALWAYS: Json = {
  '429': ref('responses', 'RateLimited'),
  '500': ref('responses', 'InternalError'),
};

const READ_ERRORS: Json = {
  '405': ref('responses', 'MethodNotAllowed'),
  ...ALWAYS,
  '502': ref('responses', 'UpstreamUnavailable'),
};

function searchOperation(operationId: string, alias: boolean): Json {
  return {
    operationId,
    tags: ['search'],
    summary: alias ? 'Search the documentation (unversioned alias)' : 'Search the documentation',
    description: `BM25 full-text search (k1 1.2, b 0.75) over every passage (section) of every documentation page. Results are ranked passages, each with the page URL and the path the page operation accepts.${alias ? ' Alias of /api/v1/search with the same response; not scheduled for removal; carries Link rel="successor-version".' : ''}`,
    parameters: [ref('parameters', 'SearchQuery'), ref('parameters', 'SearchLimit')],
    responses: {
      '200': jsonResponse(
        'Ranked passages.',
        ref('schemas', 'SearchResponse'),
        alias ? SUCCESSOR_HEADER : {},
      ),
      '400': problemResponse(
        '`q` missing or empty (`missing_parameter`), or a parameter out of bounds or repeated (`invalid_request`).',
      ),
      ...READ_ERRORS,
    },
  };
}

function topicsOperation(operationId: string, alias: boolean): Json {
  return {
    operationId,
    tags: ['topics'],
    summary: alias ? 'List documentation pages (unversioned alias)' : 'List documentation pages',
    description: `The index of every documentation page (title, description, URL, category, keywords). The listed paths are the valid values of the page operation's path parameter.${alias ? ' Alias of /api/v1/topics.' : ''}`,
    parameters: [ref('parameters', 'Category')],
    responses: {
      '200': jsonResponse(
        'The documentation index.',
        ref('schemas', 'TopicsResponse'),
        alias ? SUCCESSOR_HEADER : {},
      ),
      '400': problemResponse('Unknown or over-long `category`, or a repeated parameter (`invalid_request`).'),
      ...READ_ERRORS,
    },
  };
}

function pageOperation(operationId: string, alias: boolean): Json {
  return {
    operationId,
    tags: ['page'],
    summary: alias ? 'Read one page as markdown (unversioned alias)' : 'Read one page as markdown',
    description: `The complete markdown of one documentation page plus its metadata and section anchors.${alias ? ' Alias of /api/v1/page.' : ''}`,
    parameters: [ref('parameters', 'PagePath')],
    responses: {
      '200': jsonResponse('The page.', ref('schemas', 'PageResponse'), alias ? SUCCESSOR_HEADER : {}),
      '400': problemResponse(
        '`path` missing or empty (`missing_parameter`), too long or repeated (`invalid_request`).',
      ),
      '404': problemResponse('No documentation page at that path (`not_found`).'),
      ...READ_ERRORS,
    },
  };
}

const SUCCESSOR_HEADER: Json = {
  Link: {
    description:
      'The deprecation-policy link, plus `rel="successor-version"` pointing at the versioned endpoint, e.g. `</api/v1/search>; rel="successor-version"`.',
    schema: { type: 'string' },
  },
};

function shareOperation(operationId: string, path: string): Json {
  return {
    operationId,
    tags: ['shares'],
    summary: path === '/s/{id}' ? 'View a published run' : 'View a published run (long form of /s/{id})',
    description:
      'The public page of a run published with createRunShare: HTML by default, the stored run bundle with `Accept: application/json`. Responses vary on Accept.',
    parameters: [ref('parameters', 'ShareId')],
    responses: {
      '200': {
        description: 'The run, as an HTML page or as its bundle.',
        headers: { ...COMMON_HEADERS, Vary: ref('headers', 'Vary') },
        content: {
          'text/html': { schema: { type: 'string' } },
          'application/json': { schema: ref('schemas', 'StoredRunBundle') },
        },
      },
      '404': problemResponse(
        'No share with that id (`not_found`). A client that ranks text/html above JSON, as browsers do, gets the HTML 404 page instead.',
      ),
      '405': ref('responses', 'MethodNotAllowed'),
      '406': problemResponse('The client accepts neither text/html nor application/json (`not_acceptable`).'),
      ...ALWAYS,
      '502': ref('responses', 'UpstreamUnavailable'),
      '503': ref('responses', 'SharesDisabled'),
    },
  };
}

/** A time, or `""` for one not reached yet (the CLI's `ended_at` of a running node). */
const OPTIONAL_TIME: Json = { anyOf: [{ type: 'string', format: 'date-time' }, { const: '' }] };

const PREVIEW: Json = {
  description: `Text (at most ${RUN_BUNDLE_LIMITS.preview} characters; the CLI sends pretty JSON clipped at 2 KiB, \`"[redacted]"\` or \`""\`) or any JSON value.`,
};

const mebibytes = (bytes: number) => `${bytes / (1024 * 1024)} MiB`;

const SCHEMAS: Json = {
  Problem: {
    type: 'object',
    description:
      'RFC 9457 problem document; every non-2xx response is one. Branch on `code`, never on `detail`.',
    required: ['type', 'title', 'status', 'detail', 'instance', 'code', 'resolution', 'documentation_url'],
    properties: {
      type: { type: 'string', format: 'uri', description: 'Identifies the problem kind.' },
      title: { type: 'string', description: 'Short summary.' },
      status: { type: 'integer', minimum: 400, maximum: 599 },
      detail: { type: 'string', description: 'Prose; may be reworded.' },
      instance: { type: 'string', description: 'The request path that failed.' },
      code: {
        type: 'string',
        description: `Machine-readable code. Codes used today: ${SITE_ERROR_CODES.join(', ')}. New codes may be added; treat an unknown code as a generic failure of its status class.`,
        examples: [...SITE_ERROR_CODES],
      },
      resolution: { type: 'string', description: 'What to do next.' },
      documentation_url: { type: 'string', format: 'uri' },
      available_endpoints: {
        type: 'object',
        description: 'On some 404 answers: what to call instead (operation id → how to call it).',
        additionalProperties: { type: 'string' },
      },
      errors: {
        type: 'array',
        description: 'On validation failures: each failing field.',
        items: {
          type: 'object',
          required: ['field', 'message'],
          properties: { field: { type: 'string' }, message: { type: 'string' } },
        },
      },
      error: {
        type: 'string',
        description: 'On createRunShare failures: the same text as `detail` (read by the CLI).',
      },
    },
    additionalProperties: true,
  },
  SearchResult: {
    type: 'object',
    required: [
      'rank',
      'score',
      'title',
      'section',
      'snippet',
      'url',
      'path',
      'anchor',
      'markdown_url',
      'category',
      'sections',
    ],
    properties: {
      rank: { type: 'integer', minimum: 1, description: '1 for the best match.' },
      score: {
        type: 'number',
        minimum: 0,
        description: 'BM25 score (4 decimals); comparable within one response only.',
      },
      title: { type: 'string', description: 'Title of the page the passage belongs to.' },
      section: {
        type: 'string',
        description: 'Heading of the passage (the page title for text before the first heading).',
      },
      snippet: {
        type: 'string',
        description: 'Plain text (no markup) around the best match, at most about 240 characters.',
      },
      url: { type: 'string', format: 'uri', description: 'Absolute page URL with the section `#anchor`.' },
      path: {
        type: 'string',
        description: 'Page path `/docs/{slug}`, the value the page operation accepts.',
      },
      anchor: {
        type: 'string',
        description: 'Heading id of the section; empty for text before the first heading.',
      },
      markdown_url: { type: 'string', format: 'uri', description: 'Absolute URL of the page as markdown.' },
      category: { type: 'string' },
      sections: {
        type: 'array',
        maxItems: 3,
        description: 'Other sections of the same page that matched, best first (at most 3).',
        items: {
          type: 'object',
          required: ['section', 'anchor', 'url'],
          properties: {
            section: { type: 'string', description: 'Heading of the section.' },
            anchor: { type: 'string', description: 'Heading id; empty for text before the first heading.' },
            url: { type: 'string', format: 'uri', description: 'Absolute page URL with the `#anchor`.' },
          },
        },
      },
    },
  },
  SearchResponse: {
    type: 'object',
    required: ['query', 'limit', 'total', 'results'],
    properties: {
      query: { type: 'string', description: 'The query as searched (trimmed).' },
      limit: { type: 'integer', minimum: SEARCH_LIMIT_MIN, maximum: SEARCH_LIMIT_MAX },
      total: {
        type: 'integer',
        minimum: 0,
        description: 'Number of pages that matched at least one term (each page is one result).',
      },
      results: { type: 'array', maxItems: SEARCH_LIMIT_MAX, items: ref('schemas', 'SearchResult') },
    },
  },
  Topic: {
    type: 'object',
    required: ['title', 'description', 'url', 'path', 'markdown_url', 'category', 'keywords'],
    properties: {
      title: { type: 'string' },
      description: { type: 'string' },
      url: { type: 'string', format: 'uri', description: 'Absolute page URL.' },
      path: {
        type: 'string',
        description: 'Page path `/docs/{slug}`, the value the page operation accepts.',
      },
      markdown_url: { type: 'string', format: 'uri' },
      category: { type: 'string' },
      keywords: { type: 'array', items: { type: 'string' } },
    },
  },
  TopicsResponse: {
    type: 'object',
    required: ['total', 'category', 'categories', 'topics'],
    properties: {
      total: { type: 'integer', minimum: 0 },
      category: {
        type: ['string', 'null'],
        description: 'The category filter applied, as the site spells it.',
      },
      categories: {
        type: 'array',
        items: { type: 'string' },
        description: 'Every category that has pages, in site order.',
      },
      topics: { type: 'array', items: ref('schemas', 'Topic') },
    },
  },
  PageSection: {
    type: 'object',
    required: ['title', 'anchor', 'url'],
    properties: {
      title: { type: 'string' },
      anchor: { type: 'string' },
      url: { type: 'string', format: 'uri' },
    },
  },
  PageResponse: {
    type: 'object',
    required: [
      'path',
      'slug',
      'url',
      'markdown_url',
      'title',
      'description',
      'category',
      'keywords',
      'sections',
      'markdown',
    ],
    properties: {
      path: { type: 'string' },
      slug: { type: 'string' },
      url: { type: 'string', format: 'uri' },
      markdown_url: { type: 'string', format: 'uri' },
      title: { type: 'string' },
      description: { type: 'string' },
      category: { type: 'string' },
      keywords: { type: 'array', items: { type: 'string' } },
      sections: {
        type: 'array',
        items: ref('schemas', 'PageSection'),
        description: 'The `##`/`###` sections in order.',
      },
      markdown: {
        type: 'string',
        description:
          'The complete page as markdown, exactly as markdown_url serves it: `# {title}`, `> {description}`, then the body.',
      },
    },
  },
  RunNode: {
    type: 'object',
    description:
      "One execution of the run, in either spelling: the documented one (`execution_id`, `target`, `finished_at`, `error_message`) or the platform CLI's (`id`, `agent` + `func`, `ended_at`, `error`). It needs `execution_id` or `id`, and `target` or `agent` and `func`. Unknown members are dropped.",
    required: ['status'],
    allOf: [
      { anyOf: [{ required: ['execution_id'] }, { required: ['id'] }] },
      { anyOf: [{ required: ['target'] }, { required: ['agent', 'func'] }] },
    ],
    properties: {
      execution_id: { type: 'string', minLength: 1, maxLength: RUN_BUNDLE_LIMITS.text },
      id: {
        type: 'string',
        minLength: 1,
        maxLength: RUN_BUNDLE_LIMITS.text,
        description: "The CLI's name for execution_id.",
      },
      target: {
        type: 'string',
        minLength: 1,
        maxLength: RUN_BUNDLE_LIMITS.text,
        description: 'e.g. `support-agent.triage`.',
      },
      agent: {
        type: 'string',
        minLength: 1,
        maxLength: RUN_BUNDLE_LIMITS.text,
        description:
          "The CLI's agent (node id); stored as `node_id`, and with `func` as `target` (`agent.func`).",
      },
      func: {
        type: 'string',
        minLength: 1,
        maxLength: RUN_BUNDLE_LIMITS.text,
        description: "The CLI's function name.",
      },
      node_id: { type: 'string', maxLength: RUN_BUNDLE_LIMITS.text },
      status: { type: 'string', enum: [...EXECUTION_STATUSES] },
      duration_ms: { type: ['number', 'null'], minimum: 0 },
      started_at: OPTIONAL_TIME,
      finished_at: OPTIONAL_TIME,
      ended_at: {
        ...OPTIONAL_TIME,
        description: 'The CLI\'s name for finished_at; `""` while the node runs.',
      },
      cost_usd: { type: ['number', 'null'], minimum: 0 },
      model: { type: ['string', 'null'], maxLength: RUN_BUNDLE_LIMITS.text },
      input_preview: PREVIEW,
      output_preview: PREVIEW,
      error_message: { type: 'string', maxLength: RUN_BUNDLE_LIMITS.preview },
      error: {
        type: ['string', 'null'],
        maxLength: RUN_BUNDLE_LIMITS.preview,
        description: "The CLI's name for error_message; `null` when the node did not fail.",
      },
    },
  },
  StoredRunNode: {
    type: 'object',
    description:
      'One execution as a share serves it: the canonical spelling whichever one was published (`id` → `execution_id`, `agent` → `node_id`, `agent` + `func` → `target`, `ended_at` → `finished_at`, `error` → `error_message`; empty times and a null error left out).',
    required: ['execution_id', 'target', 'status'],
    properties: {
      execution_id: { type: 'string', minLength: 1 },
      target: { type: 'string', minLength: 1 },
      node_id: { type: 'string' },
      status: { type: 'string', enum: [...EXECUTION_STATUSES] },
      duration_ms: { type: ['number', 'null'], minimum: 0 },
      started_at: { type: 'string', format: 'date-time' },
      finished_at: { type: 'string', format: 'date-time' },
      cost_usd: { type: ['number', 'null'], minimum: 0 },
      model: { type: ['string', 'null'] },
      input_preview: PREVIEW,
      output_preview: PREVIEW,
      error_message: { type: 'string' },
    },
    additionalProperties: false,
  },
  RunEdge: {
    type: 'object',
    required: ['from', 'to'],
    description: 'The execution `from` called the execution `to`; both must be execution ids of nodes.',
    properties: {
      from: { type: 'string', minLength: 1, maxLength: RUN_BUNDLE_LIMITS.text },
      to: { type: 'string', minLength: 1, maxLength: RUN_BUNDLE_LIMITS.text },
    },
  },
  RunTotals: {
    type: 'object',
    description: `Up to ${RUN_BUNDLE_LIMITS.totals} counts by snake_case name, e.g. \`agents\`, \`nodes\`, \`succeeded\`, \`duration_ms\`, \`cost_usd\`; \`null\` where nothing was measured.`,
    maxProperties: RUN_BUNDLE_LIMITS.totals,
    propertyNames: { pattern: '^[a-z][a-z0-9_]*$', maxLength: RUN_BUNDLE_LIMITS.totalKey },
    additionalProperties: { type: ['number', 'null'], minimum: 0 },
  },
  RunBundle: {
    type: 'object',
    description: `A workflow run as the platform CLI exports it. The whole body nests objects and arrays at most ${MAX_JSON_DEPTH} levels deep. Unknown members are dropped.`,
    required: ['version', 'workflow_id', 'generated_at', 'totals', 'nodes', 'edges'],
    properties: {
      version: { type: 'integer', const: 1 },
      workflow_id: { type: 'string', minLength: 1, maxLength: RUN_BUNDLE_LIMITS.text },
      title: {
        type: 'string',
        minLength: 1,
        maxLength: RUN_BUNDLE_LIMITS.text,
        description: 'Not blank; the CLI leaves it out when the run has none.',
      },
      generated_at: { type: 'string', format: 'date-time' },
      totals: ref('schemas', 'RunTotals'),
      nodes: { type: 'array', maxItems: RUN_BUNDLE_LIMITS.nodes, items: ref('schemas', 'RunNode') },
      edges: { type: 'array', maxItems: RUN_BUNDLE_LIMITS.edges, items: ref('schemas', 'RunEdge') },
    },
  },
  StoredRunBundle: {
    type: 'object',
    description: 'A published run as its permalink serves it on `Accept: application/json`.',
    required: ['version', 'workflow_id', 'generated_at', 'totals', 'nodes', 'edges'],
    properties: {
      version: { type: 'integer', const: 1 },
      workflow_id: { type: 'string' },
      title: { type: 'string' },
      generated_at: { type: 'string', format: 'date-time' },
      totals: ref('schemas', 'RunTotals'),
      nodes: { type: 'array', items: ref('schemas', 'StoredRunNode') },
      edges: { type: 'array', items: ref('schemas', 'RunEdge') },
    },
    additionalProperties: false,
  },
  CreatedShare: {
    type: 'object',
    required: ['id', 'url', 'workflow_id', 'title', 'created_at', 'node_count', 'edge_count'],
    properties: {
      id: { type: 'string', pattern: SHARE_ID_PATTERN },
      url: {
        type: 'string',
        format: 'uri',
        description: 'Absolute permalink `{site}/s/{id}` (also the Location header).',
      },
      workflow_id: { type: 'string' },
      title: {
        type: 'string',
        description: "The title the page shows: the bundle's, or `Workflow {workflow_id}` when it has none.",
      },
      created_at: { type: 'string', format: 'date-time' },
      node_count: { type: 'integer', minimum: 0 },
      edge_count: { type: 'integer', minimum: 0 },
    },
  },
};

const HEADERS: Json = {
  RateLimitLimit: { description: 'Request budget in the window.', schema: { type: 'integer', minimum: 1 } },
  RateLimitRemaining: {
    description: 'Requests left in the window.',
    schema: { type: 'integer', minimum: 0 },
  },
  RateLimitReset: {
    description: 'Seconds until the window resets.',
    schema: { type: 'integer', minimum: 1 },
  },
  RateLimitPolicy: {
    description: '`<limit>;w=<window-seconds>`, e.g. `120;w=60`.',
    schema: { type: 'string', pattern: '^\\d+;w=\\d+$' },
  },
  XApiVersion: {
    description: 'API version that served the response.',
    schema: { type: 'string', const: 'v1' },
  },
  Link: {
    description:
      'Always includes the published deprecation policy: `<{site}/docs/reference/versioning>; rel="deprecation-policy"`.',
    schema: { type: 'string' },
  },
  RetryAfter: { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } },
  Location: { description: 'Absolute URL of the created share.', schema: { type: 'string', format: 'uri' } },
  Allow: { description: 'Methods the endpoint answers.', schema: { type: 'string' } },
  Vary: { description: '`Accept`: the representation depends on it.', schema: { type: 'string' } },
};

const RESPONSES: Json = {
  MethodNotAllowed: problemResponse('The endpoint exists but not for this method (`method_not_allowed`).', {
    Allow: ref('headers', 'Allow'),
  }),
  RateLimited: problemResponse(
    'The API budget of this client address is spent (`rate_limited`, with `budget`: `api`).',
    {
      'Retry-After': ref('headers', 'RetryAfter'),
    },
  ),
  InternalError: problemResponse('Unexpected server-side failure (`internal_error`).'),
  UpstreamUnavailable: problemResponse(
    'A generated artifact (search index, manifest, page markdown or the server build) could not be loaded (`upstream_unavailable`).',
  ),
  SharesDisabled: problemResponse('Run sharing is switched off on this deployment (`service_unavailable`).'),
};

const PARAMETERS: Json = {
  SearchQuery: {
    name: 'q',
    in: 'query',
    required: true,
    description: 'Search terms. Identifiers such as `X-API-Key` or `snake_case` names match as written.',
    schema: { type: 'string', minLength: 1, maxLength: SEARCH_QUERY_MAX_LENGTH },
  },
  SearchLimit: {
    name: 'limit',
    in: 'query',
    required: false,
    description: 'Number of results.',
    schema: {
      type: 'integer',
      minimum: SEARCH_LIMIT_MIN,
      maximum: SEARCH_LIMIT_MAX,
      default: SEARCH_LIMIT_DEFAULT,
    },
  },
  Category: {
    name: 'category',
    in: 'query',
    required: false,
    description:
      'Only pages of this category. Matched case-insensitively; spaces, hyphens and underscores are equivalent (`api-reference`). An empty value means no filter; an unknown category is a 400 listing `valid_categories`.',
    schema: { type: 'string', maxLength: CATEGORY_MAX_LENGTH, examples: [...DOCUMENTATION_CATEGORIES] },
  },
  PagePath: {
    name: 'path',
    in: 'query',
    required: true,
    description:
      'Page path `/docs/{slug}` (the slug may have several segments). Also accepted: the absolute page URL, a trailing slash, a `.md` suffix, a `#anchor`.',
    schema: { type: 'string', minLength: 1, maxLength: PAGE_PATH_MAX_LENGTH },
    example: '/docs/getting-started/quickstart',
  },
  ShareId: {
    name: 'id',
    in: 'path',
    required: true,
    description: 'Share id as returned by createRunShare.',
    schema: { type: 'string' },
  },
};

/** Builds the OpenAPI document for a site base URL (SITE_URL). */
export function createOpenApiDocument(site: string): Json {
  const server = site.replace(/\/+$/, '');
  return {
    openapi: '3.1.0',
    info: {
      title: 'Switchyard documentation site API',
      version: '1.0.0',
      summary: 'Search, list and read the Switchyard documentation; publish run bundles to permalinks.',
      description:
        'The public API of the Switchyard documentation website. No authentication. Every response carries RateLimit-* headers (120 API requests per 60 s per client address; pages and files have a budget of their own, 1200 per 60 s), X-API-Version and a Link to the deprecation policy; every error is an RFC 9457 problem document. Documentation pages also serve markdown from their own URL on `Accept: text/markdown`.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: server, description: 'This documentation site' }],
    tags: [
      { name: 'search', description: 'Full-text search' },
      { name: 'topics', description: 'The page index' },
      { name: 'page', description: 'Pages as markdown' },
      { name: 'shares', description: 'Published runs' },
    ],
    paths: {
      '/api/v1/search': { get: searchOperation('searchDocumentation', false) },
      '/api/v1/topics': { get: topicsOperation('listDocumentationTopics', false) },
      '/api/v1/page': { get: pageOperation('getDocumentationPage', false) },
      '/api/v1/shares': {
        post: {
          operationId: 'createRunShare',
          tags: ['shares'],
          summary: 'Publish a run bundle to a permalink',
          description: `Stores a run bundle (as the platform CLI exports it) and answers with its permalink. No authentication; an \`X-API-Key\` header is accepted and ignored. The body limit is ${mebibytes(SHARES_DEFAULT_MAX_BYTES)} by default (SHARES_MAX_BYTES); the body may nest objects and arrays at most ${MAX_JSON_DEPTH} levels deep. Each client address may store ${mebibytes(SHARES_DEFAULT_WRITE_BUDGET_BYTES)} of bundles per ${SHARES_DEFAULT_WRITE_WINDOW_SECONDS} seconds by default (a sliding window; SHARES_WRITE_BUDGET_BYTES, SHARES_WRITE_WINDOW_SECONDS). Every failure also carries \`error\`, the text the CLI prints.`,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: ref('schemas', 'RunBundle') } },
          },
          responses: {
            '201': jsonResponse('Published.', ref('schemas', 'CreatedShare'), {
              Location: ref('headers', 'Location'),
            }),
            '400': problemResponse(
              `Body empty, not JSON, nested deeper than ${MAX_JSON_DEPTH} levels, or not a valid bundle; \`errors\` names each field (\`invalid_request\`).`,
            ),
            '405': ref('responses', 'MethodNotAllowed'),
            '413': problemResponse(
              'The body exceeds the limit, or the bundle is larger than the whole write budget (`payload_too_large`).',
            ),
            ...ALWAYS,
            '429': problemResponse(
              'The API budget, or the write budget of this client address, is spent (`rate_limited`); nothing was stored.',
              { 'Retry-After': ref('headers', 'RetryAfter') },
            ),
            '503': ref('responses', 'SharesDisabled'),
          },
        },
      },
      '/api/agent/search': { get: searchOperation('searchDocumentationAlias', true) },
      '/api/agent/topics': { get: topicsOperation('listDocumentationTopicsAlias', true) },
      '/api/agent/page': { get: pageOperation('getDocumentationPageAlias', true) },
      '/s/{id}': { get: shareOperation('getRunShare', '/s/{id}') },
      '/share/{id}': { get: shareOperation('getRunShareLongForm', '/share/{id}') },
    },
    components: {
      schemas: SCHEMAS,
      parameters: PARAMETERS,
      headers: HEADERS,
      responses: RESPONSES,
    },
    'x-api-lifecycle': API_LIFECYCLE,
  };
}
