import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  booleanSetting,
  choiceSetting,
  durationSetting,
  integerSetting,
  optionalTextSetting,
  textSetting,
} from '@switchyard/shared/settings';
import { z } from 'zod';
import {
  SHARES_DEFAULT_MAX_BYTES,
  SHARES_DEFAULT_WRITE_BUDGET_BYTES,
  SHARES_DEFAULT_WRITE_WINDOW_SECONDS,
} from '../contract/site-contract.ts';

/** The docs app directory (apps/docs), wherever the process was started from. */
export const DOCS_APP_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** One setting of the docs server: where it comes from, what it accepts, its default and its effect. */
export interface SettingDeclaration<K extends string = string, S extends z.ZodType = z.ZodType> {
  /** Name of the option `startDocsServer` takes. */
  key: K;
  /** The environment variable `npm start` reads it from. */
  env: string;
  schema: S;
  /** The default as the variable would spell it (parsed by `schema`), or undefined for "unset". */
  default: string | undefined;
  /** How the README's settings table writes the default, when not the default itself. */
  shownDefault?: string;
  /** One sentence: what the setting changes. The README's settings table repeats it word for word. */
  description: string;
}

function declare<const K extends string, S extends z.ZodType>(
  declaration: SettingDeclaration<K, S>,
): SettingDeclaration<K, S> {
  return declaration;
}

/** An absolute http(s) URL without a trailing slash, or undefined when not set. */
function siteUrlSetting() {
  return optionalTextSetting().transform((raw, ctx) => {
    const text = raw?.trim();
    if (!text) return undefined;
    let url: URL | undefined;
    try {
      url = new URL(text);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      ctx.addIssue({ code: 'custom', message: `"${text}" is not an absolute http(s) URL` });
      return z.NEVER;
    }
    return url.origin + url.pathname.replace(/\/+$/, '');
  });
}

