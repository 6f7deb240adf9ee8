import { resolve } from 'node:path';
import {
  choiceSetting,
  integerSetting,
  listSetting,
  optionalTextSetting,
  textSetting,
} from '@switchyard/shared/settings';
import { setting } from './setting.ts';

/** Why a skip-path pattern is unusable, or undefined when it is fine. */
function skipPathProblem(pattern: string): string | undefined {
  if (!pattern.startsWith('/')) return 'must start with "/"';
  const star = pattern.indexOf('*');
  if (star !== -1 && (star !== pattern.length - 1 || !pattern.endsWith('/*'))) {
    return 'may use "*" only as a final "/*" (e.g. /api/v1/public/*)';
  }
  if (/[\s?#]/.test(pattern)) return 'must be a bare path (no spaces, "?" or "#")';
  return undefined;
}

function databaseUrlSetting() {
  return optionalTextSetting().refine(
    (value) => value === undefined || /^postgres(ql)?:\/\//.test(value),
    'is not a PostgreSQL URL (postgres://user@host:5432/database)',
  );
}

/** Where the HTTP server listens (config `server:`). */
export const serverSettings = {
  port: setting({
    key: 'server.port',
    env: 'CONTROL_PLANE_PORT',
    schema: integerSetting(0, 65535),
    default: 8080,
    fromDatabase: true,
    meaning: 'TCP port the HTTP server listens on (0 picks a free port).',
  }),
  host: setting({
    key: 'server.host',
    env: 'CONTROL_PLANE_HOST',
    schema: textSetting(),
    default: '127.0.0.1',
    fromDatabase: true,
    meaning: 'Interface to listen on; use 0.0.0.0 to accept connections from other machines.',
  }),
};

/** Where the database is (config `storage:`); never read from a stored config. */
export const storageSettings = {
  databaseUrl: setting({
    key: 'storage.database_url',
    env: 'DATABASE_URL',
    schema: databaseUrlSetting(),
    default: undefined,
    fromDatabase: false,
    meaning: 'PostgreSQL connection string; unset means the embedded database under storage.data_dir.',
  }),
  dataDir: setting({
    key: 'storage.data_dir',
    env: 'SWITCHYARD_DATA_DIR',
    schema: textSetting().transform((dir) => resolve(dir)),
    default: './.data',
    fromDatabase: false,
    meaning:
      'Directory of the embedded database (kept in `<data_dir>/control-plane`), relative to the working directory.',
  }),
};

/** API-key authentication (config `api.auth:`). */
export const authSettings = {
  apiKey: setting({
    key: 'api.auth.api_key',
    env: 'SERVICE_API_KEY',
    schema: optionalTextSetting(),
    default: undefined,
    fromDatabase: true,
    live: true,
    meaning: 'API key every request must carry; unset or empty turns API-key authentication off.',
  }),
  skipPaths: setting({
    key: 'api.auth.skip_paths',
    env: 'SWITCHYARD_API_AUTH_SKIP_PATHS',
    schema: listSetting(skipPathProblem),
    default: [],
    fromDatabase: true,
    live: true,
    meaning:
      'Extra paths that need no API key: exact paths, or `prefix/*` for a path and everything under it.',
  }),
};

/** The app's log output (config `logging:`). */
export const loggingSettings = {
  level: setting({
    key: 'logging.level',
    env: 'LOG_LEVEL',
    schema: choiceSetting(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const),
    default: 'info',
    fromDatabase: true,
    live: true,
    meaning: 'Least severe log level written: trace, debug, info, warn, error, fatal or silent.',
  }),
  format: setting({
    key: 'logging.format',
    env: 'LOG_FORMAT',
    schema: choiceSetting(['auto', 'json', 'pretty'] as const),
    default: 'auto',
    fromDatabase: true,
    meaning:
      'JSON lines (`json`), readable lines (`pretty`), or `auto`: readable on a terminal outside production (NODE_ENV), JSON otherwise.',
  }),
};

/** Whether the stored config is read at all; never read from the database itself. */
export const configSourceSetting = setting({
  key: 'config_source',
  env: 'SERVICE_CONFIG_SOURCE',
  schema: choiceSetting(['file', 'db'] as const),
  default: 'file',
  fromDatabase: false,
  meaning:
    'Where settings come from besides the environment: `file` (the YAML file) or `db` (the stored config named control-plane, over the file).',
});
