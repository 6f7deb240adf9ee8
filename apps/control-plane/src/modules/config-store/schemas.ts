import { z } from 'zod';
import { pageCursorQuery, pageLimitQuery } from '../../platform/http/paging.ts';

/** Largest configuration text stored (content/reference/limits.md: at most 1 MB), in bytes. */
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
