import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type CST, Parser, parse as parseYaml } from 'yaml';
import { type Setting, type SettingsTree, settingsOf, type ValuesOf, valuesOf } from './setting.ts';

/** The name of the stored config the control plane reads when config_source is `db`. */
export const STORED_CONFIG_NAME = 'control-plane';

/** The file read when SERVICE_CONFIG_FILE is not set (only if it exists). */
export const DEFAULT_CONFIG_FILE = './switchyard.yaml';

/** The setting that decides whether the stored config is read at all. */
const CONFIG_SOURCE_KEY = 'config_source';

/** One reason a configuration cannot be used: the setting, where its value came from, what is wrong. */
export interface ConfigIssue {
  /** The dotted key (`server.port`), or `(document)` for a problem with a whole source. */
  key: string;
  /** Where the value came from: `environment variable CONTROL_PLANE_PORT`, `file /x.yaml`, ... */
  source: string;
  message: string;
  /** The whole problem as one line, as the start-up error prints it. */
  line: string;
}

/** The key an issue about a whole source (unreadable YAML, a missing file) is filed under. */
export const DOCUMENT_KEY = '(document)';

/** Every reason the configuration cannot be used, one line each naming the key and its source. */
export class ConfigError extends Error {
  readonly problems: string[];
  readonly issues: ConfigIssue[];

  constructor(issues: ConfigIssue[]) {
    const problems = issues.map((issue) => issue.line);
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
    this.issues = issues;
  }
}

type Problems = ConfigIssue[];

export interface LoadSettingsOptions {
  /** The environment to read; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /**
   * Reads the stored config's YAML text (undefined when there is none); called only when the
   * resolved config_source is `db`. Without it the stored layer is skipped: the server loads once
   * to learn where the database is (storage is never read from it), opens it, then loads again.
   */
  readStored?: () => Promise<string | undefined>;
  /** The YAML file; defaults to SERVICE_CONFIG_FILE, then ./switchyard.yaml when it exists. */
  filePath?: string;
  /** Where notes about ignored settings go. */
  log?: (line: string) => void;
}

type Values = Map<string, unknown>;
type Layer = { label: string; values: Values };

/** The settings of one tree, indexed for the loader. */
function catalogue(tree: SettingsTree) {
  const byKey = new Map<string, Setting>(settingsOf(tree).map((s) => [s.key, s]));
  const sections = new Set(
    [...byKey.keys()].flatMap((key) => {
      const parts = key.split('.');
      return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('.'));
    }),
  );
  return { byKey, sections };
}
type Catalogue = ReturnType<typeof catalogue>;

/**
 * Turns a parsed YAML document into dotted setting keys, refusing keys nobody reads: a typo such
 * as `check_intervall` would otherwise be silently ignored and the default used.
 */
function flatten(cat: Catalogue, document: unknown, label: string, problems: Problems): Values {
  const values: Values = new Map();
  if (document === null || document === undefined) return values;
  const walk = (node: unknown, prefix: string) => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) {
      problems.push({
        key: prefix || DOCUMENT_KEY,
        source: label,
        message: 'expected a mapping of keys',
        line: `${prefix || '(top level)'}: expected a mapping of keys — in ${label}`,
      });
      return;
    }
    for (const [name, child] of Object.entries(node)) {
      const key = prefix ? `${prefix}.${name}` : name;
      if (cat.byKey.has(key)) {
        if (child !== null && child !== undefined) values.set(key, child);
      } else if (cat.sections.has(key)) {
        if (child !== null && child !== undefined) walk(child, key);
      } else {
        // The names allowed at this level: setting names, or section names one level down.
        const siblings = new Set(
          [...cat.byKey.keys()]
            .filter((k) => (prefix ? k.startsWith(`${prefix}.`) : true))
            .map((k) => (prefix ? k.slice(prefix.length + 1) : k).split('.')[0]!),
        );
        const message = `unknown setting (known here: ${[...siblings].join(', ')})`;
        problems.push({
          key,
          source: label,
          message,
          line: `${key}: unknown setting — in ${label} (known here: ${[...siblings].join(', ')})`,
        });
      }
    }
  };
  walk(document, '');
  return values;
}

