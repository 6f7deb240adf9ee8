import type { Knex } from 'knex';

/*
 * The observability tables: `observability_webhook` (where events go, one row),
 * `observability_forwarder` (cursors, lease and counters, one row shared by every replica) and
 * `observability_dlq` (batches the collector never took). Only this file names them.
 */

type Db = Knex | Knex.Transaction;

const WEBHOOK = 'observability_webhook';
const FORWARDER = 'observability_forwarder';
const DLQ = 'observability_dlq';

/** The collector the forwarder posts to. */
export interface CollectorSettings {
  url: string;
  secret: string | null;
  enabled: boolean;
  headers: Record<string, string>;
  createdAt: Date;
  updatedAt: Date;
}

/** The shared state of the forwarder. */
export interface ForwarderState {
  /** Per stream, the id of the last entry whose batch was delivered or parked. */
  cursors: Record<string, string>;
  startedAt: Date | null;
  leasedBy: string | null;
  leaseExpiresAt: Date | null;
  forwardedTotal: number;
  droppedTotal: number;
  lastForwardAt: Date | null;
  lastError: string | null;
  lastErrorAt: Date | null;
  lastSnapshotAt: Date | null;
  queueDepth: number;
}

/** The event-log streams forwarded, and `system` for the forwarder's own snapshots. */
export type ForwardedStream = 'executions' | 'nodes' | 'memory' | 'system';

/** One event as it travels in a batch (and is kept in the DLQ). */
export interface ForwardedEvent {
  /** The event-log id (`<tx>-<id>`), stable across replicas; `snap_...` for snapshots. */
  id: string;
  stream: ForwardedStream;
  event: string;
  timestamp: string;
  payload: Record<string, unknown>;
}

/** A batch parked in the dead-letter queue. */
export interface ParkedBatch {
  id: number;
  batchId: string;
  events: ForwardedEvent[];
  eventCount: number;
  attempts: number;
  lastError: string | null;
  lastStatusCode: number | null;
  createdAt: Date;
  failedAt: Date;
}

const json = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;
const date = (value: unknown): Date => (value instanceof Date ? value : new Date(value as string));
const dateOrNull = (value: unknown): Date | null =>
  value === null || value === undefined ? null : date(value);

// ---- settings ----

export async function readSettings(db: Db): Promise<CollectorSettings | undefined> {
  const row = await db(WEBHOOK).where({ id: 1 }).first();
  if (!row) return undefined;
  return {
    url: row.url,
    secret: row.secret ?? null,
    enabled: Boolean(row.enabled),
    headers: json<Record<string, string>>(row.headers),
    createdAt: date(row.created_at),
    updatedAt: date(row.updated_at),
  };
}

export async function writeSettings(
  trx: Db,
  values: { url: string; secret: string | null; enabled: boolean; headers: Record<string, string> },
  now: Date,
): Promise<void> {
  await trx(WEBHOOK)
    .insert({ id: 1, ...values, headers: JSON.stringify(values.headers), created_at: now, updated_at: now })
    .onConflict('id')
    .merge(['url', 'secret', 'enabled', 'headers', 'updated_at']);
}

export async function deleteSettings(trx: Db): Promise<boolean> {
  // Row counts through returning(): knex's plain delete()/update() answer differently on PGlite.
  return (await trx(WEBHOOK).where({ id: 1 }).delete().returning('id')).length > 0;
}

// ---- forwarder state ----

function stateOf(row: Record<string, unknown>): ForwarderState {
  return {
    cursors: json<Record<string, string>>(row.cursors) ?? {},
    startedAt: dateOrNull(row.started_at),
    leasedBy: (row.leased_by as string | null) ?? null,
    leaseExpiresAt: dateOrNull(row.lease_expires_at),
    forwardedTotal: Number(row.forwarded_total ?? 0),
    droppedTotal: Number(row.dropped_total ?? 0),
    lastForwardAt: dateOrNull(row.last_forward_at),
    lastError: (row.last_error as string | null) ?? null,
    lastErrorAt: dateOrNull(row.last_error_at),
    lastSnapshotAt: dateOrNull(row.last_snapshot_at),
    queueDepth: Number(row.queue_depth ?? 0),
  };
}

/** Creates the one forwarder row if it is missing. */
async function ensureState(db: Db, now: Date): Promise<void> {
  await db(FORWARDER)
    .insert({ id: 1, cursors: JSON.stringify({}), updated_at: now })
    .onConflict('id')
    .ignore();
}

export async function readState(db: Db): Promise<ForwarderState | undefined> {
  const row = await db(FORWARDER).where({ id: 1 }).first();
  return row ? stateOf(row) : undefined;
}

