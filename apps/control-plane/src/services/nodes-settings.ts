/** A source of the current time in epoch milliseconds; tests pass one they can move. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Presence and lifecycle timings (config `node_lifecycle:`), all in milliseconds. */
export interface NodeLifecycleSettings {
  heartbeatTtlMs: number;
  sweepIntervalMs: number;
  hardEvictMs: number;
  statusCacheTtlMs: number;
  reconcileIntervalMs: number;
  maxTransitionMs: number;
}

/** Health monitor settings (config `node_health:`), durations in milliseconds. */
export interface NodeHealthSettings {
  checkIntervalMs: number;
  checkTimeoutMs: number;
  consecutiveFailures: number;
  recoveryDebounceMs: number;
  heartbeatStaleThresholdMs: number;
}
