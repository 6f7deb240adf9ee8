import type { Clock } from '../../platform/clock.ts';
import { createLogger, type Logger } from '../../platform/logger.ts';
import {
  degradeStuckStarting,
  type Executor,
  evictOffline,
  expireLeases,
  type InstanceKey,
  purgeEvicted,
} from './repository.ts';
import type { LifecycleStatus } from './schemas.ts';
import type { NodeLifecycleSettings } from './settings.ts';
import type { NodeTransitions } from './transitions.ts';

export interface PresenceDeps {
  db: Executor;
  transitions: NodeTransitions;
  clock: Clock;
  settings: NodeLifecycleSettings;
  /** Where failures of background passes are logged; a fresh app logger when omitted. */
  log?: Logger;
}

/** What one sweep or reconcile pass changed. */
export interface SweepReport {
  /** Instances whose lease ran out, with the status they left. */
  expired: Array<InstanceKey & { oldStatus: LifecycleStatus }>;
  /** Instances evicted by the hard-evict rule (kept for revival until the retention ends). */
  evicted: InstanceKey[];
  /** Evicted instances deleted for good at the end of their retention. */
  purged: InstanceKey[];
  /** Instances moved from `starting` to `degraded` by the max transition time. */
  timedOut: InstanceKey[];
}

/**
 * The presence manager. Its sweep (every `sweepIntervalMs`) takes offline every instance whose
 * heartbeat lease ran out (leases adapt to each node's rhythm: lifecycle.leaseTtlMs), evicts
 * instances offline and unseen for `hardEvictMs`, and deletes evicted ones whose
 * `evictedRetentionMs` has passed (until then a heartbeat revives them). Its reconcile pass (every `reconcileIntervalMs`) also applies the max transition
 * time: an instance still `starting` after `maxTransitionMs` while heartbeating becomes `degraded`
 * (it is alive, so not offline, but it is not doing what it said it would). Every statement is a
 * conditional UPDATE or DELETE ... RETURNING, so all replicas may sweep at once and each
 * transition is reported by exactly one of them.
 */
export function createPresenceManager(deps: PresenceDeps) {
  const log = deps.log ?? createLogger();
  const timers: NodeJS.Timeout[] = [];
  // Sweep and reconcile run on separate timers and may overlap, so stop() must wait for every
  // pass under way, not only the one that started last.
  const inFlight = new Set<Promise<unknown>>();

  async function tick(): Promise<SweepReport> {
    const now = deps.clock.now();
    const swept = await expireLeases(deps.db, new Date(now));
    await deps.transitions.publishAll(
      swept.map(({ record, oldStatus }) =>
        deps.transitions.statusChangedEvent(record, oldStatus, 'heartbeat_expired'),
      ),
    );
    const evicted = await evictOffline(deps.db, new Date(now - deps.settings.hardEvictMs), new Date(now));
    await deps.transitions.publishAll(
      evicted.map((key) => deps.transitions.announcementEvent('node.removed', key)),
    );
    // After the eviction, so a retention of 0 deletes what this very pass evicted.
    const purged = await purgeEvicted(deps.db, new Date(now - deps.settings.evictedRetentionMs));
    return {
      expired: swept.map(({ record, oldStatus }) => ({
        nodeId: record.nodeId,
        version: record.version,
        oldStatus,
      })),
      evicted,
      purged,
      timedOut: [],
    };
  }

  async function reconcile(): Promise<SweepReport> {
    const report = await tick();
    const now = deps.clock.now();
    const stuck = await degradeStuckStarting(
      deps.db,
      new Date(now - deps.settings.maxTransitionMs),
      new Date(now),
    );
    await deps.transitions.publishAll(
      stuck.map((record) => deps.transitions.statusChangedEvent(record, 'starting', 'transition_timeout')),
    );
    report.timedOut = stuck.map((record) => ({ nodeId: record.nodeId, version: record.version }));
    return report;
  }

  function every(periodMs: number, job: () => Promise<unknown>, name: string): void {
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return; // a slow database must not pile up overlapping passes
      busy = true;
      const pass = job()
        .catch((error) => log.error({ err: error }, name))
        .finally(() => {
          busy = false;
          inFlight.delete(pass);
        });
      inFlight.add(pass);
    }, periodMs);
    timer.unref();
    timers.push(timer);
  }

  return {
    /** One sweep: lease expiry and hard eviction. */
    tick,
    /** One reconcile pass: a sweep plus the max-transition-time rule. */
    reconcile,
    start(): void {
      if (timers.length > 0) return;
      every(deps.settings.sweepIntervalMs, tick, 'presence sweep');
      every(deps.settings.reconcileIntervalMs, reconcile, 'status reconcile');
    },
    async stop(): Promise<void> {
      for (const timer of timers.splice(0)) clearInterval(timer);
      await Promise.all(inFlight);
    },
  };
}

export type PresenceManager = ReturnType<typeof createPresenceManager>;