/**
 * Starts forwarding afresh (a first enable, or re-enabling after a stop): no cursors, streams read
 * from `startedAt` on, and no lease, so the replica that forwarded before reloads its state.
 * `startedAt` null stops forwarding altogether (the settings were removed or disabled).
 */
export async function restartForwarding(trx: Db, startedAt: Date | null, now: Date): Promise<void> {
  await ensureState(trx, now);
  await trx(FORWARDER)
    .where({ id: 1 })
    .update({
      cursors: JSON.stringify({}),
      started_at: startedAt,
      leased_by: null,
      lease_expires_at: null,
      queue_depth: 0,
      updated_at: now,
    });
}

/** The database's own time: the event log stamps entries with it, so `since` reads compare alike. */
export async function databaseNow(db: Db): Promise<Date> {
  const result = await db.raw('select now() as now');
  return date(result.rows[0].now);
}

/**
 * Takes or renews the forwarding lease: granted when this replica holds it, nobody does, or the
 * holder's lease has expired (it crashed). Returns the state as it now is, or undefined when
 * another replica holds the lease.
 */
export async function acquireLease(
  db: Db,
  options: { replicaId: string; now: Date; until: Date; queueDepth: number },
): Promise<ForwarderState | undefined> {
  await ensureState(db, options.now);
  const rows = await db(FORWARDER)
    .where({ id: 1 })
    .andWhere((q) =>
      q
        .where({ leased_by: options.replicaId })
        .orWhereNull('leased_by')
        .orWhere('lease_expires_at', '<=', options.now),
    )
    .update({
      leased_by: options.replicaId,
      lease_expires_at: options.until,
      queue_depth: options.queueDepth,
      updated_at: options.now,
    })
    .returning('*');
  return rows[0] ? stateOf(rows[0]) : undefined;
}

/** Gives the lease up now (a clean stop), so another replica need not wait for it to expire. */
export async function releaseLease(db: Db, replicaId: string, now: Date): Promise<void> {
  await db(FORWARDER)
    .where({ id: 1, leased_by: replicaId })
    .update({ leased_by: null, lease_expires_at: null, queue_depth: 0, updated_at: now });
}

/**
 * Moves the cursors of the streams in `cursors` on (merged into the stored ones), only while this
 * replica holds the lease: a replica that lost it must not move a cursor the new holder owns.
 */
async function moveCursors(
  trx: Db,
  replicaId: string,
  cursors: Record<string, string>,
  now: Date,
  queueDepth: number,
): Promise<boolean> {
  const updated = await trx(FORWARDER)
    .where({ id: 1, leased_by: replicaId })
    .update({
      cursors: trx.raw('cursors || ?::jsonb', [JSON.stringify(cursors)]),
      queue_depth: queueDepth,
      updated_at: now,
    })
    .returning('id');
  return updated.length > 0;
}

/**
 * A batch the collector took: counters and last forward time (facts, whoever holds the lease),
 * and, only while this replica holds the lease, the cursors it completes and the queue depth. One
 * statement (it runs once per batch, beside the executions the forwarded events came from); true
 * when the cursors moved.
 */
export async function recordDelivered(
  db: Knex,
  options: {
    replicaId: string;
    events: number;
    cursors: Record<string, string>;
    now: Date;
    queueDepth: number;
  },
): Promise<boolean> {
  const { replicaId, now } = options;
  const result = await db.raw(
    `update ${FORWARDER}
        set forwarded_total = forwarded_total + ?,
            last_forward_at = ?,
            cursors = case when leased_by = ? then cursors || ?::jsonb else cursors end,
            queue_depth = case when leased_by = ? then ? else queue_depth end,
            updated_at = ?
      where id = 1
      returning leased_by = ? as moved`,
    [
      options.events,
      now,
      replicaId,
      JSON.stringify(options.cursors),
      replicaId,
      options.queueDepth,
      now,
      replicaId,
    ],
  );
  return result.rows[0]?.moved === true;
}

/** A batch every attempt failed for: parked in the DLQ with its error, and the cursors move on. One transaction. */
export async function recordParked(
  db: Knex,
  options: {
    replicaId: string;
    batchId: string;
    events: ForwardedEvent[];
    attempts: number;
    error: string;
    statusCode: number | null;
    createdAt: Date;
    cursors: Record<string, string>;
    now: Date;
    queueDepth: number;
  },
): Promise<void> {
  await db.transaction(async (trx) => {
    await trx(DLQ)
      .insert({
        batch_id: options.batchId,
        events: JSON.stringify(options.events),
        event_count: options.events.length,
        attempts: options.attempts,
        last_error: options.error,
        last_status_code: options.statusCode,
        created_at: options.createdAt,
        failed_at: options.now,
      })
      .onConflict('batch_id')
      .ignore();
    await trx(FORWARDER)
      .where({ id: 1 })
      .update({ last_error: options.error, last_error_at: options.now, updated_at: options.now });
    await moveCursors(trx, options.replicaId, options.cursors, options.now, options.queueDepth);
  });
}

