import { z } from 'zod';

/**
 * Times clients send: a `since` parameter, or the time inside a page cursor. JavaScript's Date
 * accepts years 0 and below and up to 275760; PostgreSQL and PGlite refuse some of those (there
 * is no year 0), and such a time reached the database and came back as a 500 "date/time field
 * value out of range". Every time a request carries is held to one range here, the four-digit
 * years of ISO 8601, and refused with a 400 outside it.
 */

/** The earliest time a request may name. */
export const EARLIEST_TIME = '0001-01-01T00:00:00Z';
/** The latest time a request may name. */
export const LATEST_TIME = '9999-12-31T23:59:59.999Z';

const EARLIEST_MS = Date.parse(EARLIEST_TIME);
const LATEST_MS = Date.parse(LATEST_TIME);

/** The accepted range, as problem messages and parameter descriptions spell it. */
export const TIME_RANGE = `from ${EARLIEST_TIME} to ${LATEST_TIME}`;

/** The time `text` names, when Date reads it and it lies in the accepted range; else undefined. */
export function timeInRange(text: string): Date | undefined {
  const ms = Date.parse(text);
  return ms >= EARLIEST_MS && ms <= LATEST_MS ? new Date(ms) : undefined;
}

/**
 * A query parameter holding a time: ISO 8601 with `Z` or an offset, within {@link TIME_RANGE},
 * read as a Date. Out of range answers 400 naming the parameter and the range.
 */
export function timeQuery() {
  return z.iso.datetime({ offset: true }).transform((value, ctx) => {
    const at = timeInRange(value);
    if (at) return at;
    ctx.addIssue({
      code: 'custom',
      message: `must be a time ${TIME_RANGE} (got ${JSON.stringify(value.slice(0, 40))})`,
    });
    return z.NEVER;
  });
}
