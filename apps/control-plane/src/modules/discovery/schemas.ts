import { z } from 'zod';

/** Answer formats of GET /api/v1/discovery/capabilities. */
export const DISCOVERY_FORMATS = ['json', 'xml', 'compact'] as const;
export type DiscoveryFormat = (typeof DISCOVERY_FORMATS)[number];

/** Discovery's view of a node's lifecycle state. */
export const DISCOVERY_HEALTH_STATUSES = ['active', 'inactive', 'degraded', 'unknown'] as const;
export type DiscoveryHealthStatus = (typeof DISCOVERY_HEALTH_STATUSES)[number];

/** The filter kinds counted by service_discovery_filter_usage_total{filter_type}. */
export const DISCOVERY_FILTER_TYPES = ['agent', 'reasoner', 'skill', 'tag', 'health_status'] as const;
export type DiscoveryFilterType = (typeof DISCOVERY_FILTER_TYPES)[number];

export const DISCOVERY_MAX_LIMIT = 500;
export const DISCOVERY_DEFAULT_LIMIT = 100;
export const DISCOVERY_MAX_OFFSET = 1_000_000;
const MAX_PATTERN_LENGTH = 200;
const MAX_LIST_ITEMS = 50;

/** One query parameter as Koa hands it over: absent, once, or repeated (an array). */
function once() {
  return z
    .union([z.string(), z.array(z.string())])
    .optional()
    .transform((value, ctx) => {
      if (Array.isArray(value)) {
        ctx.addIssue({ code: 'custom', message: `give it once (it appeared ${value.length} times)` });
        return z.NEVER;
      }
      const trimmed = value?.trim();
      return trimmed === '' ? undefined : trimmed;
    });
}

/**
 * A wildcard pattern: `*abc*` contains, `abc*` starts with, `*abc` ends with, `abc` exact.
 * Matching ignores case, so patterns are kept lower-case (which also normalizes cache keys).
 */
function checkPattern(pattern: string, ctx: z.RefinementCtx): string | undefined {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    ctx.addIssue({ code: 'custom', message: `patterns are at most ${MAX_PATTERN_LENGTH} characters` });
    return undefined;
  }
  const core = pattern.replace(/^\*/, '').replace(/\*$/, '');
  if (core.includes('*')) {
    ctx.addIssue({
      code: 'custom',
      message: `"*" may only start or end a pattern (*abc*, abc*, *abc or abc), got "${pattern}"`,
    });
    return undefined;
  }
  return pattern.toLowerCase();
}

function patternParam() {
  return once().transform((value, ctx) => (value === undefined ? undefined : checkPattern(value, ctx)));
}

function patternListParam() {
  return once().transform((value, ctx) => {
    if (value === undefined) return [];
    const items = [
      ...new Set(
        value
          .split(',')
          .map((item) => item.trim())
          .filter((item) => item !== ''),
      ),
    ];
    if (items.length > MAX_LIST_ITEMS) {
      ctx.addIssue({ code: 'custom', message: `list at most ${MAX_LIST_ITEMS} values` });
      return z.NEVER;
    }
    const patterns: string[] = [];
    for (const item of items) {
      const pattern = checkPattern(item, ctx);
      if (pattern === undefined) return z.NEVER;
      patterns.push(pattern);
    }
    return patterns;
  });
}

const TRUE_WORDS = new Set(['true', '1', 'yes']);
const FALSE_WORDS = new Set(['false', '0', 'no']);

function booleanParam() {
  return once().transform((value, ctx) => {
    if (value === undefined) return false;
    const word = value.toLowerCase();
    if (TRUE_WORDS.has(word)) return true;
    if (FALSE_WORDS.has(word)) return false;
    ctx.addIssue({ code: 'custom', message: `must be true or false (got "${value}")` });
    return z.NEVER;
  });
}

