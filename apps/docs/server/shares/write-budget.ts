/**
 * The write budget of publishing: how many bytes of run bundles one client address may store in
 * a sliding window. The request budget of the front server counts requests, not bytes, so on
 * its own it lets one address store 120 full-size bundles a minute.
 */
export interface WriteBudget {
  bytes: number;
  windowSeconds: number;
}

/** One publish a client made: how many bytes it stored, and when. */
export interface WriteRecord {
  bytes: number;
  at: Date;
}

export type BudgetVerdict =
  | { allowed: true }
  | {
      allowed: false;
      /** Bytes the client stored within the window. */
      usedBytes: number;
      /** Whole seconds until enough of those writes leave the window for this one to fit. */
      retryAfterSeconds: number;
    };

/** Where the window that ends at `at` begins. */
export function windowStart(budget: WriteBudget, at: Date): Date {
  return new Date(at.getTime() - budget.windowSeconds * 1000);
}

/**
 * Whether a write of `bytes` at `at` fits the budget, given the client's writes within the window
 * (oldest first). A sliding window, not a fixed one: a client cannot store a full budget at the
 * end of one window and another at the start of the next. A write larger than the whole budget
 * never fits; the caller refuses it as too large rather than asking the client to wait.
 */
export function checkWriteBudget(
  budget: WriteBudget,
  recent: readonly WriteRecord[],
  bytes: number,
  at: Date,
): BudgetVerdict {
  const usedBytes = recent.reduce((sum, write) => sum + write.bytes, 0);
  if (usedBytes + bytes <= budget.bytes) return { allowed: true };
  // The oldest writes leave the window first; wait until enough of them have.
  let remaining = usedBytes;
  let freedAt = at.getTime();
  for (const write of recent) {
    remaining -= write.bytes;
    freedAt = write.at.getTime() + budget.windowSeconds * 1000;
    if (remaining + bytes <= budget.bytes) break;
  }
  return {
    allowed: false,
    usedBytes,
    retryAfterSeconds: Math.max(1, Math.ceil((freedAt - at.getTime()) / 1000)),
  };
}
