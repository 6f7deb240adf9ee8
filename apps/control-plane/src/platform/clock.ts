/** A source of the current time in epoch milliseconds; tests pass one they can move. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
