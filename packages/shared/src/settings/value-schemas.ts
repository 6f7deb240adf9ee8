import { z } from 'zod';
import { parseDuration } from '../time.ts';

// Every setting arrives either as a string (environment variables) or as whatever YAML produced
// (a number, a list, a string). Each schema here accepts both shapes and says in plain words what
// it wanted, because its message ends up in the start-up error next to the key and its source.

function quoted(value: unknown): string {
  return typeof value === 'string' ? `"${value}"` : JSON.stringify(value);
}

/** A duration such as `15s`, `5m`, `250ms`, `2h`, or a bare number of milliseconds; yields ms. */
export function durationSetting(options: { min?: number } = {}) {
  const min = options.min ?? 1;
  return z.unknown().transform((value, ctx) => {
    let ms: number;
    try {
      if (typeof value !== 'string' && typeof value !== 'number') throw new RangeError('not a duration');
      ms = parseDuration(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: `${quoted(value)} is not a duration (use 15s, 5m)` });
      return z.NEVER;
    }
    if (ms < min) {
      ctx.addIssue({
        code: 'custom',
        message: `${quoted(value)} is too short (at least ${min} ms${min === 0 ? '; 0 disables' : ''})`,
      });
      return z.NEVER;
    }
    return ms;
  });
}

/** A whole number within bounds, written as a number or a numeric string. */
export function integerSetting(min: number, max: number) {
  return z.unknown().transform((value, ctx) => {
    const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
      ctx.addIssue({
        code: 'custom',
        message: `${quoted(value)} is not a whole number from ${min} to ${max}`,
      });
      return z.NEVER;
    }
    return n;
  });
}

function stringValue(value: unknown, ctx: z.RefinementCtx): string | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  if (typeof value !== 'string' && typeof value !== 'number') {
    ctx.addIssue({ code: 'custom', message: `${quoted(value)} is not a string` });
    return undefined;
  }
  return String(value);
}

/** A non-empty string. */
export function textSetting() {
  return z.unknown().transform((value, ctx) => {
    const text = stringValue(value, ctx);
    if (text === undefined) {
      if (value === null || value === undefined || value === '') {
        ctx.addIssue({ code: 'custom', message: 'must not be empty' });
      }
      return z.NEVER;
    }
    return text;
  });
}

/** A string that may be left out; an empty value reads as "not set". */
export function optionalTextSetting() {
  return z.unknown().transform((value, ctx) => stringValue(value, ctx));
}

/**
 * A list of strings: a YAML list, or a comma-separated string (the only way an environment
 * variable can carry a list). Each item is trimmed, empty items are dropped, then `item` checks it.
 */
export function listSetting(item: (entry: string) => string | undefined) {
  return z.unknown().transform((value, ctx) => {
    let entries: unknown[];
    if (value === null || value === undefined) entries = [];
    else if (typeof value === 'string') entries = value.split(',');
    else if (Array.isArray(value)) entries = value;
    else {
      ctx.addIssue({ code: 'custom', message: `${quoted(value)} is not a list (use a YAML list or a,b,c)` });
      return z.NEVER;
    }
    const list: string[] = [];
    for (const entry of entries) {
      if (typeof entry !== 'string') {
        ctx.addIssue({ code: 'custom', message: `list item ${quoted(entry)} is not a string` });
        return z.NEVER;
      }
      const trimmed = entry.trim();
      if (trimmed === '') continue;
      const problem = item(trimmed);
      if (problem) {
        ctx.addIssue({ code: 'custom', message: `list item "${trimmed}" ${problem}` });
        return z.NEVER;
      }
      if (!list.includes(trimmed)) list.push(trimmed);
    }
    return list;
  });
}

const TRUE_WORDS = new Set(['true', '1', 'yes', 'on']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'off']);

/** A boolean: YAML true/false, or the words true/false, 1/0, yes/no, on/off in any case. */
export function booleanSetting() {
  return z.unknown().transform((value, ctx) => {
    if (typeof value === 'boolean') return value;
    const word =
      typeof value === 'string' || typeof value === 'number' ? String(value).trim().toLowerCase() : '';
    if (TRUE_WORDS.has(word)) return true;
    if (FALSE_WORDS.has(word)) return false;
    ctx.addIssue({ code: 'custom', message: `${quoted(value)} is not true or false` });
    return z.NEVER;
  });
}

/** One of a fixed set of words. */
export function choiceSetting<const T extends readonly [string, ...string[]]>(choices: T) {
  return z.unknown().transform((value, ctx) => {
    if (typeof value === 'string' && (choices as readonly string[]).includes(value.trim())) {
      return value.trim() as T[number];
    }
    ctx.addIssue({ code: 'custom', message: `${quoted(value)} is not one of ${choices.join(', ')}` });
    return z.NEVER;
  });
}
