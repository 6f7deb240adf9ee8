import type { Clock } from '../../src/platform/clock.ts';

/** A clock tests move by hand, so presence and health rules run without waiting. */
export interface ManualClock extends Clock {
  advance(ms: number): void;
  set(ms: number): void;
}

export function manualClock(start = Date.parse('2026-01-01T00:00:00.000Z')): ManualClock {
  let now = start;
  return {
    now: () => now,
    advance(ms) {
      now += ms;
    },
    set(ms) {
      now = ms;
    },
  };
}
