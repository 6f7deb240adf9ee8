import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  SHARES_DEFAULT_WRITE_BUDGET_BYTES,
  SHARES_DEFAULT_WRITE_WINDOW_SECONDS,
} from '../contract/site-contract.ts';

/** Everything the docs front server can be configured with; see the README's API section. */
export interface DocsServerSettings {
  port: number;
  host: string;
  /** Public base URL of the site; undefined means the address the server actually listens on. */
  siteUrl: string | undefined;
  /** The Astro build output: holds `client/` (static files) and `server/entry.mjs` (SSR pages). */
  distDir: string;
  databaseUrl: string | undefined;
  /** Embedded PGlite files live under this directory when no database URL is given. */
  dataDir: string;
  sharesEnabled: boolean;
  sharesMaxBytes: number;
  /** Bytes of run bundles one client address may store per write window. */
  sharesWriteBudgetBytes: number;
  sharesWriteWindowSeconds: number;
  rateLimit: number;
  rateWindowSeconds: number;
  /** How many proxy hops in front of the server may be trusted to append to X-Forwarded-For. */
  trustedProxyHops: number;
  /** Slug of the page that publishes the deprecation policy (the `rel="deprecation-policy"` link). */
  deprecationPolicyPath: string;
}

/** The docs app directory (apps/docs), wherever the process was started from. */
export const DOCS_APP_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const DEFAULT_SETTINGS: Omit<DocsServerSettings, 'dataDir'> = {
  port: 4321,
  host: '127.0.0.1',
  siteUrl: undefined,
  distDir: join(DOCS_APP_DIR, 'dist'),
  databaseUrl: undefined,
  sharesEnabled: true,
  sharesMaxBytes: 1024 * 1024,
  sharesWriteBudgetBytes: SHARES_DEFAULT_WRITE_BUDGET_BYTES,
  sharesWriteWindowSeconds: SHARES_DEFAULT_WRITE_WINDOW_SECONDS,
  rateLimit: 120,
  rateWindowSeconds: 60,
  trustedProxyHops: 0,
  deprecationPolicyPath: '/docs/reference/versioning',
};

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new Error(`${name} must be true or false, got "${env[name]}"`);
}

function proxyHops(env: NodeJS.ProcessEnv): number {
  const raw = env.DOCS_TRUST_PROXY?.trim().toLowerCase();
  if (raw === undefined || raw === '' || raw === 'false' || raw === '0') return 0;
  if (raw === 'true') return 1;
  return integer(env, 'DOCS_TRUST_PROXY', 0, 0, 16);
}

function siteUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.SITE_URL?.trim();
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`SITE_URL must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`SITE_URL must be an absolute http(s) URL, got "${raw}"`);
  }
  return url.origin + url.pathname.replace(/\/+$/, '');
}

/** Reads the settings from the environment, failing loudly on values that cannot be right. */
export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): DocsServerSettings {
  return {
    port: integer(env, 'DOCS_PORT', DEFAULT_SETTINGS.port, 0, 65535),
    host: env.DOCS_HOST?.trim() || DEFAULT_SETTINGS.host,
    siteUrl: siteUrl(env),
    distDir: env.DOCS_DIST_DIR ? resolve(env.DOCS_DIST_DIR) : DEFAULT_SETTINGS.distDir,
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: join(resolve(env.SWITCHYARD_DATA_DIR ?? '.data'), 'docs'),
    sharesEnabled: boolean(env, 'SHARES_ENABLED', DEFAULT_SETTINGS.sharesEnabled),
    sharesMaxBytes: integer(env, 'SHARES_MAX_BYTES', DEFAULT_SETTINGS.sharesMaxBytes, 1, 1024 * 1024 * 1024),
    sharesWriteBudgetBytes: integer(
      env,
      'SHARES_WRITE_BUDGET_BYTES',
      DEFAULT_SETTINGS.sharesWriteBudgetBytes,
      1,
      1024 ** 4,
    ),
    sharesWriteWindowSeconds: integer(
      env,
      'SHARES_WRITE_WINDOW_SECONDS',
      DEFAULT_SETTINGS.sharesWriteWindowSeconds,
      1,
      86_400 * 30,
    ),
    rateLimit: integer(env, 'DOCS_RATE_LIMIT', DEFAULT_SETTINGS.rateLimit, 1, 100_000_000),
    rateWindowSeconds: integer(
      env,
      'DOCS_RATE_WINDOW_SECONDS',
      DEFAULT_SETTINGS.rateWindowSeconds,
      1,
      86_400,
    ),
    trustedProxyHops: proxyHops(env),
    deprecationPolicyPath: DEFAULT_SETTINGS.deprecationPolicyPath,
  };
}
