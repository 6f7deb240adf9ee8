import { toIso, toIsoOrNull } from '@switchyard/shared';
import type { Knex } from 'knex';

/*
 * The webhook tables (webhook_deliveries, webhook_attempts): the only file that names them. Every
 * time comes from the caller's clock, never from SQL now(), so tests drive retries and lease
 * expiry by moving a clock instead of sleeping.
 */

export type DeliveryStatus = 'pending' | 'delivering' | 'delivered' | 'dead';
export type WebhookEvent = 'execution.completed' | 'execution.failed';

/** One delivery, as the dispatcher and the views use it. */
export interface Delivery {
  deliveryId: string;
  executionId: string;
  event: WebhookEvent;
  url: string;
  secret: string | null;
  headers: Record<string, string>;
  payload: Record<string, unknown>;
  status: DeliveryStatus;
  attempts: number;
  manual: boolean;
  nextAttemptAt: string | null;
  leasedBy: string | null;
  leaseExpiresAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
  deadAt: string | null;
  updatedAt: string;
}

/** One recorded attempt of a delivery. */
export interface Attempt {
  attempt: number;
  manual: boolean;
  startedAt: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
}

type Db = Knex | Knex.Transaction;

/** A webhook_deliveries row as both drivers return it (timestamps as Date). */
interface DeliveryRow {
  delivery_id: string;
  execution_id: string;
  event: WebhookEvent;
  url: string;
  secret: string | null;
  headers: unknown;
  payload: unknown;
  status: DeliveryStatus;
  attempts: number;
  manual: boolean;
  next_attempt_at: Date | null;
  leased_by: string | null;
  lease_expires_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
  dead_at: Date | null;
  updated_at: Date;
}

interface AttemptRow {
  id: number;
  delivery_id: string;
  attempt: number;
  manual: boolean;
  started_at: Date;
  duration_ms: number | string;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
}

/** jsonb arrives parsed from both drivers; a text value (a driver without the parser) is parsed here. */
const json = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;

function toDelivery(row: DeliveryRow): Delivery {
  return {
    deliveryId: row.delivery_id,
    executionId: row.execution_id,
    event: row.event,
    url: row.url,
    secret: row.secret,
    headers: json<Record<string, string>>(row.headers),
    payload: json<Record<string, unknown>>(row.payload),
    status: row.status,
    attempts: row.attempts,
    manual: row.manual,
    nextAttemptAt: toIsoOrNull(row.next_attempt_at),
    leasedBy: row.leased_by,
    leaseExpiresAt: toIsoOrNull(row.lease_expires_at),
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    createdAt: toIso(row.created_at),
    deliveredAt: toIsoOrNull(row.delivered_at),
    deadAt: toIsoOrNull(row.dead_at),
    updatedAt: toIso(row.updated_at),
  };
}

function toAttempt(row: AttemptRow): Attempt {
  return {
    attempt: row.attempt,
    manual: row.manual,
    startedAt: toIso(row.started_at),
    durationMs: Number(row.duration_ms),
    statusCode: row.status_code,
    error: row.error,
    responseBody: row.response_body,
  };
}

/** Writes a new pending delivery, due at once. */
export async function insertDelivery(
  db: Db,
  values: Pick<
    Delivery,
    'deliveryId' | 'executionId' | 'event' | 'url' | 'secret' | 'headers' | 'payload'
  > & {
    now: Date;
  },
): Promise<void> {
  await db('webhook_deliveries').insert({
    delivery_id: values.deliveryId,
    execution_id: values.executionId,
    event: values.event,
    url: values.url,
    secret: values.secret,
    // Serialised here: the pg driver would turn a top-level array into a PostgreSQL array.
    headers: JSON.stringify(values.headers),
    payload: JSON.stringify(values.payload),
    status: 'pending',
    attempts: 0,
    manual: false,
    next_attempt_at: values.now,
    created_at: values.now,
    updated_at: values.now,
  });
}

/**
 * Claims up to `limit` deliveries that are due: pending ones whose next attempt time has come,
 * and delivering ones whose lease has expired (their replica crashed or stopped mid-attempt).
 * FOR UPDATE SKIP LOCKED lets replicas claim side by side without waiting on, or taking, each
 * other's rows.
 */
export async function claimDue(
  db: Knex,
  claim: { replicaId: string; now: Date; leaseUntil: Date; limit: number },
): Promise<Delivery[]> {
  const result = await db.raw(
    `with due as (
       select delivery_id from webhook_deliveries
       where status in ('pending', 'delivering') and next_attempt_at <= :now
         and (status = 'pending' or lease_expires_at <= :now)
       order by next_attempt_at, delivery_id
       limit :limit
       for update skip locked
     )
     update webhook_deliveries d
     set status = 'delivering', leased_by = :replica, lease_expires_at = :leaseUntil, updated_at = :now
     from due where d.delivery_id = due.delivery_id
     returning d.*`,
    { now: claim.now, limit: claim.limit, replica: claim.replicaId, leaseUntil: claim.leaseUntil },
  );
  return (result.rows as DeliveryRow[]).map(toDelivery);
}

/**
 * Extends this replica's lease before an attempt starts. False when the lease was lost (it
 * expired while the row waited in memory and another replica claimed it): then the attempt is
 * that replica's to make.
 */
export async function renewLease(
  db: Knex,
  lease: { deliveryId: string; replicaId: string; now: Date; leaseUntil: Date },
): Promise<boolean> {
  const updated = await db('webhook_deliveries')
    .where({ delivery_id: lease.deliveryId, leased_by: lease.replicaId, status: 'delivering' })
    .update({ lease_expires_at: lease.leaseUntil, updated_at: lease.now });
  return updated === 1;
}

