import { isDeepStrictEqual } from 'node:util';
import { keyedValues, type SettingsTree, settingsOf, type ValuesOf, valuesOf } from './setting.ts';

/** What one reload did, by setting key (values are never reported: some are secrets). */
export interface ReloadReport {
  /** Every setting whose newly loaded value differs from the value in force. */
  changed: string[];
  /** The changed settings now in force (declared `live`). */
  applied: string[];
  /** The changed settings that keep their running value until the server restarts. */
  restartRequired: string[];
}

/**
 * The configuration in force. Settings declared `live` can change while the server runs; code
 * that honours them reads `current()` each time instead of keeping the value it started with.
 */
export interface LiveConfig<T extends SettingsTree> {
  /** The values in force: live settings as last applied, every other one as the server started. */
  current(): ValuesOf<T>;
  /** Applies the live settings of a freshly loaded configuration and says what changed. */
  apply(next: ValuesOf<T>): ReloadReport;
  /** Calls `listener` with the new values after an apply changed a live setting. */
  onApply(listener: (config: ValuesOf<T>) => void): () => void;
}

export function createLiveConfig<T extends SettingsTree>(tree: T, initial: ValuesOf<T>): LiveConfig<T> {
  const settings = settingsOf(tree);
  let current = initial;
  const listeners = new Set<(config: ValuesOf<T>) => void>();
  return {
    current: () => current,
    apply(next) {
      const running = keyedValues(tree, current);
      const incoming = keyedValues(tree, next);
      const report: ReloadReport = { changed: [], applied: [], restartRequired: [] };
      for (const setting of settings) {
        const value = incoming.get(setting.key);
        if (isDeepStrictEqual(running.get(setting.key), value)) continue;
        report.changed.push(setting.key);
        if (setting.live) {
          running.set(setting.key, value);
          report.applied.push(setting.key);
        } else {
          report.restartRequired.push(setting.key);
        }
      }
      if (report.applied.length > 0) {
        current = valuesOf(tree, running);
        for (const listener of [...listeners]) listener(current);
      }
      return report;
    },
    onApply(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/**
 * Loads the configuration again and applies it, one reload at a time: two reloads at once (a
 * request here and a broadcast from another replica) would otherwise race to apply. A load that
 * fails (a ConfigError naming each bad key and its source) applies nothing.
 */
export function createConfigReloader<T extends SettingsTree>(deps: {
  live: LiveConfig<T>;
  load: () => Promise<ValuesOf<T>>;
}): () => Promise<ReloadReport> {
  let queue: Promise<unknown> = Promise.resolve();
  return () => {
    const run = queue.then(async () => deps.live.apply(await deps.load()));
    queue = run.catch(() => {});
    return run;
  };
}
