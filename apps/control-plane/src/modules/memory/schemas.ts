import { z } from 'zod';
import { nullable } from '../../platform/nullable.ts';
import { SCOPES } from './scopes.ts';

/** Longest key, in characters (UTF-16 code units). */
export const MAX_KEY_LENGTH = 255;

/** Entries per list page: the default and the most a page holds. */
export const LIST_PAGE_SIZE = 1000;

/**
 * A memory key: 1 to 255 characters, none of them a control character (U+0000–U+001F, U+007F)
 * and no lone UTF-16 surrogate. Keys travel in URLs, logs, event frames and headers of other
 * tools; control characters there are only ever an attack or a bug.
 */
export const KeySchema = z
  .string()
  .min(1)
  .max(MAX_KEY_LENGTH)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
  .refine((key) => !/[\u0000-\u001f\u007f]/.test(key), 'must not contain control characters')
  .refine((key) => key.isWellFormed(), 'must be well-formed Unicode (no lone surrogates)')
  .meta({ description: 'The key: 1 to 255 characters, no control characters.', example: 'draft' });

export const ScopeSchema = z.enum(SCOPES).meta({
  description:
    'The scope to use instead of the one the headers select: `workflow`, `session`, `actor` or `global`.',
});

/** A scope id, as `scope_id` or a context header carries it: printable ASCII, 1 to 256. */
export const ScopeIdSchema = z
  .string()
  // Trimmed like the context headers it stands in for, so " wf_1" names the same scope as wf_1.
  .trim()
  .min(1)
  .max(256)
  .regex(/^[\x20-\x7e]+$/, 'use printable ASCII characters')
  .meta({
    description:
      "The scope's id instead of its header (`X-Workflow-ID`, `X-Session-ID`, `X-Actor-ID`); needs `scope`.",
    example: 'sess_7',
  });

/** `scope` and `scope_id`, in every memory body and query; null (an SDK's unset member) is absent. */
export const ScopeFields = { scope: nullable(ScopeSchema), scope_id: nullable(ScopeIdSchema) };

/** `POST /api/v1/memory/set`. `data` is any JSON value, `null` included, but must be present. */
export const SetBodySchema = z
  .object({
    key: KeySchema,
    data: z
      .unknown()
      .meta({ description: 'Any JSON value: object, array, string, number, boolean or null.' }),
    ...ScopeFields,
  })
  .refine((body) => body.data !== undefined, {
    path: ['data'],
    message: 'Invalid input: expected a JSON value',
  });
export type SetBody = z.infer<typeof SetBodySchema>;

/** `POST /api/v1/memory/get` and `POST /api/v1/memory/delete`. */
export const KeyBodySchema = z.object({ key: KeySchema, ...ScopeFields });
export type KeyBody = z.infer<typeof KeyBodySchema>;

/** `GET /api/v1/memory/list`. */
export const ListQuerySchema = z.object({
  ...ScopeFields,
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(LIST_PAGE_SIZE)
    .default(LIST_PAGE_SIZE)
    .meta({ description: `Entries per page, 1 to ${LIST_PAGE_SIZE}.` }),
  after: KeySchema.optional().meta({
    description: 'Start after this key (the last key of the previous page); the `Link` header gives it.',
  }),
});
export type ListQuery = z.infer<typeof ListQuerySchema>;