/** What one attempt came to, and what the delivery becomes. */
export interface AttemptOutcome {
  deliveryId: string;
  replicaId: string;
  attempt: Attempt;
  next:
    | { status: 'delivered'; at: Date }
    | { status: 'pending'; nextAttemptAt: Date }
    | { status: 'dead'; at: Date };
  now: Date;
}

/**
 * Records an attempt and moves the delivery on, in one transaction. The attempt is recorded
 * whatever happens (it did reach the receiver); the delivery moves only while this replica still
 * holds its lease. Returns whether it moved.
 */
export async function recordAttempt(db: Knex, outcome: AttemptOutcome): Promise<boolean> {
  const { attempt, next, now } = outcome;
  return db.transaction(async (trx) => {
    await trx('webhook_attempts').insert({
      delivery_id: outcome.deliveryId,
      attempt: attempt.attempt,
      manual: attempt.manual,
      started_at: attempt.startedAt,
      duration_ms: attempt.durationMs,
      status_code: attempt.statusCode,
      error: attempt.error,
      response_body: attempt.responseBody,
    });
    const updated = await trx('webhook_deliveries')
      .where({ delivery_id: outcome.deliveryId, leased_by: outcome.replicaId, status: 'delivering' })
      .update({
        status: next.status,
        attempts: attempt.attempt,
        last_status_code: attempt.statusCode,
        last_error: attempt.error,
        leased_by: null,
        lease_expires_at: null,
        next_attempt_at: next.status === 'pending' ? next.nextAttemptAt : null,
        delivered_at: next.status === 'delivered' ? next.at : null,
        dead_at: next.status === 'dead' ? next.at : null,
        updated_at: now,
      });
    return updated === 1;
  });
}

/** Hands back rows this replica claimed but never started (it is stopping): due again at once. */
export async function releaseLeases(db: Knex, ids: string[], replicaId: string, now: Date): Promise<void> {
  if (ids.length === 0) return;
  await db('webhook_deliveries')
    .whereIn('delivery_id', ids)
    .where({ leased_by: replicaId, status: 'delivering' })
    .update({ status: 'pending', leased_by: null, lease_expires_at: null, updated_at: now });
}

/** The earliest time any delivery becomes due: a pending attempt, or an expiring lease. */
export async function nextDueAt(db: Knex): Promise<number | undefined> {
  const row = await db('webhook_deliveries')
    .whereIn('status', ['pending', 'delivering'])
    .select(
      db.raw(
        `min(case when status = 'pending' then next_attempt_at else greatest(next_attempt_at, lease_expires_at) end) as at`,
      ),
    )
    .first();
  return row?.at ? new Date(row.at).getTime() : undefined;
}

/** Every delivery of an execution, newest first, each with its attempts in order. */
export async function deliveriesOf(
  db: Knex,
  executionId: string,
): Promise<Array<{ delivery: Delivery; attempts: Attempt[] }>> {
  const rows: DeliveryRow[] = await db('webhook_deliveries')
    .where({ execution_id: executionId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'delivery_id', order: 'desc' },
    ]);
  if (rows.length === 0) return [];
  const attempts: AttemptRow[] = await db('webhook_attempts')
    .whereIn(
      'delivery_id',
      rows.map((row) => row.delivery_id),
    )
    .orderBy('id');
  return rows.map((row) => ({
    delivery: toDelivery(row),
    attempts: attempts.filter((a) => a.delivery_id === row.delivery_id).map(toAttempt),
  }));
}

/** The newest delivery of an execution, locked for the rest of the transaction. */
export async function latestDeliveryForUpdate(
  trx: Knex.Transaction,
  executionId: string,
): Promise<Delivery | undefined> {
  const row: DeliveryRow | undefined = await trx('webhook_deliveries')
    .where({ execution_id: executionId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'delivery_id', order: 'desc' },
    ])
    .first()
    .forUpdate();
  return row ? toDelivery(row) : undefined;
}

/** Makes a finished delivery due again at once, as a manual round with a fresh attempt count. */
export async function restartDelivery(
  trx: Knex.Transaction,
  deliveryId: string,
  now: Date,
): Promise<Delivery> {
  const [row]: DeliveryRow[] = await trx('webhook_deliveries')
    .where({ delivery_id: deliveryId })
    .update({
      status: 'pending',
      attempts: 0,
      manual: true,
      next_attempt_at: now,
      leased_by: null,
      lease_expires_at: null,
      delivered_at: null,
      dead_at: null,
      updated_at: now,
    })
    .returning('*');
  if (!row) throw new Error(`webhook delivery ${deliveryId} vanished inside its own transaction`);
  return toDelivery(row);
}

/** Where a page of the dead-letter list ends: the last row's dead_at and id. */
export interface DeadLetterCursor {
  deadAt: string;
  deliveryId: string;
}

/** Dead-lettered deliveries, newest first; one more row than `limit` tells whether more follow. */
export async function deadLetters(
  db: Knex,
  page: { limit: number; after?: DeadLetterCursor },
): Promise<Delivery[]> {
  const query = db('webhook_deliveries')
    .where({ status: 'dead' })
    .orderBy([
      { column: 'dead_at', order: 'desc' },
      { column: 'delivery_id', order: 'desc' },
    ])
    .limit(page.limit + 1);
  if (page.after) {
    const { deadAt, deliveryId } = page.after;
    query.whereRaw('(dead_at, delivery_id) < (?, ?)', [new Date(deadAt), deliveryId]);
  }
  return ((await query) as DeliveryRow[]).map(toDelivery);
}

/** How many deliveries are dead-lettered now (the gauge). */
export async function countDeadLetters(db: Knex): Promise<number> {
  const row = await db('webhook_deliveries').where({ status: 'dead' }).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}