/** `false`/`0` (no proxy), `true` (one hop) or a number of proxy hops up to 16. */
function proxyHopsSetting() {
  const asNumber = integerSetting(0, 16);
  return z.unknown().transform((value, ctx) => {
    const word = typeof value === 'string' ? value.trim().toLowerCase() : value;
    if (word === 'false' || word === false) return 0;
    if (word === 'true' || word === true) return 1;
    const parsed = asNumber.safeParse(word);
    if (parsed.success) return parsed.data;
    ctx.addIssue({
      code: 'custom',
      message: `${JSON.stringify(value)} is not true, false or a number of hops 0-16`,
    });
    return z.NEVER;
  });
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const DEFAULT_DIST_DIR = join(DOCS_APP_DIR, 'dist');

/**
 * Every setting of the docs front server, declared once: `settingsFromEnv` parses the environment
 * with these, `startDocsServer` takes the same keys as options, and a test holds the README's
 * settings table to this list.
 */
export const SETTINGS = [
  declare({
    key: 'port',
    env: 'DOCS_PORT',
    schema: integerSetting(0, 65535),
    default: '4321',
    description: 'The port the server listens on (`0` picks a free one).',
  }),
  declare({
    key: 'host',
    env: 'DOCS_HOST',
    schema: textSetting(),
    default: '127.0.0.1',
    description: 'The interface the server listens on (`0.0.0.0` for every IPv4 interface).',
  }),
  declare({
    key: 'siteUrl',
    env: 'SITE_URL',
    schema: siteUrlSetting(),
    default: undefined,
    shownDefault: 'the listening address',
    description:
      'Base of the absolute URLs in answers (search results, share `url` and `Location`, problem `documentation_url`, the deprecation-policy link); a warning is logged at start when it differs from where the server listens.',
  }),
  declare({
    key: 'distDir',
    env: 'DOCS_DIST_DIR',
    schema: textSetting().transform((path) => resolve(path)),
    default: DEFAULT_DIST_DIR,
    shownDefault: '`apps/docs/dist`',
    description: 'The build to serve (`client/`, `server/`), read once at start.',
  }),
  declare({
    key: 'databaseUrl',
    env: 'DATABASE_URL',
    schema: optionalTextSetting(),
    default: undefined,
    shownDefault: 'unset',
    description:
      'PostgreSQL for run shares and the request budget, which every replica on it then shares; unset means embedded PGlite under `SWITCHYARD_DATA_DIR`, in `docs/`, and the budget is counted in the process.',
  }),
  declare({
    key: 'dataDir',
    env: 'SWITCHYARD_DATA_DIR',
    // The docs site keeps its own subdirectory: the control plane shares the data directory.
    schema: textSetting().transform((path) => join(resolve(path), 'docs')),
    default: '.data',
    description: 'Where the embedded database lives when `DATABASE_URL` is unset (its `docs/` subdirectory).',
  }),
  declare({
    key: 'sharesEnabled',
    env: 'SHARES_ENABLED',
    schema: booleanSetting(),
    default: 'true',
    description:
      '`false`: no database is opened (so the budget is counted in the process); publishing and permalinks answer `503 service_unavailable`.',
  }),
  declare({
    key: 'sharesMaxBytes',
    env: 'SHARES_MAX_BYTES',
    schema: integerSetting(1, 1024 * 1024 * 1024),
    default: String(SHARES_DEFAULT_MAX_BYTES),
    description: 'Body limit of `POST /api/v1/shares` in bytes (`413 payload_too_large` above it).',
  }),
  declare({
    key: 'sharesWriteBudgetBytes',
    env: 'SHARES_WRITE_BUDGET_BYTES',
    schema: integerSetting(1, 1024 * 1024 * 1024 * 1024),
    default: String(SHARES_DEFAULT_WRITE_BUDGET_BYTES),
    description:
      'Bytes of run bundles one client address may store per write window (`429 rate_limited` with `Retry-After` above it).',
  }),
  declare({
    key: 'sharesWriteWindowSeconds',
    env: 'SHARES_WRITE_WINDOW_SECONDS',
    schema: integerSetting(1, 30 * 86_400),
    default: String(SHARES_DEFAULT_WRITE_WINDOW_SECONDS),
    description: 'Length of the sliding window of the write budget, in seconds.',
  }),
  declare({
    key: 'rateLimit',
    env: 'DOCS_RATE_LIMIT',
    schema: integerSetting(1, 100_000_000),
    default: '120',
    description:
      'Requests to the site API (`/api/`) and the docs MCP server (`/mcp`) per client address and window (raised by the benchmarks).',
  }),
  declare({
    key: 'pageRateLimit',
    env: 'DOCS_PAGE_RATE_LIMIT',
    schema: integerSetting(1, 100_000_000),
    default: '1200',
    description:
      'Requests for everything else (pages, `.md` variants, llms files, manifests, share permalinks, 404s) per client address and window: a budget of their own, so that reading the site never spends the API budget. Files under `/_astro/` and `/pagefind/` spend neither.',
  }),
  declare({
    key: 'rateWindowSeconds',
    env: 'DOCS_RATE_WINDOW_SECONDS',
    schema: integerSetting(1, 86_400),
    default: '60',
    description: "Length of the window of both request budgets (the API's and the pages'), in seconds.",
  }),
  declare({
    key: 'trustedProxyHops',
    env: 'DOCS_TRUST_PROXY',
    schema: proxyHopsSetting(),
    default: 'false',
    description:
      '`true` (or a number of hops): key the budget on the address the nearest trusted proxy appended to `X-Forwarded-For` (the right-most entry, so a client cannot prepend its way to a fresh budget).',
  }),
  declare({
    key: 'logLevel',
    env: 'DOCS_LOG_LEVEL',
    schema: choiceSetting(LOG_LEVELS),
    default: 'info',
    description: `The lowest level logged: ${LOG_LEVELS.map((l) => `\`${l}\``).join(', ')}.`,
  }),
  declare({
    key: 'logFormat',
    env: 'DOCS_LOG_FORMAT',
    schema: choiceSetting(['auto', 'json', 'pretty'] as const),
    default: 'auto',
    description:
      'JSON lines (`json`), readable lines (`pretty`), or `auto`: readable on a terminal outside production (`NODE_ENV`), JSON otherwise.',
  }),
  declare({
    key: 'headersTimeoutMs',
    env: 'DOCS_HEADERS_TIMEOUT',
    schema: durationSetting({ min: 100 }),
    default: '20s',
    description: 'How long a client may take to send a request head before `408` and the connection closes.',
  }),
  declare({
    key: 'shutdownGraceMs',
    env: 'DOCS_SHUTDOWN_GRACE',
    schema: durationSetting({ min: 0 }),
    default: '10s',
    description:
      'On SIGTERM or SIGINT, how long requests under way may take to finish before their connections are cut.',
  }),
] as const;

type Declared = (typeof SETTINGS)[number];

/** Everything the docs front server can be configured with, one key per declaration in SETTINGS. */
export type DocsServerSettings = { [D in Declared as D['key']]: z.output<D['schema']> };

/**
 * Reads the settings from the environment: an unset or empty variable takes the declared default.
 * Fails loudly, naming every variable that cannot be right.
 */
export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): DocsServerSettings {
  const settings: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const declaration of SETTINGS) {
    const raw = env[declaration.env];
    const given = raw !== undefined && raw.trim() !== '';
    const parsed = declaration.schema.safeParse(given ? raw : declaration.default);
    if (parsed.success) settings[declaration.key] = parsed.data;
    else problems.push(`${declaration.env}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  }
  if (problems.length > 0) throw new Error(`invalid settings: ${problems.join('; ')}`);
  return settings as DocsServerSettings;
}

/** The settings when nothing is configured. */
export function defaultSettings(): DocsServerSettings {
  return settingsFromEnv({});
}
