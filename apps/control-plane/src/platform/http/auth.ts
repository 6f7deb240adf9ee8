import { createHash, timingSafeEqual } from 'node:crypto';
import { ProblemError } from '@switchyard/shared';
import type { Middleware } from 'koa';
import { OPENAPI_PATH } from '../openapi/document.ts';

/**
 * Paths that never need the API key: health checks and metrics scrapes (probes and Prometheus carry
 * no key), the dashboard's files (it asks for the key itself), and the OpenAPI document, which says
 * how to authenticate and is no secret.
 */
const ALWAYS_OPEN = ['/api/v1/health', '/metrics', '/ui/*', OPENAPI_PATH];

/**
 * The connector API authenticates with its own token (SERVICE_CONNECTOR_TOKEN) and capabilities,
 * so the API key neither protects nor unlocks it.
 */
const CONNECTOR_PATHS = ['/connector/*', '/api/v1/connector/*'];

export interface ApiKeySettings {
  /** The key; undefined or empty turns authentication off. */
  apiKey: string | undefined;
  /** Extra open paths: exact paths, or `prefix/*` for the prefix and everything under it. */
  skipPaths: readonly string[];
}

/** The parts of a request the key may travel in. */
export interface KeyCarriers {
  headers: Record<string, string | string[] | undefined>;
  /** The query string's `api_key` values. */
  queryKey: string | string[] | undefined;
}

export type AuthOutcome = { ok: true } | { ok: false; detail: string };

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/**
 * True when `path` is named by one of the patterns (exact, or `prefix/*`). Case is ignored because
 * the routers match paths case-insensitively: `/API/V1/HEALTH` reaches the health route, so it
 * must be as open as `/api/v1/health`.
 */
export function matchesPathPattern(path: string, patterns: readonly string[]): boolean {
  const candidate = trimSlash(path.toLowerCase());
  return patterns.some((raw) => {
    const pattern = raw.toLowerCase();
    if (pattern.endsWith('/*')) {
      const prefix = pattern.slice(0, -2);
      return candidate === prefix || candidate.startsWith(`${prefix}/`);
    }
    return candidate === trimSlash(pattern);
  });
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * Compares in constant time: hashing both sides first gives equal-length inputs to
 * timingSafeEqual, so neither the key's content nor its length leaks through timing.
 */
export function keysMatch(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * Checks the API key of a request. The first carrier present decides, in the spec's order:
 * `X-API-Key`, then `Authorization: Bearer`, then `?api_key=`; a wrong key in a higher carrier is
 * not rescued by a right one in a lower carrier. An Authorization header with another scheme
 * (e.g. Basic, from a proxy) is not a carrier of this key and is passed over, and so is an empty
 * carrier: clients and proxies send `X-API-Key:` or `Bearer ` with an unset variable, which carries
 * no key and must not hide one given lower down.
 */
export function checkApiKey(carriers: KeyCarriers, configured: string): AuthOutcome {
  // HTTP strips whitespace around header values, so a key configured with a trailing newline (a
  // secret file) is compared without it, or no header could ever carry it. A blank key stays a
  // key nobody can send: trimming never turns authentication off.
  const apiKey = configured.trim() || configured;
  const header = firstValue(carriers.headers['x-api-key'])?.trim();
  if (header) {
    return keysMatch(header, apiKey)
      ? { ok: true }
      : { ok: false, detail: 'The X-API-Key header is not the API key.' };
  }
  const authorization = firstValue(carriers.headers.authorization);
  const bearer = authorization ? /^Bearer(?:[ \t]+(.*))?$/i.exec(authorization.trim()) : null;
  const token = bearer?.[1]?.trim();
  if (token) {
    return keysMatch(token, apiKey)
      ? { ok: true }
      : { ok: false, detail: 'The Authorization bearer token is not the API key.' };
  }
  if (carriers.queryKey !== undefined) {
    if (Array.isArray(carriers.queryKey)) return { ok: false, detail: 'Give api_key once.' };
    return keysMatch(carriers.queryKey, apiKey)
      ? { ok: true }
      : { ok: false, detail: 'The api_key query parameter is not the API key.' };
  }
  return {
    ok: false,
    detail:
      authorization && !bearer
        ? 'Authorization must use the Bearer scheme to carry the API key.'
        : 'This endpoint needs the API key.',
  };
}

/** True when a request to `path` must carry the API key under these settings. */
export function requiresApiKey(path: string, settings: ApiKeySettings): boolean {
  if (!settings.apiKey) return false;
  return !matchesPathPattern(path, [...ALWAYS_OPEN, ...CONNECTOR_PATHS, ...settings.skipPaths]);
}

/**
 * Koa middleware for SERVICE_API_KEY (content/concepts/authentication.md): when a key is set, every request outside the open
 * paths carries it or is answered 401 unauthorized with `WWW-Authenticate: Bearer`. Given a
 * function, it asks it for the settings on every request, so a reload that changes the key or the
 * skip paths takes effect at once.
 */
export function apiKeyAuth(settings: ApiKeySettings | (() => ApiKeySettings)): Middleware {
  const current = typeof settings === 'function' ? settings : () => settings;
  return async (ctx, next) => {
    const now = current();
    const apiKey = now.apiKey;
    if (!apiKey || !requiresApiKey(ctx.path, now)) return next();
    const outcome = checkApiKey({ headers: ctx.headers, queryKey: ctx.query.api_key }, apiKey);
    if (!outcome.ok) {
      throw new ProblemError('unauthorized', outcome.detail, { headers: { 'WWW-Authenticate': 'Bearer' } });
    }
    return next();
  };
}
