import { z } from 'zod';
import { ProblemSchema } from '../../platform/openapi/problem.ts';

/*
 * What the config store answers: the shapes views.ts builds, as the OpenAPI document describes
 * them. Objects list the members clients rely on and allow more.
 */

const Timestamp = z.iso.datetime();

export const ConfigSummarySchema = z
  .looseObject({
    name: z.string(),
    version: z.int().min(1).meta({ description: 'The current version: counts every write and deletion.' }),
    bytes: z.int().min(0).meta({ description: 'Size of the text in UTF-8 bytes.' }),
    updated_by: z.string().nullable().meta({ description: '`X-Updated-By` of the last write, or null.' }),
    created_at: Timestamp.meta({ description: 'When the name was created (again, after a deletion).' }),
    updated_at: Timestamp.meta({ description: 'When the current text was stored.' }),
  })
  .meta({ id: 'StoredConfigSummary', description: 'A stored configuration, without its text.' });

export const ConfigSchema = ConfigSummarySchema.extend({
  content: z.string().meta({ description: 'The configuration text, exactly as stored.' }),
}).meta({ id: 'StoredConfig', description: 'A stored configuration with its text.' });

export const ConfigListSchema = z
  .looseObject({ total: z.int().min(0), configs: z.array(ConfigSummarySchema) })
  .meta({ id: 'StoredConfigList' });

export const VersionSummarySchema = z
  .looseObject({
    version: z.int().min(1),
    deleted: z.boolean().meta({ description: 'True for the entry that records a deletion.' }),
    bytes: z.int().min(0).nullable().meta({ description: 'Size of the text; null for a deletion.' }),
    updated_by: z.string().nullable(),
    created_at: Timestamp.meta({ description: 'When this version was written.' }),
  })
  .meta({ id: 'StoredConfigVersionSummary' });

export const VersionListSchema = z
  .looseObject({
    name: z.string(),
    versions: z.array(VersionSummarySchema),
    next_cursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  })
  .meta({
    id: 'StoredConfigVersions',
    description: 'One page of the versions kept of a name, oldest first.',
  });

export const VersionSchemaOut = VersionSummarySchema.extend({
  name: z.string(),
  content: z.string().nullable().meta({ description: 'The text of this version; null for a deletion.' }),
}).meta({ id: 'StoredConfigVersion' });

export const ReloadSchema = z
  .looseObject({
    reloaded_at: Timestamp,
    source: z.literal('db'),
    changed: z
      .array(z.string())
      .meta({ description: 'Setting keys whose newly loaded value differs from the one in force.' }),
    applied: z
      .array(z.string())
      .meta({ description: 'Changed settings now in force, on this replica and every other.' }),
    restart_required: z
      .array(z.string())
      .meta({ description: 'Changed settings that keep their running value until a restart.' }),
    replicas_notified: z.boolean().meta({
      description:
        'True when the reload was broadcast to the other replicas (they load and apply their own sources); false when the event bus refused it, and they keep their configuration until reloaded.',
    }),
  })
  .meta({ id: 'ConfigReload' });

/** A 400 here may list settings: each error then also names the setting's `key` and `source`. */
export const ConfigProblemSchema = ProblemSchema.extend({
  errors: z
    .array(
      z.object({
        field: z.string().meta({
          description: 'The failing part: a setting key, `(document)`, a path parameter, `(body)`.',
        }),
        message: z.string(),
        key: z
          .string()
          .optional()
          .meta({ description: 'For a settings error: the dotted setting key, or `(document)`.' }),
        source: z.string().optional().meta({
          description:
            'For a settings error: where the value came from (`request body`, `environment variable LOG_LEVEL`, `database config "control-plane"`, `file /etc/switchyard.yaml`, `default`).',
        }),
      }),
    )
    .optional(),
}).meta({
  id: 'ConfigProblem',
  description: 'A problem document whose errors may name settings and their sources.',
});
