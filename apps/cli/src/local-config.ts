import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { CommandFailed, UsageError } from './failures.ts';

/**
 * The settings `switchyard config set` keeps on this machine, each with what it is for. The file
 * holds secrets (the API key, the connector token), so it is written readable by its owner only.
 */
export const LOCAL_SETTINGS = {
  url: 'The control plane, e.g. http://127.0.0.1:8080 (else SWITCHYARD_URL).',
  'api-key': 'The API key sent as X-API-Key (else SERVICE_API_KEY).',
  'connector-token':
    'The connector token for `weight` (else SWITCHYARD_CONNECTOR_TOKEN or SERVICE_CONNECTOR_TOKEN).',
  'docs-url': 'The docs site `share` publishes to and `doctor` checks (else SWITCHYARD_DOCS_URL).',
} as const;

export type LocalSetting = keyof typeof LOCAL_SETTINGS;
export type LocalConfig = Partial<Record<LocalSetting, string>>;

export function isLocalSetting(name: string): name is LocalSetting {
  return Object.hasOwn(LOCAL_SETTINGS, name);
}

/**
 * Where the settings live: SWITCHYARD_CONFIG_FILE when set (tests, several setups side by side),
 * else `$XDG_CONFIG_HOME/switchyard/config.json`, else `~/.config/switchyard/config.json`.
 */
export function localConfigPath(env: NodeJS.ProcessEnv): string {
  if (env.SWITCHYARD_CONFIG_FILE) return path.resolve(env.SWITCHYARD_CONFIG_FILE);
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : undefined;
  return path.join(base ?? path.join(homedir(), '.config'), 'switchyard', 'config.json');
}

/** The settings in the file; none when there is no file yet. A file that is not a JSON object is an error. */
export function readLocalConfig(file: string): LocalConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CommandFailed(`Cannot read ${file}: ${(error as Error).message}.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CommandFailed(
      `${file} is not valid JSON.`,
      'Fix it by hand, or delete it and set the values again with `switchyard config set`.',
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new CommandFailed(`${file} does not hold a JSON object.`, 'Delete it and set the values again.');
  }
  const config: LocalConfig = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (isLocalSetting(name) && typeof value === 'string') config[name] = value;
  }
  return config;
}

/** Replaces the file with `config` (written to a temporary file first, then renamed). */
export function writeLocalConfig(file: string, config: LocalConfig): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}

/** Checks a value before it is stored: URLs must be http(s) URLs. */
export function validateLocalSetting(name: LocalSetting, value: string): string {
  if (name === 'url' || name === 'docs-url') return httpUrl(value, name);
  if (value === '') throw new UsageError(`${name} cannot be empty; use \`switchyard config unset ${name}\`.`);
  return value;
}

/** An http or https URL without a trailing slash; a usage error otherwise. */
export function httpUrl(value: string, what: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      `${what} must be an http or https URL, such as http://127.0.0.1:8080; got "${value}".`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${what} must be an http or https URL; got "${value}".`);
  }
  return value.replace(/\/+$/, '');
}
