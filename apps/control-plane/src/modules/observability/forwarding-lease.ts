import type { Knex } from 'knex';
import type { Clock } from '../../platform/clock.ts';
import {
  acquireLease,
  type CollectorSettings,
  databaseNow,
  type ForwarderState,
  readSettings,
  releaseLease,
  restartForwarding,
} from './repository.ts';

export interface ForwardingLeaseDeps {
  db: Knex;
  clock: Clock;
  /** Names this replica in the lease. */
  replicaId: string;
  /** How long the lease lasts without renewal. */
  ttlMs: number;
  /** Events read ahead on this replica, recorded with each renewal. */
  queueDepth: () => number;
  /** This replica stopped forwarding: what it read ahead is to be forgotten. */
  onStepDown: () => void;
  /** This replica forwards (afresh) from these stored cursors, one per stream. */
  onLead: (cursors: Record<string, string>) => void;
}

/** Whether this replica forwards, and since when; what the reader, batcher and sender check. */
export interface LeaseView {
  /** The collector settings as last read (undefined: none stored). */
  readonly collector: CollectorSettings | undefined;
  readonly leading: boolean;
  /** Bumped whenever this replica stops forwarding or starts afresh: older batches commit nothing. */
  readonly generation: number;
  /** When forwarding (re)started: events recorded before it are not forwarded. */
  readonly startedAt: Date | null;
  /**
   * Whether work of `generation` may still write cursors at `now`: it is the current generation and
   * the lease runs at `now` as of its last renewal. Past that, another replica may have taken the
   * lease, forwarded and moved the cursors on (and given the lease back).
   */
  holds(generation: number, now: number): boolean;
}

/**
 * The forwarding lease on the `observability_forwarder` row: one replica forwards at a time.
 * `renew()` is the one place that decides whether this replica forwards; it reads the settings,
 * takes or renews the lease, and tells the forwarder when it starts or stops leading.
 */
export function createForwardingLease(deps: ForwardingLeaseDeps) {
  const { db, clock, replicaId, ttlMs } = deps;
  let collector: CollectorSettings | undefined;
  let leading = false;
  let generation = 0;
  let startedAt: Date | null = null;
  let heldUntil = 0;

  function stepDown(): void {
    if (!leading) return;
    leading = false;
    generation += 1;
    deps.onStepDown();
  }

  function lead(state: ForwarderState): void {
    stepDown();
    leading = true;
    generation += 1;
    startedAt = state.startedAt;
    deps.onLead(state.cursors);
  }

  /** Reads the settings and takes or renews the lease; resolves true when this replica forwards. */
  async function renew(): Promise<boolean> {
    collector = await readSettings(db);
    if (!collector?.enabled) {
      if (leading) {
        stepDown();
        await releaseLease(db, replicaId, new Date(clock.now()));
      }
      return false;
    }
    const now = clock.now();
    const lapsed = leading && now >= heldUntil;
    let state = await acquireLease(db, {
      replicaId,
      now: new Date(now),
      until: new Date(now + ttlMs),
      queueDepth: deps.queueDepth(),
    });
    if (!state) {
      stepDown();
      return false;
    }
    if (state.startedAt === null) {
      // Enabled without a start time (a row written before this replica knew it): start now.
      await restartForwarding(db, await databaseNow(db), new Date(now));
      state = await acquireLease(db, {
        replicaId,
        now: new Date(now),
        until: new Date(now + ttlMs),
        queueDepth: 0,
      });
      if (!state) return false;
    }
    // A lapsed lease is taken afresh: the stored cursors may have moved on meanwhile.
    if (!leading || lapsed || state.startedAt?.getTime() !== startedAt?.getTime()) lead(state);
    heldUntil = now + ttlMs;
    return true;
  }

  const view: LeaseView = {
    get collector() {
      return collector;
    },
    get leading() {
      return leading;
    },
    get generation() {
      return generation;
    },
    get startedAt() {
      return startedAt;
    },
    holds: (batchGeneration, now) => batchGeneration === generation && now < heldUntil,
  };

  return {
    view,
    renew,
    /** Gives the lease up, so another replica can take over at once. */
    release: () => releaseLease(db, replicaId, new Date(clock.now())),
  };
}

export type ForwardingLease = ReturnType<typeof createForwardingLease>;
