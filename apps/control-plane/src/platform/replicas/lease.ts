import { hostname } from 'node:os';
import { newId } from '@switchyard/shared';
import type { Knex } from 'knex';
import { type Clock, systemClock } from '../clock.ts';
import type { Logger } from '../logger.ts';

const TABLE = 'control_plane_replicas';

export interface ReplicaLeaseOptions {
  db: Knex;
  clock?: Clock;
  log: Logger;
  /** How long a lease lasts without renewal; 15 s. */
  ttlMs?: number;
  /** How often the lease is renewed; a third of the TTL, so two lost renewals are survivable. */
  renewEveryMs?: number;
}

/** Entries of replicas gone this long are deleted; until then they say when a replica stopped. */
const FORGET_AFTER_MS = 7 * 24 * 3600_000;

/**
 * This process's entry in `control_plane_replicas`. Work a replica claims is marked with its id;
 * the others treat that work as abandoned once the lease has expired (the replica crashed or was
 * killed), and recover it. A replica that stops cleanly ends its lease at once. Entries stay a
 * week after their lease ended, so recovery can tell how long ago a replica stopped.
 */
export function createReplicaLease(options: ReplicaLeaseOptions) {
  const clock = options.clock ?? systemClock;
  const ttlMs = options.ttlMs ?? 15_000;
  const renewEveryMs = options.renewEveryMs ?? Math.floor(ttlMs / 3);
  const id = newId('rep');
  let timer: NodeJS.Timeout | undefined;
  let renewing: Promise<void> | undefined;

  async function renew(): Promise<void> {
    const now = new Date(clock.now());
    const expires = new Date(clock.now() + ttlMs);
    await options
      .db(TABLE)
      .insert({
        replica_id: id,
        host: hostname(),
        pid: process.pid,
        started_at: now,
        renewed_at: now,
        lease_expires_at: expires,
      })
      .onConflict('replica_id')
      .merge(['renewed_at', 'lease_expires_at']);
  }

  return {
    id,
    ttlMs,
    renew,
    /** Takes the lease and keeps renewing it until stop(). */
    async start(): Promise<void> {
      await options
        .db(TABLE)
        .where('lease_expires_at', '<', new Date(clock.now() - FORGET_AFTER_MS))
        .delete();
      await renew();
      timer = setInterval(() => {
        renewing = renew()
          .catch((error) => options.log.error({ err: error }, 'replica lease renewal failed'))
          .finally(() => {
            renewing = undefined;
          });
      }, renewEveryMs);
      timer.unref();
    },
    /** Stops renewing and ends the lease now, so nothing waits for it to expire. */
    async stop(): Promise<void> {
      clearInterval(timer);
      timer = undefined;
      // A renewal still on its way would push the lease out again after it ended.
      await renewing;
      await options
        .db(TABLE)
        .where({ replica_id: id })
        .update({ lease_expires_at: new Date(clock.now()) });
    },
  };
}

export type ReplicaLease = ReturnType<typeof createReplicaLease>;

/**
 * Ends every other replica's lease now. Only for the embedded database: PGlite's files belong to
 * one process at a time, so whoever held a lease before this process started is gone for sure,
 * and recovery need not wait for its lease to run out.
 */
export async function expireOtherReplicas(db: Knex, self: string, now: Date): Promise<void> {
  await db(TABLE)
    .whereNot({ replica_id: self })
    .where('lease_expires_at', '>', now)
    .update({ lease_expires_at: now });
}
