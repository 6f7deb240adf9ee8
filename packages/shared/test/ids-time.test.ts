import { describe, expect, it } from 'vitest';
import { ID_PATTERN, newId, nowIso, parseDuration, toIso, toIsoOrNull } from '../src/index.ts';

describe('newId', () => {
  it('has the prefix and 26 base32 characters', () => {
    const id = newId('exec');
    expect(id).toMatch(/^exec_[0-9a-z]{26}$/);
    expect(id).toMatch(ID_PATTERN);
  });

  it('never repeats across 100,000 ids and spreads every character position', () => {
    const ids = new Set<string>();
    const seen = Array.from({ length: 26 }, () => new Set<string>());
    for (let i = 0; i < 100_000; i++) {
      const body = newId('n').slice(2);
      ids.add(body);
      for (let p = 0; p < 26; p++) seen[p]!.add(body[p]!);
    }
    expect(ids.size).toBe(100_000);
    // 130 bits = 26 chars x 5 bits; every position must use the whole alphabet to carry them.
    for (const position of seen) expect(position.size).toBe(32);
  });

  it('refuses prefixes that would break the shape', () => {
    expect(() => newId('Exec')).toThrow();
    expect(() => newId('a_b')).toThrow();
  });
});

describe('time helpers', () => {
  it('formats ISO-8601 UTC', () => {
    expect(toIso(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(nowIso()).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(toIsoOrNull(null)).toBeNull();
    expect(() => toIso('not a date')).toThrow(RangeError);
  });

  it('parses durations with units', () => {
    expect(parseDuration('15s')).toBe(15_000);
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration(42)).toBe(42);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(() => parseDuration('soon')).toThrow(/not a duration/);
    expect(() => parseDuration(-1)).toThrow();
  });
});
