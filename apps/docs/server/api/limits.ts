/**
 * Bounds of the site API's parameters, shared by the handlers and the OpenAPI description so the
 * two cannot drift apart.
 */
export const SEARCH_LIMIT_MIN = 1;
export const SEARCH_LIMIT_MAX = 20;
export const SEARCH_LIMIT_DEFAULT = 5;
export const SEARCH_QUERY_MAX_LENGTH = 512;
export const PAGE_PATH_MAX_LENGTH = 512;
export const CATEGORY_MAX_LENGTH = 100;
export const SHARE_ID_PREFIX = 'run';

/** The categories the docs-site contract defines, in the order the site lists them. */
export { CATEGORIES as DOCUMENTATION_CATEGORIES } from '../../src/lib/categories.ts';
