import { describe, expect, it } from 'vitest';
import { checkWriteBudget, type WriteRecord, windowStart } from '../server/shares/write-budget.ts';

const budget = { bytes: 1000, windowSeconds: 60 };
const at = new Date('2026-11-22T06:00:00Z');
const ago = (seconds: number, bytes: number): WriteRecord => ({
  bytes,
  at: new Date(at.getTime() - seconds * 1000),
});

describe('checkWriteBudget', () => {
  it('allows a write that fits what is left of the window, up to the exact budget', () => {
    expect(checkWriteBudget(budget, [], 1000, at)).toEqual({ allowed: true });
    expect(checkWriteBudget(budget, [ago(30, 400)], 600, at)).toEqual({ allowed: true });
  });

  it('refuses a write over the budget until enough of the oldest writes have left the window', () => {
    // 900 bytes used; 300 more need the 500-byte write (50 s ago) gone, which happens in 10 s.
    const recent = [ago(50, 500), ago(20, 300), ago(5, 100)];
    expect(checkWriteBudget(budget, recent, 300, at)).toEqual({
      allowed: false,
      usedBytes: 900,
      retryAfterSeconds: 10,
    });
    // 700 more need the first two gone: the second leaves in 40 s.
    expect(checkWriteBudget(budget, recent, 700, at)).toMatchObject({ retryAfterSeconds: 40 });
  });

  it('never asks for less than one second', () => {
    expect(checkWriteBudget(budget, [ago(59.9, 1000)], 1, at)).toMatchObject({ retryAfterSeconds: 1 });
  });

  it('measures the window back from the write', () => {
    expect(windowStart(budget, at).toISOString()).toBe('2026-11-22T05:59:00.000Z');
  });
});
