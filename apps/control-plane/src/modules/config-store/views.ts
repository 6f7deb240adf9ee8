import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import type { ConfigVersion, ConfigVersionSummary, StoredConfig, StoredConfigSummary } from './repository.ts';
import type {
  ConfigSchema,
  ConfigSummarySchema,
  ReloadSchema,
  VersionSchemaOut,
  VersionSummarySchema,
} from './responses.ts';
import type { ReloadOutcome } from './service.ts';

/** A stored config as list, put and delete answer it: no text. */
export function summaryView(config: StoredConfigSummary): ResponseBody<typeof ConfigSummarySchema> {
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
export function configView(config: StoredConfig): ResponseBody<typeof ConfigSchema> {
  return { ...summaryView(config), content: config.body };
}

export function versionSummaryView(version: ConfigVersionSummary): ResponseBody<typeof VersionSummarySchema> {
  return {
    version: version.version,
    deleted: version.deleted,
    bytes: version.bytes,
    updated_by: version.updatedBy,
    created_at: version.createdAt,
  };
}

export function versionView(version: ConfigVersion): ResponseBody<typeof VersionSchemaOut> {
  return { name: version.name, ...versionSummaryView(version), content: version.body };
}

export function reloadView(outcome: ReloadOutcome): ResponseBody<typeof ReloadSchema> {
  return {
    reloaded_at: outcome.reloadedAt.toISOString(),
    source: 'db' as const,
    changed: outcome.changed,
    applied: outcome.applied,
    restart_required: outcome.restartRequired,
    replicas_notified: outcome.replicasNotified,
  };
}
