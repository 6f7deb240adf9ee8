import { z } from 'zod';
import { pageCursorQuery, pageLimitQuery } from '../../platform/http/paging.ts';

/** Largest configuration text stored (spec §8 "Config body: at most 1 MB"), in bytes. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** Longest config name. */
export const MAX_NAME_LENGTH = 128;

/** Longest `X-Updated-By` value recorded. */
export const MAX_UPDATED_BY_LENGTH = 200;

/** The path segment under the configs prefix that is an operation, never a name. */
export const RESERVED_NAME = 'reload';

/**
 * A config name: it travels as one path segment, so it is limited to characters no client
 * escapes or normalises. `.` and `..` alone would be resolved away by clients (`/configs/..` is
 * `/`), and `reload` is the reload operation's path (any case: paths match case-insensitively).
 */
export const ConfigNameSchema = z
  .string()
  .min(1)
  .max(MAX_NAME_LENGTH)
  .regex(/^[A-Za-z0-9._-]+$/, 'may contain only letters, digits, ".", "_" and "-"')
  .refine((name) => !/^\.+$/.test(name), 'must not be only dots')
  .refine((name) => name.toLowerCase() !== RESERVED_NAME, `"${RESERVED_NAME}" is reserved`)
  .meta({
    description: `1 to ${MAX_NAME_LENGTH} characters: letters, digits, \`.\`, \`_\` and \`-\` (not only dots; \`${RESERVED_NAME}\` is reserved). Case matters.`,
    example: 'control-plane',
  });

/** A version number in a path. */
export const VersionSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,8}$/, 'must be a whole number from 1')
  .transform(Number)
  .meta({ description: 'A version number (1 is the first text stored under the name).', example: '3' });

export const NamePathSchema = z.object({ config_name: ConfigNameSchema });

export const VERSION_LIST_DEFAULT_LIMIT = 100;
export const VERSION_LIST_MAX_LIMIT = 1000;

/** A versions cursor is the base64url of the last version listed: opaque to clients. */
export function encodeVersionCursor(version: number): string {
  return Buffer.from(String(version), 'utf8').toString('base64url');
}

function decodeVersionCursor(value: string): number | undefined {
  if (!/^[A-Za-z0-9_-]{1,16}$/.test(value)) return undefined;
  const text = Buffer.from(value, 'base64url').toString('utf8');
  return /^[1-9][0-9]{0,8}$/.test(text) && encodeVersionCursor(Number(text)) === value
    ? Number(text)
    : undefined;
}

/** `GET …/{config_name}/versions`: one page of versions, oldest first. */
export const VersionListQuerySchema = z.object({
  limit: pageLimitQuery({
    max: VERSION_LIST_MAX_LIMIT,
    fallback: VERSION_LIST_DEFAULT_LIMIT,
    items: 'versions',
  }),
  cursor: pageCursorQuery(decodeVersionCursor),
});
export const VersionPathSchema = z.object({ config_name: ConfigNameSchema, version: VersionSchema });

/** `X-Updated-By`: who made the change, recorded with the version; optional. */
export const UpdatedBySchema = z
  .string()
  .trim()
  .max(MAX_UPDATED_BY_LENGTH)
  .regex(/^[\x20-\x7e]*$/, 'must be printable ASCII')
  .optional()
  .transform((value) => (value ? value : null))
  .meta({
    description: `Who made the change (at most ${MAX_UPDATED_BY_LENGTH} printable ASCII characters); recorded with the version.`,
    example: 'alice',
  });

export const UpdatedByHeaders = z.object({ 'X-Updated-By': UpdatedBySchema });

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
