import { z } from 'zod';

/**
 * The `limit` query parameter of a paged list: a whole number from 1 to `max`, `fallback` when
 * absent. `items` names what is counted, for the OpenAPI description ("Most batches in the page").
 */
export function pageLimitQuery(options: { max: number; fallback: number; items: string }) {
  const { max, fallback, items } = options;
  return z
    .string()
    .optional()
    .meta({ description: `Most ${items} in the page (1 to ${max}, default ${fallback}).` })
    .transform((value, ctx) => {
      if (value === undefined) return fallback;
      const n = /^\d{1,9}$/.test(value) ? Number(value) : Number.NaN;
      if (n >= 1 && n <= max) return n;
      ctx.addIssue({
        code: 'custom',
        message: `must be a whole number from 1 to ${max} (got ${JSON.stringify(value.slice(0, 20))})`,
      });
      return z.NEVER;
    });
}

/**
 * The `cursor` query parameter of a paged list: the `next_cursor` of an earlier page, turned back
 * into a position by `decode` (undefined for anything this list never gave out).
 */
export function pageCursorQuery<T>(decode: (value: string) => T | undefined) {
  return z
    .string()
    .optional()
    .meta({ description: 'Continue after the previous page: its `next_cursor`, as given.' })
    .transform((value, ctx) => {
      if (value === undefined) return undefined;
      const cursor = decode(value);
      if (cursor !== undefined) return cursor;
      ctx.addIssue({
        code: 'custom',
        message: 'is not a cursor this endpoint gave out (use next_cursor as is)',
      });
      return z.NEVER;
    });
}