function integerParam(min: number, max: number, fallback: number) {
  return once().transform((value, ctx) => {
    if (value === undefined) return fallback;
    const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a whole number from ${min} to ${max} (got "${value}")`,
      });
      return z.NEVER;
    }
    return n;
  });
}

function choiceParam<const T extends readonly [string, ...string[]]>(choices: T) {
  return once().transform((value, ctx) => {
    if (value === undefined) return undefined;
    const word = value.toLowerCase();
    if ((choices as readonly string[]).includes(word)) return word as T[number];
    ctx.addIssue({ code: 'custom', message: `must be one of ${choices.join(', ')} (got "${value}")` });
    return z.NEVER;
  });
}

/**
 * Other words callers use for a discovery health state. `healthy` is how SDK callers write
 * `active` (the TypeScript SDK passes the caller's word through); the lifecycle words of the
 * nodes API map one-to-one onto discovery's, so they are unambiguous too.
 */
const HEALTH_SYNONYMS: Record<string, DiscoveryHealthStatus> = {
  healthy: 'active',
  ready: 'active',
  offline: 'inactive',
  starting: 'unknown',
};

/**
 * Words refused although callers try them, with the reason: `unhealthy` could mean a degraded
 * agent (reachable, failing its health checks) or an inactive one (offline); guessing either
 * would silently hide the other.
 */
const AMBIGUOUS_HEALTH: Record<string, string> = {
  unhealthy: 'ambiguous: use degraded (failing health checks) or inactive (offline)',
};

function healthStatusParam() {
  return once().transform((value, ctx) => {
    if (value === undefined) return undefined;
    const word = value.toLowerCase();
    if ((DISCOVERY_HEALTH_STATUSES as readonly string[]).includes(word)) return word as DiscoveryHealthStatus;
    const synonym = HEALTH_SYNONYMS[word];
    if (synonym) return synonym;
    const reason = AMBIGUOUS_HEALTH[word];
    ctx.addIssue({
      code: 'custom',
      message: reason
        ? `"${value}" is ${reason}`
        : `must be one of ${DISCOVERY_HEALTH_STATUSES.join(', ')} (or healthy, ready, offline, starting) (got "${value}")`,
    });
    return z.NEVER;
  });
}

/**
 * The query string of GET /api/v1/discovery/capabilities. `agent` and `node_id` take one agent id
 * (or pattern); `agent_ids` and `node_ids` take a comma-separated list, as agent SDKs send them;
 * all four combine into one any-of agent filter. Unknown parameters (such as `api_key`) are ignored.
 */
export const DiscoveryQuerySchema = z
  .object({
    agent: patternParam(),
    node_id: patternParam(),
    agent_ids: patternListParam(),
    node_ids: patternListParam(),
    reasoner: patternParam(),
    skill: patternParam(),
    tags: patternListParam(),
    health_status: healthStatusParam(),
    format: choiceParam(DISCOVERY_FORMATS),
    include_input_schema: booleanParam(),
    include_output_schema: booleanParam(),
    include_descriptions: booleanParam(),
    include_examples: booleanParam(),
    limit: integerParam(1, DISCOVERY_MAX_LIMIT, DISCOVERY_DEFAULT_LIMIT),
    offset: integerParam(0, DISCOVERY_MAX_OFFSET, 0),
  })
  .transform((q) => ({
    agents: [
      ...new Set([
        ...(q.agent ? [q.agent] : []),
        ...(q.node_id ? [q.node_id] : []),
        ...q.agent_ids,
        ...q.node_ids,
      ]),
    ].sort(),
    reasoner: q.reasoner,
    skill: q.skill,
    tags: [...q.tags].sort(),
    healthStatus: q.health_status,
    format: q.format ?? ('json' as const),
    include: {
      inputSchema: q.include_input_schema,
      outputSchema: q.include_output_schema,
      descriptions: q.include_descriptions,
      examples: q.include_examples,
    },
    limit: q.limit,
    offset: q.offset,
  }));

/** A validated, normalized discovery query: equal queries have equal JSON, which keys the cache. */
export type DiscoveryQuery = z.output<typeof DiscoveryQuerySchema>;