/** The latest failed attempt, for the status report. */
export async function recordError(db: Db, error: string, now: Date): Promise<void> {
  await db(FORWARDER).where({ id: 1 }).update({ last_error: error, last_error_at: now, updated_at: now });
}

/** Claims the snapshot due at `now`: true when this replica (holding the lease) should send it. */
export async function claimSnapshot(
  db: Db,
  options: { replicaId: string; now: Date; dueBefore: Date },
): Promise<boolean> {
  const updated = await db(FORWARDER)
    .where({ id: 1, leased_by: options.replicaId })
    .andWhere((q) => q.whereNull('last_snapshot_at').orWhere('last_snapshot_at', '<=', options.dueBefore))
    .update({ last_snapshot_at: options.now, updated_at: options.now })
    .returning('id');
  return updated.length > 0;
}

// ---- dead-letter queue ----

function parkedOf(row: Record<string, unknown>): ParkedBatch {
  return {
    id: Number(row.id),
    batchId: row.batch_id as string,
    events: json<ForwardedEvent[]>(row.events),
    eventCount: Number(row.event_count),
    attempts: Number(row.attempts),
    lastError: (row.last_error as string | null) ?? null,
    lastStatusCode: row.last_status_code === null ? null : Number(row.last_status_code),
    createdAt: date(row.created_at),
    failedAt: date(row.failed_at),
  };
}

/**
 * Events (as stored JSON text) in one page of parked batches at most: a batch holds up to 4 MiB of
 * events, and a hundred of them in one answer would be built in memory at once. A page ends before
 * the batch that would pass this; the first batch always comes.
 */
export const DLQ_PAGE_BYTES = 8 * 1024 * 1024;

/**
 * Parked batches, oldest first, after the row id `after`: at most `limit`, ended early by
 * `maxBytes` of events. `more` says whether batches follow the page.
 */
export async function listParked(
  db: Db,
  options: { after?: number; limit: number; maxBytes?: number },
): Promise<{ batches: ParkedBatch[]; more: boolean }> {
  // `before`: the bytes of the batches ahead of a row, so the first row always passes. One more
  // row than asked tells whether another page follows; `found` counts the rows before the cut.
  const result = await db.raw(
    `select c.* from (
       select b.*, count(*) over () as found from (
         select d.*, sum(octet_length(d.events::text)) over w - octet_length(d.events::text) as before
         from ${DLQ} d
         where d.id > ?
         window w as (order by d.id)
         order by d.id
         limit ?
       ) b
     ) c where c.before < ? order by c.id`,
    [String(options.after ?? 0), options.limit + 1, options.maxBytes ?? DLQ_PAGE_BYTES],
  );
  const rows = result.rows as Array<Record<string, unknown>>;
  const found = Number(rows[0]?.found ?? 0);
  const kept = rows.slice(0, options.limit);
  return { batches: kept.map(parkedOf), more: found > kept.length };
}

/** What redrive needs to choose batches, without their events. */
export interface ParkedHead {
  id: number;
  batchId: string;
  eventCount: number;
}

const headOf = (row: Record<string, unknown>): ParkedHead => ({
  id: Number(row.id),
  batchId: row.batch_id as string,
  eventCount: Number(row.event_count),
});

/** One parked batch with its events; undefined once it left the DLQ. */
export async function readParked(db: Db, id: number): Promise<ParkedBatch | undefined> {
  const row = await db(DLQ).where({ id }).first();
  return row ? parkedOf(row) : undefined;
}

export async function countParked(db: Db): Promise<{ batches: number; events: number }> {
  const row = await db(DLQ).count({ n: '*' }).sum({ e: 'event_count' }).first();
  return { batches: Number(row?.n ?? 0), events: Number(row?.e ?? 0) };
}

/**
 * Empties the DLQ; its events count as dropped. Batches a redrive holds at `now` are left to it
 * (delivered, they leave the queue; failed, they stay). Resolves with what went.
 */
export async function clearParked(db: Knex, now: Date): Promise<{ batches: number; events: number }> {
  return db.transaction(async (trx) => {
    const removed = await trx(DLQ)
      .where((q) => q.whereNull('claimed_by').orWhere('claim_expires_at', '<=', now))
      .delete()
      .returning(['event_count']);
    const events = removed.reduce(
      (sum: number, row: { event_count: number }) => sum + Number(row.event_count),
      0,
    );
    await ensureState(trx, now);
    if (events > 0) {
      await trx(FORWARDER)
        .where({ id: 1 })
        .update({ dropped_total: trx.raw('dropped_total + ?', [events]), updated_at: now });
    }
    return { batches: removed.length, events };
  });
}

