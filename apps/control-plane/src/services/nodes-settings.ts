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

/** The spec's defaults (§8). */
export const DEFAULT_NODE_LIFECYCLE: NodeLifecycleSettings = {
  heartbeatTtlMs: 15_000,
  sweepIntervalMs: 5_000,
  hardEvictMs: 300_000,
  statusCacheTtlMs: 300_000,
  reconcileIntervalMs: 30_000,
  maxTransitionMs: 120_000,
};

export const DEFAULT_NODE_HEALTH: NodeHealthSettings = {
  checkIntervalMs: 30_000,
  checkTimeoutMs: 5_000,
  consecutiveFailures: 3,
  recoveryDebounceMs: 60_000,
  heartbeatStaleThresholdMs: 60_000,
};
