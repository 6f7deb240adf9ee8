/**
 * The values both halves of the docs app must agree on: the Astro build (which prerenders
 * /openapi.json, the manifests and the pages) and the front server (which enforces them). It
 * imports nothing from either, so neither depends on the other through it.
 */

/**
 * The documentation categories, in the order readers meet them: the sidebar groups, the values
 * frontmatter `category` may take, and the topics API filter.
 */
export const CATEGORIES = [
  'Getting started',
  'Concepts',
  'API reference',
  'Operations',
  'Reference',
] as const;

export type Category = (typeof CATEGORIES)[number];

/** Bounds of the read operations' parameters. */
export const SEARCH_LIMIT_MIN = 1;
export const SEARCH_LIMIT_MAX = 20;
export const SEARCH_LIMIT_DEFAULT = 5;
export const SEARCH_QUERY_MAX_LENGTH = 512;
export const PAGE_PATH_MAX_LENGTH = 512;
export const CATEGORY_MAX_LENGTH = 100;

/** Share ids: `run_` and 26 characters of Crockford base32 (130 random bits). */
export const SHARE_ID_PREFIX = 'run';
export const SHARE_ID_PATTERN = `^${SHARE_ID_PREFIX}_[0-9a-hjkmnp-tv-z]{26}$`;

/** Default body limit of `POST /api/v1/shares` (SHARES_MAX_BYTES). */
export const SHARES_DEFAULT_MAX_BYTES = 1024 * 1024;

/**
 * Default write budget of one client address (SHARES_WRITE_BUDGET_BYTES per
 * SHARES_WRITE_WINDOW_SECONDS): ten full-size bundles an hour, hundreds of the few-kilobyte
 * bundles the CLI usually sends. The request budget alone would let one address store
 * 120 MiB a minute.
 */
export const SHARES_DEFAULT_WRITE_BUDGET_BYTES = 10 * 1024 * 1024;
export const SHARES_DEFAULT_WRITE_WINDOW_SECONDS = 3600;

/**
 * The execution statuses a run bundle's nodes may have: the control plane's
 * (content/concepts/executions.md).
 */
export const EXECUTION_STATUSES = [
  'queued',
  'pending',
  'running',
  'succeeded',
  'failed',
  'cancelled',
  'timeout',
  'waiting',
] as const;

/** Bounds of a run bundle, enforced by the publish handler and described in /openapi.json. */
export { RUN_BUNDLE_LIMITS } from '@switchyard/shared';