/** One redrive's hold on the batches it sends: its id, the time it claims at, and until when. */
export interface RedriveClaim {
  by: string;
  now: Date;
  until: Date;
}

/**
 * Claims for one redrive the oldest `limit` parked batches no other redrive holds (never claimed,
 * or claimed by one whose claim ran out). Rows another redrive is claiming at this moment are
 * skipped rather than waited for (`skip locked`), and rows it claimed just before no longer match
 * when they are locked: two redrives at once, on one replica or two, never take the same batch.
 */
export async function claimParked(db: Db, claim: RedriveClaim, limit: number): Promise<ParkedHead[]> {
  const result = await db.raw(
    `update ${DLQ} set claimed_by = ?, claim_expires_at = ?
      where id in (
        select id from ${DLQ}
         where claimed_by is null or claim_expires_at <= ?
         order by id
         limit ?
         for update skip locked)
      returning id, batch_id, event_count`,
    [claim.by, claim.until, claim.now, limit],
  );
  return (result.rows as Array<Record<string, unknown>>).map(headOf).sort((a, b) => a.id - b.id);
}

/**
 * Claims for one redrive exactly the parked batches `batchIds`, or none of them: when an id is not
 * in the DLQ (`missing`) or another redrive holds its batch (`held`), nothing is claimed.
 */
export async function claimParkedByIds(
  db: Knex,
  claim: RedriveClaim,
  batchIds: string[],
): Promise<{ claimed: ParkedHead[]; missing: string[]; held: string[] }> {
  return db.transaction(async (trx) => {
    const rows: Array<Record<string, unknown>> = await trx(DLQ)
      .select('id', 'batch_id', 'event_count', 'claimed_by', 'claim_expires_at')
      .whereIn('batch_id', batchIds)
      .orderBy('id')
      .forUpdate();
    const found = new Set(rows.map((row) => row.batch_id));
    const missing = batchIds.filter((id) => !found.has(id));
    const held = rows
      .filter((row) => row.claimed_by !== null && date(row.claim_expires_at) > claim.now)
      .map((row) => row.batch_id as string);
    if (missing.length > 0 || held.length > 0) return { claimed: [], missing, held };
    await trx(DLQ)
      .whereIn(
        'id',
        rows.map((row) => String(row.id)),
      )
      .update({ claimed_by: claim.by, claim_expires_at: claim.until });
    return { claimed: rows.map(headOf), missing, held };
  });
}

/** Lets go of every batch a redrive still holds (it ended, or failed before sending them all). */
export async function releaseClaims(db: Db, claimedBy: string): Promise<void> {
  await db(DLQ).where({ claimed_by: claimedBy }).update({ claimed_by: null, claim_expires_at: null });
}

/**
 * A redriven batch the collector took: out of the DLQ, counted as forwarded, if this redrive still
 * holds it (false when its claim ran out and another redrive took the batch over).
 */
export async function redriveDelivered(
  db: Knex,
  batch: ParkedBatch,
  claimedBy: string,
  now: Date,
): Promise<boolean> {
  return db.transaction(async (trx) => {
    const removed = await trx(DLQ).where({ id: batch.id, claimed_by: claimedBy }).delete().returning('id');
    if (removed.length === 0) return false;
    await ensureState(trx, now);
    await trx(FORWARDER)
      .where({ id: 1 })
      .update({
        forwarded_total: trx.raw('forwarded_total + ?', [batch.eventCount]),
        last_forward_at: now,
        updated_at: now,
      });
    return true;
  });
}

/**
 * A redriven batch that failed again: it stays, with one more attempt and the new error, and is
 * free for the next redrive. Its row is left alone if this redrive no longer holds it.
 */
export async function redriveFailed(
  db: Knex,
  batch: ParkedBatch,
  claimedBy: string,
  failure: { error: string; statusCode: number | null },
  now: Date,
): Promise<void> {
  await db.transaction(async (trx) => {
    await trx(DLQ)
      .where({ id: batch.id, claimed_by: claimedBy })
      .update({
        attempts: trx.raw('attempts + 1'),
        last_error: failure.error,
        last_status_code: failure.statusCode,
        failed_at: now,
        claimed_by: null,
        claim_expires_at: null,
      });
    await ensureState(trx, now);
    await trx(FORWARDER)
      .where({ id: 1 })
      .update({ last_error: failure.error, last_error_at: now, updated_at: now });
  });
}