/** Largest settings document read (file, stored config, or a text checked before it is stored). */
export const MAX_SETTINGS_BYTES = 64 * 1024;
/** Deepest nesting of collections in a settings document; the settings tree itself is 4 deep. */
export const MAX_SETTINGS_DEPTH = 32;
/** Most collection entries (keys and list items) in a settings document, all levels together. */
export const MAX_SETTINGS_ENTRIES = 1000;

/**
 * Why a text is no settings document, judged before the YAML parser composes it, or undefined.
 * The parser composes nested collections recursively and checks a mapping's keys pairwise: a few
 * KB nested thousands deep can end the process (V8 gives up compiling a regular expression with
 * the stack nearly exhausted, a fatal error rather than an exception) and a mapping of many
 * thousand keys holds the event loop for minutes. The token tree is built without recursion and
 * walked here with an explicit stack, so these limits cost one linear pass over at most 64 KiB.
 */
function shapeProblem(text: string): string | undefined {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_SETTINGS_BYTES) {
    return `is ${bytes} bytes; a settings document is at most ${MAX_SETTINGS_BYTES} bytes`;
  }
  let entries = 0;
  for (const top of new Parser().parse(text)) {
    const pending: Array<{ token: CST.Token | null | undefined; depth: number }> = [{ token: top, depth: 0 }];
    while (pending.length > 0) {
      const { token, depth } = pending.pop()!;
      if (!token) continue;
      if (token.type === 'document') {
        pending.push({ token: token.value, depth });
      } else if (
        token.type === 'block-map' ||
        token.type === 'block-seq' ||
        token.type === 'flow-collection'
      ) {
        if (depth >= MAX_SETTINGS_DEPTH) {
          return `is nested more than ${MAX_SETTINGS_DEPTH} levels deep; a settings document needs a few`;
        }
        entries += token.items.length;
        if (entries > MAX_SETTINGS_ENTRIES) {
          return `has more than ${MAX_SETTINGS_ENTRIES} entries; the control plane has far fewer settings`;
        }
        for (const item of token.items) {
          pending.push({ token: item.key, depth: depth + 1 }, { token: item.value, depth: depth + 1 });
        }
      }
    }
  }
  return undefined;
}

function parseYamlLayer(cat: Catalogue, text: string, label: string, problems: Problems): Values {
  const shape = shapeProblem(text);
  if (shape) {
    problems.push({ key: DOCUMENT_KEY, source: label, message: shape, line: `${label} ${shape}` });
    return new Map();
  }
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    const message = `not valid YAML: ${(error as Error).message.split('\n')[0]}`;
    problems.push({ key: DOCUMENT_KEY, source: label, message, line: `${label} is ${message}` });
    return new Map();
  }
  return flatten(cat, document, label, problems);
}

function environmentLayer(cat: Catalogue, env: NodeJS.ProcessEnv): Layer {
  const values: Values = new Map();
  for (const [key, declared] of cat.byKey) {
    const raw = env[declared.env];
    // An empty variable counts as unset, so `SERVICE_API_KEY=` in a compose file does not wipe a
    // key set in the config file; with no other source the result is the same (auth off).
    if (raw !== undefined && raw !== '') values.set(key, raw);
  }
  return { label: 'environment', values };
}

function fileLayer(
  cat: Catalogue,
  options: LoadSettingsOptions,
  env: NodeJS.ProcessEnv,
  problems: Problems,
): Layer | undefined {
  const explicit = options.filePath ?? (env.SERVICE_CONFIG_FILE || undefined);
  const path = resolve(explicit ?? DEFAULT_CONFIG_FILE);
  if (!existsSync(path)) {
    if (explicit) {
      problems.push({
        key: DOCUMENT_KEY,
        source: `file ${path}`,
        message: 'does not exist (set by SERVICE_CONFIG_FILE or filePath)',
        line: `config file ${path} does not exist (set by SERVICE_CONFIG_FILE or filePath)`,
      });
    }
    return undefined;
  }
  const label = `file ${path}`;
  return { label, values: parseYamlLayer(cat, readFileSync(path, 'utf8'), label, problems) };
}

