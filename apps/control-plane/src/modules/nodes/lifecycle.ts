import type { AdminState, LifecycleStatus, NodeInstanceRecord, StatusReason } from './schemas.ts';

/**
 * The node lifecycle rules (content/concepts/node-lifecycle.md) as pure functions: given what an instance is now and what just
 * happened, which status it moves to and why. No I/O here, so every rule is tested on its own and
 * the services only decide *when* a rule runs.
 */

/** A status change decided by a rule; null means the status stays as it is. */
export type Move = { status: LifecycleStatus; reason: StatusReason } | null;

/** Ranking used to pick a node's headline status among its instances (best first). */
const STATUS_RANK: Record<LifecycleStatus, number> = { ready: 0, degraded: 1, starting: 2, offline: 3 };

export function compareStatus(a: LifecycleStatus, b: LifecycleStatus): number {
  return STATUS_RANK[a] - STATUS_RANK[b];
}

/**
 * Registration (new or replacing the same id and version) starts the instance over in
 * `starting`, except that an operator's `stop` survives: a stopped instance stays offline until
 * `start`. A `shutdown` does not survive: a re-registering agent is a new process.
 */
export function stateAtRegistration(existing: NodeInstanceRecord | undefined): {
  status: LifecycleStatus;
  reason: StatusReason;
  adminState: AdminState;
} {
  if (existing?.adminState === 'stopped')
    return { status: 'offline', reason: 'stopped', adminState: 'stopped' };
  return { status: 'starting', reason: 'registered', adminState: 'active' };
}

/**
 * What an agent's own claim (heartbeat status, PATCH status, lifecycle/status) does. A claim
 * never overrides the operator (stopped / shut down instances stay offline) nor the health
 * monitor: an agent that says `ready` while its health checks fail stays `degraded` until the
 * monitor sees it healthy for the recovery debounce.
 */
export function moveAfterClaim(
  current: NodeInstanceRecord,
  claim: LifecycleStatus,
  consecutiveFailuresThreshold: number,
): Move {
  if (current.adminState !== 'active') return null;
  const status = current.lifecycleStatus;
  const resumed = status === 'offline';
  switch (claim) {
    case 'ready': {
      if (status === 'degraded' && current.statusReason === 'health_check_failed') return null;
      if (current.health.consecutiveFailures >= consecutiveFailuresThreshold) {
        return status === 'degraded' ? null : { status: 'degraded', reason: 'health_check_failed' };
      }
      if (status === 'ready') return null;
      return { status: 'ready', reason: resumed ? 'heartbeat_resumed' : 'agent_reported' };
    }
    case 'starting': {
      // Still initialising after the max transition time: stay degraded until it says ready,
      // or every `starting` heartbeat would flap it back and forth.
      if (status === 'starting') return null;
      if (status === 'degraded' && current.statusReason === 'transition_timeout') return null;
      return { status: 'starting', reason: resumed ? 'heartbeat_resumed' : 'agent_reported' };
    }
    case 'degraded':
      return status === 'degraded' ? null : { status: 'degraded', reason: 'agent_reported' };
    case 'offline':
      return status === 'offline' ? null : { status: 'offline', reason: 'agent_reported' };
  }
}

/** Thresholds of the health rules. */
export interface HealthRules {
  consecutiveFailures: number;
  recoveryDebounceMs: number;
}

/**
 * What one health probe does. Failures count up; at the threshold a `ready` instance becomes
 * `degraded`. Successes reset the count and start (or continue) a healthy run; an instance the
 * monitor degraded returns to `ready` once that run has lasted the recovery debounce. An
 * instance an operator just started (`starting`, reason `started`) becomes `ready` on its first
 * healthy probe. Instances that are initialising on their own wait for the agent to say so.
 */
