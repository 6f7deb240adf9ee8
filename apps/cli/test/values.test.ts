import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { readInput } from '../src/commands/call.ts';
import { UsageError } from '../src/failures.ts';
import { integerIn, parseAssignment, sinceTime } from '../src/values.ts';

describe('sinceTime', () => {
  const since = sinceTime(() => Date.parse('2026-01-01T12:00:00Z'));

  it('takes a span back from now', () => {
    expect(since('1h')).toBe('2026-01-01T11:00:00.000Z');
    expect(since('30s')).toBe('2026-01-01T11:59:30.000Z');
    expect(since('2d')).toBe('2025-12-30T12:00:00.000Z');
  });

  it('takes an ISO time with an offset, and refuses anything else', () => {
    expect(since('2026-01-01T10:00:00+02:00')).toBe('2026-01-01T08:00:00.000Z');
    expect(() => since('yesterday')).toThrow(InvalidArgumentError);
    expect(() => since('2026-01-01T10:00:00')).toThrow(InvalidArgumentError);
  });
});

describe('integerIn', () => {
  it('takes whole numbers in range only', () => {
    expect(integerIn(0, 10)('7')).toBe(7);
    expect(() => integerIn(0, 10)('11')).toThrow('must be from 0 to 10');
    expect(() => integerIn(0, 10)('2.5')).toThrow('whole number');
  });
});

describe('key=value input', () => {
  it('reads JSON values as JSON and anything else as text', () => {
    expect(parseAssignment('n=3')).toEqual(['n', 3]);
    expect(parseAssignment('ok=true')).toEqual(['ok', true]);
    expect(parseAssignment('s="3"')).toEqual(['s', '3']);
    expect(parseAssignment('text=One. Two=2')).toEqual(['text', 'One. Two=2']);
    expect(() => parseAssignment('novalue')).toThrow(UsageError);
  });

  it('takes the input one way only, and only a JSON object', () => {
    expect(readInput({}, ['a=1', 'b=x'])).toEqual({ a: 1, b: 'x' });
    expect(readInput({ input: '{"a": [1]}' }, [])).toEqual({ a: [1] });
    expect(readInput({}, [])).toEqual({});
    expect(() => readInput({ input: '{}' }, ['a=1'])).toThrow('one way');
    expect(() => readInput({ input: '[1]' }, [])).toThrow('must be a JSON object');
    expect(() => readInput({ input: '{' }, [])).toThrow('is not JSON');
  });
});