async function storedLayer(
  cat: Catalogue,
  readStored: () => Promise<string | undefined>,
  log: (line: string) => void,
  problems: Problems,
): Promise<Layer> {
  const label = `database config "${STORED_CONFIG_NAME}"`;
  const text = await readStored();
  if (text === undefined) {
    log(`config: no stored config named "${STORED_CONFIG_NAME}" yet; using the file and defaults`);
    return { label, values: new Map() };
  }
  const values = parseYamlLayer(cat, text, label, problems);
  for (const key of [...values.keys()]) {
    if (!cat.byKey.get(key)!.fromDatabase) {
      values.delete(key);
      log(
        `config: ignored ${key} from ${label}: the storage and connector sections and config_source are never read from the database`,
      );
    }
  }
  return { label, values };
}

/** Picks each setting from the first layer that has it (or its default) and validates it. */
function resolveValues(cat: Catalogue, layers: Layer[], problems: Problems): Values {
  const values: Values = new Map();
  for (const [key, declared] of cat.byKey) {
    const layer = layers.find((l) => l.values.has(key));
    const parsed = declared.schema.safeParse(layer ? layer.values.get(key) : declared.default);
    if (parsed.success) values.set(key, parsed.data);
    else {
      const source = !layer
        ? 'default'
        : layer.label === 'environment'
          ? `environment variable ${declared.env}`
          : layer.label;
      for (const issue of parsed.error.issues) {
        problems.push({
          key,
          source,
          message: issue.message,
          line: `${key}: ${issue.message} — from ${source}`,
        });
      }
    }
  }
  return values;
}

/**
 * Builds the configuration of `tree` from the environment, then the stored config (when
 * config_source is `db` and `readStored` is given), then the YAML file, then defaults — the first
 * that sets a key wins. Throws a ConfigError listing every bad value with its key and source.
 */
export async function loadSettings<T extends SettingsTree>(
  tree: T,
  options: LoadSettingsOptions = {},
): Promise<ValuesOf<T>> {
  const cat = catalogue(tree);
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  const problems: Problems = [];
  const layers: Layer[] = [environmentLayer(cat, env)];
  const file = fileLayer(cat, options, env, problems);

  // config_source decides whether the stored config is read at all, so it is resolved first from
  // the layers that can set it (never the stored config itself).
  const sourceSetting = cat.byKey.get(CONFIG_SOURCE_KEY);
  const source = sourceSetting?.schema.safeParse(
    layers[0]!.values.get(CONFIG_SOURCE_KEY) ?? file?.values.get(CONFIG_SOURCE_KEY) ?? sourceSetting.default,
  );
  if (source?.success && source.data === 'db' && options.readStored) {
    layers.push(await storedLayer(cat, options.readStored, log, problems));
  }
  if (file) layers.push(file);

  const values = resolveValues(cat, layers, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return valuesOf(tree, values);
}

/** The configuration of `tree` from defaults alone. */
export function defaultSettings<T extends SettingsTree>(tree: T): ValuesOf<T> {
  const cat = catalogue(tree);
  const problems: Problems = [];
  const values = resolveValues(cat, [], problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return valuesOf(tree, values);
}

/**
 * Checks a text meant to be stored as the control plane's config (`STORED_CONFIG_NAME`) the way a
 * load would read it — YAML syntax, known keys, each value's checks — and also refuses the keys a
 * load ignores there (storage, connector, config_source): storing them would only mislead the
 * next reader. Empty when the text is usable; each issue names its key and `source`.
 */
export function checkStoredSettings(tree: SettingsTree, text: string, source: string): ConfigIssue[] {
  const cat = catalogue(tree);
  const problems: Problems = [];
  const values = parseYamlLayer(cat, text, source, problems);
  for (const [key, value] of values) {
    const declared = cat.byKey.get(key)!;
    if (!declared.fromDatabase) {
      const message =
        'is never read from the database (the storage and connector sections and config_source come from the environment or the file)';
      problems.push({ key, source, message, line: `${key}: ${message} — in ${source}` });
      continue;
    }
    const parsed = declared.schema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        problems.push({
          key,
          source,
          message: issue.message,
          line: `${key}: ${issue.message} — from ${source}`,
        });
      }
    }
  }
  return problems;
}
