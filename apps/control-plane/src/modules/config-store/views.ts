import type { ConfigVersion, ConfigVersionSummary, StoredConfig, StoredConfigSummary } from './repository.ts';
import type { ReloadOutcome } from './service.ts';

/** A stored config as list, put and delete answer it: no text. */
export function summaryView(config: StoredConfigSummary) {
  return {
    name: config.name,
    version: config.version,
    bytes: config.bytes,
    updated_by: config.updatedBy,
    created_at: config.createdAt,
    updated_at: config.updatedAt,
  };
}

/** A stored config with its text, as a JSON get answers it. */
export function configView(config: StoredConfig) {
  return { ...summaryView(config), content: config.body };
}

export function versionSummaryView(version: ConfigVersionSummary) {
  return {
    version: version.version,
    deleted: version.deleted,
    bytes: version.bytes,
    updated_by: version.updatedBy,
    created_at: version.createdAt,
  };
}

export function versionView(version: ConfigVersion) {
  return { name: version.name, ...versionSummaryView(version), content: version.body };
}

export function reloadView(outcome: ReloadOutcome) {
  return {
    reloaded_at: outcome.reloadedAt.toISOString(),
    source: 'db' as const,
    changed: outcome.changed,
    applied: outcome.applied,
    restart_required: outcome.restartRequired,
    replicas_notified: outcome.replicasNotified,
  };
}
