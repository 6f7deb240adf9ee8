import { InvalidArgumentError } from 'commander';
import { UsageError } from './failures.ts';

/** A whole number from `min` to `max`, for options and arguments commander parses. */
export function integerIn(min: number, max: number) {
  return (text: string): number => {
    if (!/^-?\d+$/.test(text))
      throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}.`);
    const value = Number(text);
    if (value < min || value > max) throw new InvalidArgumentError(`must be from ${min} to ${max}.`);
    return value;
  };
}

/** One of a fixed set of words. */
export function oneOf<T extends string>(choices: readonly T[]) {
  return (text: string): T => {
    if (!(choices as readonly string[]).includes(text)) {
      throw new InvalidArgumentError(`must be one of ${choices.join(', ')}.`);
    }
    return text as T;
  };
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * A point in time for --since: a span back from `now` (`30s`, `15m`, `1h`, `2d`, `1w`) or an ISO
 * 8601 time with an offset; answered as ISO 8601 in UTC.
 */
export function sinceTime(now: () => number = Date.now) {
  return (text: string): string => {
    const span = /^(\d+)\s*([smhdw])$/.exec(text.trim());
    if (span) return new Date(now() - Number(span[1]) * UNITS[span[2]!]!).toISOString();
    if (/^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:?\d{2})$/.test(text) && !Number.isNaN(Date.parse(text))) {
      return new Date(text).toISOString();
    }
    throw new InvalidArgumentError(
      'must be a span such as 30s, 15m, 1h, 2d, 1w, or an ISO 8601 time with an offset.',
    );
  };
}

/**
 * A value written on the command line as `key=value`: JSON when it parses as JSON (`n=3`,
 * `ok=true`, `tags=["a"]`, `s="3"`), else the text itself (`text=hello world`).
 */
export function parseAssignment(text: string): [string, unknown] {
  const at = text.indexOf('=');
  if (at <= 0) throw new UsageError(`"${text}" is not key=value (or use --input '{...}').`);
  const key = text.slice(0, at);
  const raw = text.slice(at + 1);
  try {
    return [key, JSON.parse(raw)];
  } catch {
    return [key, raw];
  }
}
