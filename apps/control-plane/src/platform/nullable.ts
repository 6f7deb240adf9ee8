import type { z } from 'zod';

/**
 * An optional member that may also arrive as `null`: SDKs serialize an unset None/nil that way.
 * Null means absent, so nothing stored ever holds null where the type promises a value.
 */
export function nullable<T extends z.ZodType>(schema: T) {
  // The outer optional() keeps the member optional in the inferred type.
  return schema
    .nullish()
    .transform((value) => value ?? undefined)
    .optional();
}

/** Like {@link nullable}, with the value an absent or null member stands for. */
export function nullableWithDefault<T extends z.ZodType>(schema: T, fallback: () => z.output<T>) {
  return schema.nullish().transform((value): z.output<T> => value ?? fallback());
}
