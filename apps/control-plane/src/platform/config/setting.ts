import type { z } from 'zod';

/**
 * One setting, declared once: where it lives in the YAML file, the environment variable that
 * overrides it, how its value is checked, its default and one sentence for the settings tables.
 * The loader, the typed config, the README table and the tests all read these declarations.
 */
export interface Setting<S extends z.ZodType = z.ZodType> {
  /** The dotted key in the YAML file (and in a stored config), e.g. `node_health.check_interval`. */
  key: string;
  /** The environment variable that overrides every other source. */
  env: string;
  /** Accepts a string (environment) or whatever YAML produced, and yields the typed value. */
  schema: S;
  /** The default, written as a user would write it in the file (it goes through `schema`). */
  default: unknown;
  /** False for the storage and connector sections: a database must never redirect or unlock them. */
  fromDatabase: boolean;
  /**
   * True when a running server applies a new value at once on `POST /api/v1/configs/reload`
   * (the code reading it asks for the current value each time); otherwise a new value is reported
   * as needing a restart. Absent means false.
   */
  live?: boolean;
  /** One sentence for the settings table of the README and the docs. */
  meaning: string;
}

/** Declares a setting; the identity function keeps the schema's type for the typed config. */
export function setting<S extends z.ZodType>(init: Setting<S>): Setting<S> {
  return init;
}

/** Settings grouped the way the typed config groups them: leaves are settings, the rest groups. */
export interface SettingsTree {
  [name: string]: Setting | SettingsTree;
}

/** The typed configuration a tree of settings produces. */
export type ValuesOf<T> = {
  [K in keyof T]: T[K] extends Setting<infer S> ? z.output<S> : ValuesOf<T[K]>;
};

function isSetting(node: Setting | SettingsTree): node is Setting {
  return typeof (node as Setting).key === 'string' && typeof (node as Setting).env === 'string';
}

/** Every setting of a tree, in declaration order. */
export function settingsOf(tree: SettingsTree): Setting[] {
  return Object.values(tree).flatMap((node) => (isSetting(node) ? [node] : settingsOf(node)));
}

/** The values of a typed config keyed by file key: the inverse of {@link valuesOf}. */
export function keyedValues(tree: SettingsTree, values: unknown): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const walk = (node: SettingsTree, value: Record<string, unknown>) => {
    for (const [name, child] of Object.entries(node)) {
      if (isSetting(child)) out.set(child.key, value[name]);
      else walk(child, (value[name] ?? {}) as Record<string, unknown>);
    }
  };
  walk(tree, values as Record<string, unknown>);
  return out;
}

/** Shapes validated values, keyed by file key, into the typed config of `tree`. */
export function valuesOf<T extends SettingsTree>(tree: T, byKey: ReadonlyMap<string, unknown>): ValuesOf<T> {
  const out: Record<string, unknown> = {};
  for (const [name, node] of Object.entries(tree)) {
    out[name] = isSetting(node) ? byKey.get(node.key) : valuesOf(node, byKey);
  }
  return out as ValuesOf<T>;
}

/** How a default reads in the settings table. */
function defaultText(value: unknown): string {
  if (value === undefined) return '(unset)';
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : `\`${value.join(', ')}\``;
  return `\`${String(value)}\``;
}

/**
 * The settings table of the README, rendered from the declarations so the documentation can be
 * checked against (and regenerated from) the one place each setting is declared.
 */
export function settingsTable(settings: readonly Setting[]): string {
  const rows = settings.map(
    (s) =>
      `| \`${s.key}\` | \`${s.env}\` | ${defaultText(s.default)} | ${s.fromDatabase ? 'yes' : 'never'} | ${s.live ? 'at once' : 'restart'} | ${s.meaning} |`,
  );
  return [
    '| File key | Environment variable | Default | From database | On reload | Meaning |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
