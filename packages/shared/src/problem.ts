/**
 * RFC 9457 problem documents and the one error-code catalogue both Switchyard apps answer with.
 * Clients branch on `code`; `detail` is prose and may change.
 */

/** Every error code either app may answer with, with its HTTP status, title and next step. */
export const ERROR_CATALOGUE = {
  invalid_request: {
    status: 400,
    title: 'Invalid request',
    resolution:
      'Correct the value named in detail (see the endpoint reference for bounds) and send the request again.',
  },
  missing_parameter: {
    status: 400,
    title: 'Missing parameter',
    resolution:
      'Add the named parameter with a non-empty value and retry; for search, retry with a non-empty q.',
  },
  unauthorized: {
    status: 401,
    title: 'Unauthorized',
    resolution:
      'Send the API key in the X-API-Key header (or Authorization: Bearer, or ?api_key= for streams).',
  },
  forbidden: {
    status: 403,
    title: 'Forbidden',
    resolution: 'Use a token that carries the capability named in detail, or enable it on the server.',
  },
  not_found: {
    status: 404,
    title: 'Not found',
    resolution: 'Check the path or identifier; available_endpoints lists what this server answers.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    resolution: 'Use one of the methods listed in the Allow header.',
  },
  not_acceptable: {
    status: 406,
    title: 'Not acceptable',
    resolution: 'Send Accept: text/html or Accept: text/markdown (or omit Accept).',
  },
  conflict: {
    status: 409,
    title: 'Conflict',
    resolution: 'Read the current state of the resource and retry with a request that fits it.',
  },
  quota_exceeded: {
    status: 409,
    title: 'Quota exceeded',
    resolution:
      'The store named in detail is full: delete entries from it to make room (or have the operator raise the limit detail names), then retry.',
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    resolution: 'Send a smaller body; the limit is given in detail.',
  },
  rate_limited: {
    status: 429,
    title: 'Too many requests',
    resolution: 'Wait for the number of seconds in Retry-After, then retry with backoff.',
  },
  internal_error: {
    status: 500,
    title: 'Internal error',
    resolution: 'Retry later; if it persists, report it with the instance path and time.',
  },
  upstream_unavailable: {
    status: 502,
    title: 'Upstream unavailable',
    resolution: 'A dependency could not be reached or loaded; retry shortly, and check the service it names.',
  },
  service_unavailable: {
    status: 503,
    title: 'Service unavailable',
    resolution: 'This feature is not configured on this deployment; ask its operator to enable it.',
  },
  execution_failed: {
    status: 502,
    title: 'Execution failed',
    resolution:
      'The agent ran the function and it failed: read error_message and error_details, fix the input or the agent, then call again. The execution is kept at GET /api/v1/executions/{execution_id}.',
  },
  upstream_timeout: {
    status: 504,
    title: 'Upstream timeout',
    resolution:
      'The agent did not answer in time; use the async endpoint for long work or raise the timeout.',
  },
} as const satisfies Record<string, { status: number; title: string; resolution: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

/**
 * The codes the documentation site answers with (content/api/site-api.md, Errors); the control plane
 * uses them all.
 */
export const SITE_ERROR_CODES = [
  'invalid_request',
  'missing_parameter',
  'not_found',
  'method_not_allowed',
  'not_acceptable',
  'payload_too_large',
  'rate_limited',
  'internal_error',
  'upstream_unavailable',
  'service_unavailable',
] as const satisfies readonly ErrorCode[];

/** The docs page that explains every code, one anchor per code. */
export const ERRORS_PAGE_PATH = '/docs/reference/errors';

/** A problem document (RFC 9457) with Switchyard's extension members. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: ErrorCode;
  resolution: string;
  documentation_url: string;
  available_endpoints?: Record<string, unknown>;
  [extension: string]: unknown;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The environment variable naming the public docs base (read by every app that renders problems). */
export const DOCS_URL_ENV = 'SWITCHYARD_DOCS_URL';

/** Where the public docs live; documentation_url values point here. */
export function docsBaseUrl(): string {
  return (process.env[DOCS_URL_ENV] ?? 'http://127.0.0.1:4321').replace(/\/+$/, '');
}

/** The documentation URL of one code: the errors page with the code as anchor. */
export function documentationUrl(code: ErrorCode, base = docsBaseUrl()): string {
  return `${base}${ERRORS_PAGE_PATH}#${code}`;
}

export interface ProblemInit {
  detail: string;
  instance: string;
  /**
   * Overrides the catalogue's status where a code stands for one outcome answered with more than
   * one status: `execution_failed` passes an agent's own 4xx through and is 502 otherwise.
   */
  status?: number;
  /** Overrides the catalogue's resolution when the next step is more specific. */
  resolution?: string;
  available_endpoints?: Record<string, unknown>;
  /** Extra members, e.g. `errors` listing failing fields. */
  extensions?: Record<string, unknown>;
  docsBase?: string;
}

/** Builds a complete problem document for a catalogued code. */
export function buildProblem(code: ErrorCode, init: ProblemInit): Problem {
  const entry = ERROR_CATALOGUE[code];
  const url = documentationUrl(code, init.docsBase);
  const problem: Problem = {
    ...init.extensions,
    type: url,
    title: entry.title,
    status: init.status ?? entry.status,
    detail: init.detail,
    instance: init.instance,
    code,
    resolution: init.resolution ?? entry.resolution,
    documentation_url: url,
  };
  if (init.available_endpoints) problem.available_endpoints = init.available_endpoints;
  return problem;
}

/**
 * An error a service throws to end a request with a problem document. The error middleware of
 * each app renders it; anything else thrown becomes 500 internal_error.
 */
export class ProblemError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly init: Omit<ProblemInit, 'detail' | 'instance'>;

  constructor(
    code: ErrorCode,
    detail: string,
    options: Omit<ProblemInit, 'detail' | 'instance'> & { headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.name = 'ProblemError';
    this.code = code;
    this.status = options.status ?? ERROR_CATALOGUE[code].status;
    const { headers, ...init } = options;
    this.headers = headers ?? {};
    this.init = init;
  }

  toProblem(instance: string, docsBase?: string): Problem {
    return buildProblem(this.code, {
      ...this.init,
      detail: this.message,
      instance,
      docsBase: docsBase ?? this.init.docsBase,
    });
  }
}

/** True when a value has every required member of a problem document with the right types. */
export function isProblem(value: unknown): value is Problem {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.type === 'string' &&
    typeof v.title === 'string' &&
    typeof v.status === 'number' &&
    typeof v.detail === 'string' &&
    typeof v.instance === 'string' &&
    typeof v.code === 'string' &&
    v.code in ERROR_CATALOGUE &&
    typeof v.resolution === 'string' &&
    typeof v.documentation_url === 'string'
  );
}

