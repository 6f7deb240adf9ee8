import type { RateLimitState } from './rate-limiter.ts';

/**
 * The RateLimit-* headers every response carries (content/api/site-api.md) for a budget state. Shared by
 * the request handler and by the raw answer to requests Node cannot parse, so both publish the same numbers
 * in the same form.
 */
export function budgetHeaders(state: RateLimitState): Record<string, string> {
  return {
    'RateLimit-Limit': String(state.limit),
    'RateLimit-Remaining': String(state.remaining),
    'RateLimit-Reset': String(state.resetSeconds),
    'RateLimit-Policy': `${state.limit};w=${state.windowSeconds}`,
  };
}

/** The same headers as name/value pairs, the form `writeHead` takes them in. */
export function budgetHeaderList(state: RateLimitState): string[] {
  return [
    'RateLimit-Limit',
    String(state.limit),
    'RateLimit-Remaining',
    String(state.remaining),
    'RateLimit-Reset',
    String(state.resetSeconds),
    'RateLimit-Policy',
    `${state.limit};w=${state.windowSeconds}`,
  ];
}

/** The `Link` value, on every response, pointing at the published deprecation policy. */
export function deprecationPolicyLink(site: string, policyPath: string): string {
  return `<${site}${policyPath}>; rel="deprecation-policy"`;
}
