import { describe, expect, it } from 'vitest';
import {
  buildProblem,
  documentationUrl,
  ERROR_CATALOGUE,
  ERROR_CODES,
  ERRORS_PAGE_PATH,
  isProblem,
  ProblemError,
} from '../src/index.ts';

const SPEC_CODES = {
  invalid_request: 400,
  missing_parameter: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  not_acceptable: 406,
  conflict: 409,
  quota_exceeded: 409,
  payload_too_large: 413,
  rate_limited: 429,
  internal_error: 500,
  upstream_unavailable: 502,
  execution_failed: 502,
  service_unavailable: 503,
  upstream_timeout: 504,
};

describe('error catalogue', () => {
  it('holds every code of both APIs (control plane and docs site) with its status', () => {
    expect(Object.fromEntries(ERROR_CODES.map((c) => [c, ERROR_CATALOGUE[c].status]))).toEqual(SPEC_CODES);
  });

  it.each(ERROR_CODES)('renders %s as a complete problem document', (code) => {
    const problem = buildProblem(code, { detail: 'something specific', instance: '/api/v1/x' });
    expect(isProblem(problem)).toBe(true);
    expect(problem.status).toBe(SPEC_CODES[code]);
    expect(problem.code).toBe(code);
    expect(problem.title.length).toBeGreaterThan(0);
    expect(problem.resolution.length).toBeGreaterThan(10);
    expect(problem.documentation_url).toBe(documentationUrl(code));
    expect(new URL(problem.documentation_url).pathname).toBe(ERRORS_PAGE_PATH);
    expect(new URL(problem.documentation_url).hash).toBe(`#${code}`);
    expect(JSON.parse(JSON.stringify(problem))).toEqual(problem);
  });

  it("lets an execution failure carry the agent's own 4xx status in both the answer and the document", () => {
    const error = new ProblemError('execution_failed', 'the agent refused the input', { status: 422 });
    expect(error.status).toBe(422);
    expect(error.toProblem('/api/v1/execute/a.b')).toMatchObject({ status: 422, code: 'execution_failed' });
    expect(new ProblemError('execution_failed', 'the agent crashed').status).toBe(502);
  });

  it('tells a missing search q to retry with a non-empty q', () => {
    expect(ERROR_CATALOGUE.missing_parameter.resolution).toMatch(/retry with a non-empty q/);
  });
});

describe('buildProblem', () => {
  it('keeps available_endpoints and extension members but never lets them overwrite required ones', () => {
    const problem = buildProblem('not_found', {
      detail: 'no route',
      instance: '/nope',
      available_endpoints: { search: 'GET /api/v1/search' },
      extensions: { errors: [{ field: 'q' }], status: 999, code: 'bogus' },
    });
    expect(problem.available_endpoints).toEqual({ search: 'GET /api/v1/search' });
    expect(problem.errors).toEqual([{ field: 'q' }]);
    expect(problem.status).toBe(404);
    expect(problem.code).toBe('not_found');
  });

  it('uses a given docs base for documentation_url', () => {
    const problem = buildProblem('rate_limited', {
      detail: 'd',
      instance: '/',
      docsBase: 'https://docs.example',
    });
    expect(problem.documentation_url).toBe('https://docs.example/docs/reference/errors#rate_limited');
  });
});

describe('ProblemError', () => {
  it('carries its code, status, headers and renders with the instance path', () => {
    const error = new ProblemError('rate_limited', 'queue full', { headers: { 'Retry-After': '3' } });
    expect(error.status).toBe(429);
    expect(error.headers).toEqual({ 'Retry-After': '3' });
    const problem = error.toProblem('/api/v1/execute/async/a.b');
    expect(problem).toMatchObject({
      code: 'rate_limited',
      status: 429,
      detail: 'queue full',
      instance: '/api/v1/execute/async/a.b',
    });
  });
});

describe('isProblem', () => {
  it('rejects documents missing a member or with an unknown code', () => {
    const good = buildProblem('conflict', { detail: 'd', instance: '/' });
    expect(isProblem(good)).toBe(true);
    expect(isProblem({ ...good, code: 'made_up' })).toBe(false);
    const { resolution: _omit, ...partial } = good;
    expect(isProblem(partial)).toBe(false);
    expect(isProblem(null)).toBe(false);
  });
});