/** A problem ready to send: status, the headers the error carries, and the document. */
export interface RenderedProblem {
  status: number;
  headers: Record<string, string>;
  body: Problem;
  /** True when the error was not a ProblemError (a bug or an outage): the caller logs it. */
  unexpected: boolean;
}

// Errors raised by libraries (body readers, routers) carry an HTTP status; the ones a client can
// cause map to catalogue codes so nothing leaves either server without a problem document.
const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  408: 'invalid_request',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'invalid_request',
  429: 'rate_limited',
  431: 'invalid_request',
};

/**
 * The one problem renderer of both apps: a ProblemError keeps its code and headers; a library
 * error with a client status (`status`/`statusCode`, `expose` not false) maps to its code; anything
 * else is a 500 internal_error that reveals nothing of the error.
 */
export function renderProblem(error: unknown, instance: string, docsBase?: string): RenderedProblem {
  if (error instanceof ProblemError) {
    return {
      status: error.status,
      headers: error.headers,
      body: error.toProblem(instance, docsBase),
      unexpected: false,
    };
  }
  const e = error as { status?: unknown; statusCode?: unknown; expose?: unknown; message?: unknown } | null;
  const status = Number(e?.status ?? e?.statusCode);
  const code = CODE_BY_STATUS[status];
  if (code && e?.expose !== false) {
    const detail = typeof e?.message === 'string' && e.message ? e.message : ERROR_CATALOGUE[code].title;
    const body = buildProblem(code, { detail, instance, docsBase });
    // 408, 415 and 431 have no code of their own; the status stays what the library meant.
    body.status = status;
    return { status, headers: {}, body, unexpected: false };
  }
  const body = buildProblem('internal_error', {
    detail: 'The server failed to handle this request.',
    instance,
    docsBase,
  });
  return { status: 500, headers: {}, body, unexpected: true };
}
