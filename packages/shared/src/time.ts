/** ISO-8601 UTC with milliseconds, e.g. 2026-11-22T05:08:52.123Z. */
export function toIso(value: Date | number | string): string {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) throw new RangeError(`not a valid time: ${String(value)}`);
  return date.toISOString();
}

/** The current time as ISO-8601 UTC. */
export function nowIso(): string {
  return new Date().toISOString();
}

/** ISO-8601 UTC, or null for a missing value (database columns that may be empty). */
export function toIsoOrNull(value: Date | number | string | null | undefined): string | null {
  return value === null || value === undefined ? null : toIso(value);
}

/** Parses durations written as `15s`, `5m`, `250ms`, `2h` or a bare number of milliseconds. */
export function parseDuration(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`not a duration: ${value}`);
    return value;
  }
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(value);
  if (!match) throw new RangeError(`not a duration: "${value}" (use e.g. 250ms, 15s, 5m, 2h)`);
  const amount = Number(match[1]);
  const unit = match[2] ?? 'ms';
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit as 'ms' | 's' | 'm' | 'h'];
  return Math.round(amount * factor);
}
