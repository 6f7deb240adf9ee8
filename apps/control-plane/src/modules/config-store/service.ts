import { randomUUID } from 'node:crypto';
import { ProblemError } from '@switchyard/shared';
import type { Database } from '@switchyard/shared/db';
import type { Clock } from '../../platform/clock.ts';
import type { ReloadReport } from '../../platform/config/live-config.ts';
import { ConfigError, type ConfigIssue } from '../../platform/config/load-config.ts';
import type { EventBus } from '../../platform/events/index.ts';
import type { Logger } from '../../platform/logger.ts';
import { CONFIG_RELOAD_TOPIC } from './events.ts';
import {
  type ConfigVersion,
  type ConfigVersionSummary,
  currentVersion,
  deleteStoredConfig,
  getConfigVersion,
  getStoredConfig,
  listConfigVersions,
  listStoredConfigs,
  type PutOutcome,
  putStoredConfig,
  type StoredConfig,
  type StoredConfigSummary,
} from './repository.ts';

export interface ConfigStoreServiceDeps {
  db: Database;
  clock?: Clock;
  /** Versions kept per name (config_store.max_versions); each write prunes the older ones. */
  maxVersions: number;
  /**
   * Checks a text before it is stored under `name` (the composition root checks the control
   * plane's own config as settings); any issue refuses the write with 400 and changes nothing.
   */
  check?: (name: string, text: string) => ConfigIssue[];
  /**
   * Loads the configuration again and applies it. Absent when the server was not started with
   * config_source `db`: reload then answers 503.
   */
  reload?: () => Promise<ReloadReport>;
  /** Carries a reload to the other replicas. */
  events?: EventBus;
  /** This replica's id, so its own broadcast is not applied twice. */
  replicaId?: string;
  log?: Logger;
}

export interface ReloadOutcome extends ReloadReport {
  reloadedAt: Date;
  /** False when the event bus refused the broadcast: other replicas were not told to reload. */
  replicasNotified: boolean;
}

export interface ConfigStoreService {
  list(): Promise<StoredConfigSummary[]>;
  get(name: string): Promise<StoredConfig>;
  put(input: { name: string; text: string; updatedBy: string | null }): Promise<PutOutcome>;
  delete(name: string, updatedBy: string | null): Promise<void>;
  /** One page of a name's versions, oldest first, after version `after`; `next` when more follow. */
  versions(
    name: string,
    page: { limit: number; after?: number },
  ): Promise<{ versions: ConfigVersionSummary[]; next?: number }>;
  version(name: string, version: number): Promise<ConfigVersion>;
  /** Reloads here, then tells the other replicas to reload; 503 without config_source db. */
  reload(): Promise<ReloadOutcome>;
  /** Stops listening for other replicas' reloads. */
  close(): void;
}

/** The 400 a configuration that fails its checks is refused with: one error per key and source. */
export function invalidConfigProblem(what: string, issues: ConfigIssue[]): ProblemError {
  return new ProblemError('invalid_request', `${what}: ${issues.map((issue) => issue.line).join('; ')}`, {
    resolution: 'Fix each listed setting in the source named, then try again.',
    extensions: {
      errors: issues.map((issue) => ({
        field: issue.key,
        key: issue.key,
        source: issue.source,
        message: issue.message,
      })),
    },
  });
}

function notFound(name: string): ProblemError {
  return new ProblemError('not_found', `No stored configuration named "${name}".`);
}

/** Stored configurations and their history, and the reload of the control plane's own. */
export function createConfigStoreService(deps: ConfigStoreServiceDeps): ConfigStoreService {
  const { db } = deps;
  const now = () => new Date((deps.clock ?? Date).now());
  const replicaId = deps.replicaId ?? randomUUID();

  // Another replica reloaded: this one loads its own sources (its environment and file, the
  // shared database) and applies them too. A failure here cannot reach the caller, so it is
  // logged; the replica keeps the configuration it had.
  const unsubscribe =
    deps.reload && deps.events
      ? deps.events.subscribe(CONFIG_RELOAD_TOPIC, (event) => {
          if (event.origin === replicaId) return;
          deps.reload!().then(
            (report) =>
              deps.log?.info({ ...report, origin: event.origin }, 'config reloaded by another replica'),
            (error) =>
              deps.log?.error(
                { err: error, origin: event.origin },
                'config reload asked by another replica failed; the running config stays',
              ),
          );
        })
      : () => {};

  return {
    list: () => listStoredConfigs(db),

    async get(name) {
      const config = await getStoredConfig(db, name);
      if (!config) throw notFound(name);
      return config;
    },

    async put({ name, text, updatedBy }) {
      const issues = deps.check?.(name, text) ?? [];
      if (issues.length > 0) throw invalidConfigProblem(`The configuration "${name}" is invalid`, issues);
      return putStoredConfig(db, { name, body: text, updatedBy, now: now(), keepVersions: deps.maxVersions });
    },

    async delete(name, updatedBy) {
      const deleted = await deleteStoredConfig(db, {
        name,
        updatedBy,
        now: now(),
        keepVersions: deps.maxVersions,
      });
      if (!deleted) throw notFound(name);
    },

    async versions(name, page) {
      // One more than asked for says whether another page follows without a count query.
      const rows = await listConfigVersions(db, name, { limit: page.limit + 1, after: page.after });
      if (rows.length === 0 && (await currentVersion(db, name)) === undefined) {
        throw new ProblemError('not_found', `No configuration named "${name}" was ever stored.`);
      }
      const versions = rows.slice(0, page.limit);
      const last = versions.at(-1);
      return rows.length > page.limit && last ? { versions, next: last.version } : { versions };
    },

    async version(name, version) {
      const found = await getConfigVersion(db, name, version);
      if (found) return found;
      const current = await currentVersion(db, name);
      if (current !== undefined && version < current) {
        throw new ProblemError(
          'not_found',
          `The configuration "${name}" no longer has version ${version}: only the newest ${deps.maxVersions} versions of a name are kept (config_store.max_versions), and its current version is ${current}.`,
          { resolution: `List the versions still kept: GET …/configs/${name}/versions.` },
        );
      }
      throw new ProblemError('not_found', `The configuration "${name}" has no version ${version}.`);
    },

    async reload() {
      if (!deps.reload) {
        throw new ProblemError(
          'service_unavailable',
          'Reload needs a server started with SERVICE_CONFIG_SOURCE=db; this one reads its settings from the environment and file only.',
          {
            resolution:
              'Start the control plane with SERVICE_CONFIG_SOURCE=db, or restart it to apply a changed file.',
          },
        );
      }
      let report: ReloadReport;
      try {
        report = await deps.reload();
      } catch (error) {
        if (error instanceof ConfigError) {
          throw invalidConfigProblem(
            'The configuration was not reloaded; the running one stays',
            error.issues,
          );
        }
        throw error;
      }
      // Applied here already: a bus that refuses the broadcast must not turn that into a failure,
      // but the caller learns that the other replicas were not told.
      let replicasNotified = false;
      if (deps.events) {
        try {
          await deps.events.publish(CONFIG_RELOAD_TOPIC, { origin: replicaId });
          replicasNotified = true;
        } catch (error) {
          deps.log?.error(
            { err: error },
            'config reload applied here but not broadcast to the other replicas',
          );
        }
      }
      return { ...report, reloadedAt: now(), replicasNotified };
    },

    close: unsubscribe,
  };
}