export function moveAfterProbe(
  current: NodeInstanceRecord,
  ok: boolean,
  now: number,
  rules: HealthRules,
): { move: Move; consecutiveFailures: number; healthySince: number | null } {
  if (!ok) {
    const consecutiveFailures = current.health.consecutiveFailures + 1;
    const move: Move =
      current.adminState === 'active' &&
      current.lifecycleStatus === 'ready' &&
      consecutiveFailures >= rules.consecutiveFailures
        ? { status: 'degraded', reason: 'health_check_failed' }
        : null;
    return { move, consecutiveFailures, healthySince: null };
  }
  const healthySince = current.health.healthySince ? Date.parse(current.health.healthySince) : now;
  let move: Move = null;
  if (current.adminState === 'active') {
    if (
      current.lifecycleStatus === 'degraded' &&
      current.statusReason === 'health_check_failed' &&
      now - healthySince >= rules.recoveryDebounceMs
    ) {
      move = { status: 'ready', reason: 'health_recovered' };
    } else if (current.lifecycleStatus === 'starting' && current.statusReason === 'started') {
      move = { status: 'ready', reason: 'health_check_passed' };
    }
  }
  return { move, consecutiveFailures: 0, healthySince };
}

/** True when new executions may be routed to this instance. */
export function isRoutable(instance: NodeInstanceRecord): boolean {
  return (
    instance.adminState === 'active' && instance.lifecycleStatus === 'ready' && instance.trafficWeight > 0
  );
}

/**
 * Presence adapts to each instance's rhythm. The lease of a sign of life lasts three of the
 * instance's heartbeat intervals, the same margin the spec's 15 s TTL gives an agent that
 * heartbeats every 5 s (the interval the register answer suggests), so one or two lost
 * heartbeats never take a live agent offline.
 */
export const RHYTHM_FACTOR = 3;

/**
 * How fast the observed interval forgets a long gap: it halves over this much time of faster
 * signs of life. Slow enough that a burst of reports between two regular heartbeats (up to about
 * 45 s of them: 3 x 0.5^(45/30) > 1) leaves the lease longer than the next regular gap; fast
 * enough that an agent heartbeating every 5 s is back on the TTL floor about 80 s after it
 * registered (the assumed 30 s halves to 15 s, then to under 5 s).
 */
export const RHYTHM_HALF_LIFE_MS = 30_000;

/** The settings the rhythm rule reads. */
export interface RhythmSettings {
  heartbeatTtlMs: number;
  maxHeartbeatTtlMs: number;
  assumedHeartbeatIntervalMs: number;
}

/**
 * How long a sign of life keeps an instance online: 3 × its heartbeat interval (the observed one,
 * or the assumed one before any is observed), at most `max_heartbeat_ttl`, never less than the
 * spec's `heartbeat_ttl`.
 */
export function leaseTtlMs(observedIntervalMs: number | null, settings: RhythmSettings): number {
  const interval = observedIntervalMs ?? settings.assumedHeartbeatIntervalMs;
  return Math.max(settings.heartbeatTtlMs, Math.min(settings.maxHeartbeatTtlMs, RHYTHM_FACTOR * interval));
}

/**
 * The observed interval after a sign of life `gapMs` after the previous heartbeat: the longest
 * recent gap, decaying by half every {@link RHYTHM_HALF_LIFE_MS}. An instance with no observed
 * interval starts from the assumed one. No gap (the first heartbeat), a gap of zero or less
 * (clock skew between replicas) and a gap longer than `max_heartbeat_ttl` (an outage, not a
 * rhythm) leave the interval as it is. The heartbeat UPDATE computes the same in SQL
 * (repository.recordHeartbeat); this is its readable statement, and the tests hold both to it.
 */
export function nextObservedInterval(
  observedIntervalMs: number | null,
  gapMs: number | null,
  settings: RhythmSettings,
): number | null {
  if (gapMs === null || gapMs <= 0 || gapMs > settings.maxHeartbeatTtlMs) return observedIntervalMs;
  const previous = observedIntervalMs ?? settings.assumedHeartbeatIntervalMs;
  return Math.max(gapMs, previous * 0.5 ** (gapMs / RHYTHM_HALF_LIFE_MS));
}
