import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Database } from '@switchyard/shared/db';
import { parse as parseYaml } from 'yaml';
import { getStoredConfig } from '../storage/configs.ts';
import { type Config, configFromValues } from './config.ts';
import { SETTING_KEYS, SETTINGS, type SettingKey, type SettingValues } from './settings.ts';

/** The name of the stored config the control plane reads when SERVICE_CONFIG_SOURCE=db. */
export const STORED_CONFIG_NAME = 'control-plane';

/** The file read when SERVICE_CONFIG_FILE is not set (only if it exists). */
export const DEFAULT_CONFIG_FILE = './switchyard.yaml';

/** Every reason the configuration cannot be used, one line each naming the key and its source. */
export class ConfigError extends Error {
  readonly problems: string[];

  constructor(problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export interface LoadConfigOptions {
  /** The environment to read; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /**
   * The database holding the stored config, read only when the resolved config_source is `db`.
   * Without it the database layer is skipped: the server loads once to learn where the database
   * is (storage is never read from the database), opens it, then loads again with it.
   */
  db?: Database;
  /** The YAML file; defaults to SERVICE_CONFIG_FILE, then ./switchyard.yaml when it exists. */
  filePath?: string;
  /** Where notes about ignored settings go; defaults to stdout. */
  log?: (line: string) => void;
}

type Layer = { label: string; values: Partial<Record<SettingKey, unknown>> };

const SECTION_PREFIXES = new Set(
  SETTING_KEYS.flatMap((key) => {
    const parts = key.split('.');
    return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('.'));
  }),
);

/**
 * Turns a parsed YAML document into dotted setting keys, refusing keys nobody reads: a typo such
 * as `check_intervall` would otherwise be silently ignored and the default used.
 */
function flatten(document: unknown, label: string, problems: string[]): Layer['values'] {
  const values: Layer['values'] = {};
  if (document === null || document === undefined) return values;
  const walk = (node: unknown, prefix: string) => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) {
      problems.push(`${prefix || '(top level)'}: expected a mapping of keys — in ${label}`);
      return;
    }
    for (const [name, child] of Object.entries(node)) {
      const key = prefix ? `${prefix}.${name}` : name;
      if (Object.hasOwn(SETTINGS, key)) {
        if (child !== null && child !== undefined) values[key as SettingKey] = child;
      } else if (SECTION_PREFIXES.has(key)) {
        if (child !== null && child !== undefined) walk(child, key);
      } else {
        // The names allowed at this level: setting names, or section names one level down.
        const siblings = [
          ...new Set(
            SETTING_KEYS.filter((k) => (prefix ? k.startsWith(`${prefix}.`) : true)).map(
              (k) => (prefix ? k.slice(prefix.length + 1) : k).split('.')[0]!,
            ),
          ),
        ];
        problems.push(`${key}: unknown setting — in ${label} (known here: ${siblings.join(', ')})`);
      }
    }
  };
  walk(document, '');
  return values;
}

function parseYamlLayer(text: string, label: string, problems: string[]): Layer['values'] {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    problems.push(`${label} is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
    return {};
  }
  return flatten(document, label, problems);
}

function environmentLayer(env: NodeJS.ProcessEnv): Layer {
  const values: Layer['values'] = {};
  for (const key of SETTING_KEYS) {
    const raw = env[SETTINGS[key].env];
    // An empty variable counts as unset, so `SERVICE_API_KEY=` in a compose file does not wipe a
    // key set in the config file; with no other source the result is the same (auth off).
    if (raw !== undefined && raw !== '') values[key] = raw;
  }
  return { label: 'environment', values };
}

function fileLayer(
  options: LoadConfigOptions,
  env: NodeJS.ProcessEnv,
  problems: string[],
): Layer | undefined {
  const explicit = options.filePath ?? (env.SERVICE_CONFIG_FILE || undefined);
  const path = resolve(explicit ?? DEFAULT_CONFIG_FILE);
  if (!existsSync(path)) {
    if (explicit)
      problems.push(`config file ${path} does not exist (set by SERVICE_CONFIG_FILE or filePath)`);
    return undefined;
  }
  const label = `file ${path}`;
  return { label, values: parseYamlLayer(readFileSync(path, 'utf8'), label, problems) };
}

async function databaseLayer(db: Database, log: (line: string) => void, problems: string[]): Promise<Layer> {
  const label = `database config "${STORED_CONFIG_NAME}"`;
  const stored = await getStoredConfig(db, STORED_CONFIG_NAME);
  if (!stored) {
    log(`config: no stored config named "${STORED_CONFIG_NAME}" yet; using the file and defaults`);
    return { label, values: {} };
  }
  const values = parseYamlLayer(stored.body, label, problems);
  for (const key of Object.keys(values) as SettingKey[]) {
    if (!SETTINGS[key].fromDatabase) {
      delete values[key];
      log(
        `config: ignored ${key} from ${label}: the storage and connector sections and config_source are never read from the database`,
      );
    }
  }
  return { label, values };
}

function describeSource(layer: Layer, key: SettingKey): string {
  return layer.label === 'environment' ? `environment variable ${SETTINGS[key].env}` : layer.label;
}

/** Picks each setting from the first layer that has it (or its default) and validates it. */
function resolveValues(layers: Layer[], problems: string[]): SettingValues {
  const values: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    const layer = layers.find((l) => Object.hasOwn(l.values, key));
    const raw = layer ? layer.values[key] : SETTINGS[key].default;
    const parsed = SETTINGS[key].schema.safeParse(raw);
    if (parsed.success) values[key] = parsed.data;
    else {
      const source = layer ? describeSource(layer, key) : 'default';
      for (const issue of parsed.error.issues) problems.push(`${key}: ${issue.message} — from ${source}`);
    }
  }
  return values as SettingValues;
}

/**
 * Builds the configuration from the environment, then the stored database config (when
 * config_source is `db` and `db` is given), then the YAML file, then defaults — the first that
 * sets a key wins. Throws a ConfigError listing every bad value with its key and source.
 */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<Config> {
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => console.log(`[control-plane] ${line}`));
  const problems: string[] = [];
  const layers: Layer[] = [environmentLayer(env)];
  const file = fileLayer(options, env, problems);

  // config_source decides whether the database is read at all, so it is resolved first from the
  // layers that can set it (never the database itself).
  const source = SETTINGS.config_source.schema.safeParse(
    layers[0]!.values.config_source ?? file?.values.config_source ?? SETTINGS.config_source.default,
  );
  if (source.success && source.data === 'db' && options.db) {
    layers.push(await databaseLayer(options.db, log, problems));
  }
  if (file) layers.push(file);

  const values = resolveValues(layers, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return configFromValues(values);
}

/** The configuration from defaults alone; tests and embedders adjust the copy they get. */
export function defaultConfig(): Config {
  const problems: string[] = [];
  const values = resolveValues([], problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return configFromValues(values);
}
