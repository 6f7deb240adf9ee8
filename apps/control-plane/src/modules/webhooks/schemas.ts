import { ProblemError } from '@switchyard/shared';
import { z } from 'zod';
import { pageCursorQuery, pageLimitQuery } from '../../platform/http/paging.ts';
import { timeInRange } from '../../platform/http/timestamps.ts';
import type { DeadLetterCursor } from './repository.ts';

/**
 * An execution id as the routes accept it. Ids are `exec_` plus 26 base32 characters; anything
 * that could never be one (a slash, a space, 129 characters) names no execution, so it is a 404
 * without a database read, as for node ids.
 */
export const ExecutionIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, 'use letters, digits, "_", ".", ":" and "-"');

export const DEAD_LETTER_DEFAULT_LIMIT = 50;
export const DEAD_LETTER_MAX_LIMIT = 500;

/** A cursor is the base64url of `<dead_at ISO>|<delivery_id>`: opaque to clients, cheap to check. */
export function encodeCursor(cursor: DeadLetterCursor): string {
  return Buffer.from(`${cursor.deadAt}|${cursor.deliveryId}`, 'utf8').toString('base64url');
}

function decodeCursor(value: string): DeadLetterCursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(value)) return undefined;
  const [deadAt, deliveryId, ...rest] = Buffer.from(value, 'base64url').toString('utf8').split('|');
  if (rest.length > 0 || !deadAt || !deliveryId || !/^whd_[0-9a-z]{26}$/.test(deliveryId)) return undefined;
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(deadAt) || !timeInRange(deadAt)) {
    return undefined;
  }
  return { deadAt, deliveryId };
}

/** The query of GET /api/ui/v1/webhooks/dead-letters. */
export const DeadLetterQuerySchema = z.object({
  limit: pageLimitQuery({
    max: DEAD_LETTER_MAX_LIMIT,
    fallback: DEAD_LETTER_DEFAULT_LIMIT,
    items: 'dead letters',
  }),
  cursor: pageCursorQuery(decodeCursor),
});

/** The path parameter, or 404: an id that could never exist names no execution. */
export function executionIdOf(value: unknown): string {
  const id = String(value);
  if (!ExecutionIdSchema.safeParse(id).success) {
    throw new ProblemError(
      'not_found',
      `Execution "${id.slice(0, 200)}" does not exist (not a valid execution id).`,
    );
  }
  return id;
}
