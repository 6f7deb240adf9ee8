/**
 * The delay before retry `attempt + 1` of work retried from the database (webhook deliveries,
 * dispatches, approval decisions, collector batches): `initialMs` doubled per failure, capped at
 * `maxMs`. These retries are rows with a due time, not calls retried in process, so the in-process
 * retry libraries do not fit; this is the one formula they share.
 */
export function doublingBackoffMs(attempt: number, initialMs: number, maxMs: number): number {
  return Math.min(initialMs * 2 ** Math.max(0, attempt - 1), maxMs);
}
