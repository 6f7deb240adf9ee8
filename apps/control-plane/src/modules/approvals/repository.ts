import { toIso, toIsoOrNull } from '@switchyard/shared';
import type { Knex } from 'knex';
import type { ApprovalStatus, CallbackStatus, ListCursor } from './schemas.ts';

/*
 * The approval_requests table: the only file that names it. A row is an approval request and,
 * once decided (or expired), the outbox of the decision's delivery to the agent's callback_url.
 * Every time comes from the caller's clock, never from SQL now(), so tests drive expiry, retries
 * and leases by moving a clock.
 */

type Db = Knex | Knex.Transaction;
const TABLE = 'approval_requests';

/** One approval request, as the service and the views use it. */
export interface ApprovalRequest {
  approvalRequestId: string;
  executionId: string;
  nodeId: string;
  target: string;
  approvalRequestUrl: string | null;
  callbackUrl: string | null;
  status: ApprovalStatus;
  feedback: string | null;
  requestedAt: string;
  expiresAt: string;
  decidedAt: string | null;
  callbackStatus: CallbackStatus | null;
  callbackAttempts: number;
  callbackNextAttemptAt: string | null;
  callbackLeasedBy: string | null;
  callbackLeaseExpiresAt: string | null;
  callbackLastStatusCode: number | null;
  callbackLastError: string | null;
  callbackDeliveredAt: string | null;
  updatedAt: string;
}

interface Row {
  approval_request_id: string;
  execution_id: string;
  node_id: string;
  target: string;
  approval_request_url: string | null;
  callback_url: string | null;
  status: ApprovalStatus;
  feedback: string | null;
  requested_at: Date;
  expires_at: Date;
  decided_at: Date | null;
  callback_status: CallbackStatus | null;
  callback_attempts: number;
  callback_next_attempt_at: Date | null;
  callback_leased_by: string | null;
  callback_lease_expires_at: Date | null;
  callback_last_status_code: number | null;
  callback_last_error: string | null;
  callback_delivered_at: Date | null;
  updated_at: Date;
}

function toRequest(row: Row): ApprovalRequest {
  return {
    approvalRequestId: row.approval_request_id,
    executionId: row.execution_id,
    nodeId: row.node_id,
    target: row.target,
    approvalRequestUrl: row.approval_request_url,
    callbackUrl: row.callback_url,
    status: row.status,
    feedback: row.feedback,
    requestedAt: toIso(row.requested_at),
    expiresAt: toIso(row.expires_at),
    decidedAt: toIsoOrNull(row.decided_at),
    callbackStatus: row.callback_status,
    callbackAttempts: row.callback_attempts,
    callbackNextAttemptAt: toIsoOrNull(row.callback_next_attempt_at),
    callbackLeasedBy: row.callback_leased_by,
    callbackLeaseExpiresAt: toIsoOrNull(row.callback_lease_expires_at),
    callbackLastStatusCode: row.callback_last_status_code,
    callbackLastError: row.callback_last_error,
    callbackDeliveredAt: toIsoOrNull(row.callback_delivered_at),
    updatedAt: toIso(row.updated_at),
  };
}

const one = (rows: Row[]) => (rows[0] ? toRequest(rows[0]) : undefined);

export async function insertRequest(
  db: Db,
  values: {
    approvalRequestId: string;
    executionId: string;
    nodeId: string;
    target: string;
    approvalRequestUrl: string | null;
    callbackUrl: string | null;
    expiresAt: Date;
    now: Date;
  },
): Promise<ApprovalRequest> {
  const rows: Row[] = await db(TABLE)
    .insert({
      approval_request_id: values.approvalRequestId,
      execution_id: values.executionId,
      node_id: values.nodeId,
      target: values.target,
      approval_request_url: values.approvalRequestUrl,
      callback_url: values.callbackUrl,
      status: 'pending',
      requested_at: values.now,
      expires_at: values.expiresAt,
      updated_at: values.now,
    })
    .returning('*');
  return one(rows) as ApprovalRequest;
}

export async function findRequest(
  db: Db,
  id: string,
  lock: 'none' | 'update' | 'skip' = 'none',
): Promise<ApprovalRequest | undefined> {
  const query = db(TABLE).where({ approval_request_id: id });
  if (lock !== 'none') query.forUpdate();
  if (lock === 'skip') query.skipLocked();
  const row = (await query.first()) as Row | undefined;
  return row ? toRequest(row) : undefined;
}

/**
 * The newest request of an execution (its current or last pause). The pending one (at most one)
 * comes first: a new request in the same millisecond as the decision of the previous one would
 * otherwise be ordered by its id alone.
 */
export async function latestOfExecution(db: Db, executionId: string): Promise<ApprovalRequest | undefined> {
  const row = (await db(TABLE)
    .where({ execution_id: executionId })
    .orderByRaw(`(status = 'pending') desc, requested_at desc, approval_request_id desc`)
    .first()) as Row | undefined;
  return row ? toRequest(row) : undefined;
}

/**
 * Records how a pending request ended: a decision, `expired` or `cancelled`. With `deliver`, the
 * decision's delivery to callback_url becomes due at once (the row is its outbox).
 */
export async function resolveRequest(
  db: Db,
  id: string,
  values: {
    status: Exclude<ApprovalStatus, 'pending'>;
    feedback: string | null;
    deliver: boolean;
    now: Date;
  },
): Promise<ApprovalRequest | undefined> {
  const rows: Row[] = await db(TABLE)
    .where({ approval_request_id: id, status: 'pending' })
    .update({
      status: values.status,
      feedback: values.feedback,
      decided_at: values.now,
      callback_status: values.deliver ? 'pending' : null,
      callback_next_attempt_at: values.deliver ? values.now : null,
      updated_at: values.now,
    })
    .returning('*');
  return one(rows);
}

/** Cancels the pending request of an execution that ended otherwise. */
export async function cancelPendingOf(db: Db, executionId: string, now: Date): Promise<number> {
  return db(TABLE)
    .where({ execution_id: executionId, status: 'pending' })
    .update({ status: 'cancelled', decided_at: now, updated_at: now });
}

/** Pending requests past their expiry, soonest first (not locked: each is expired in a transaction of its own). */
export async function dueForExpiry(db: Db, now: Date, limit: number): Promise<ApprovalRequest[]> {
  const rows: Row[] = await db(TABLE)
    .where({ status: 'pending' })
    .where('expires_at', '<=', now)
    .orderBy('expires_at')
    .limit(limit);
  return rows.map(toRequest);
}

/** A page of requests, newest first; one more than `limit` tells whether another page follows. */
export async function listRequests(
  db: Db,
  filter: { status?: ApprovalStatus; nodeId?: string; after?: ListCursor; limit: number },
): Promise<ApprovalRequest[]> {
  const query = db(TABLE);
  if (filter.status) query.where({ status: filter.status });
  if (filter.nodeId) query.where({ node_id: filter.nodeId });
  if (filter.after) {
    query.whereRaw('(requested_at, approval_request_id) < (?, ?)', [
      new Date(filter.after.requestedAt),
      filter.after.id,
    ]);
  }
  const rows: Row[] = await query
    .orderBy([
      { column: 'requested_at', order: 'desc' },
      { column: 'approval_request_id', order: 'desc' },
    ])
    .limit(filter.limit + 1);
  return rows.map(toRequest);
}

// ---- the outbox of decisions to deliver --------------------------------------------------------

/**
 * Claims up to `limit` deliveries that are due: pending ones whose next attempt has come, and
 * delivering ones whose lease expired (their replica crashed or stopped mid-attempt). FOR UPDATE
 * SKIP LOCKED lets replicas claim side by side; the lease keeps a delivery with one of them.
 */
export async function claimDueCallbacks(
  db: Knex,
  claim: { replicaId: string; now: Date; leaseUntil: Date; limit: number },
): Promise<ApprovalRequest[]> {
  const result = await db.raw(
    `with due as (
       select approval_request_id from approval_requests
        where callback_status in ('pending', 'delivering') and callback_next_attempt_at <= :now
          and (callback_status = 'pending' or callback_lease_expires_at <= :now)
        order by callback_next_attempt_at, approval_request_id
        limit :limit
        for update skip locked)
     update approval_requests a
        set callback_status = 'delivering', callback_leased_by = :replica,
            callback_lease_expires_at = :leaseUntil, updated_at = :now
       from due where a.approval_request_id = due.approval_request_id
     returning a.*`,
    { now: claim.now, limit: claim.limit, replica: claim.replicaId, leaseUntil: claim.leaseUntil },
  );
  return (result.rows as Row[]).map(toRequest);
}

/**
 * Records one delivery attempt and what the delivery becomes, only while this replica still
 * holds the lease. Returns whether it moved.
 */
export async function recordCallbackAttempt(
  db: Knex,
  outcome: {
    id: string;
    replicaId: string;
    statusCode: number | null;
    error: string | null;
    next: { status: 'delivered' } | { status: 'pending'; at: Date } | { status: 'abandoned' };
    countAttempt: boolean;
    now: Date;
  },
): Promise<boolean> {
  const { next, now } = outcome;
  const updated = await db(TABLE)
    .where({
      approval_request_id: outcome.id,
      callback_leased_by: outcome.replicaId,
      callback_status: 'delivering',
    })
    .update({
      callback_status: next.status,
      callback_attempts: outcome.countAttempt ? db.raw('callback_attempts + 1') : db.raw('callback_attempts'),
      callback_last_status_code: outcome.countAttempt
        ? outcome.statusCode
        : db.raw('callback_last_status_code'),
      callback_last_error: outcome.error,
      callback_leased_by: null,
      callback_lease_expires_at: null,
      callback_next_attempt_at: next.status === 'pending' ? next.at : null,
      callback_delivered_at: next.status === 'delivered' ? now : null,
      updated_at: now,
    });
  return updated === 1;
}

/** The earliest time a delivery becomes due: a pending attempt, or an expiring lease. */
export async function nextCallbackDueAt(db: Knex): Promise<number | undefined> {
  const row = await db(TABLE)
    .whereIn('callback_status', ['pending', 'delivering'])
    .select(
      db.raw(
        `min(case when callback_status = 'pending' then callback_next_attempt_at
                  else greatest(callback_next_attempt_at, callback_lease_expires_at) end) as at`,
      ),
    )
    .first();
  return row?.at ? new Date(row.at).getTime() : undefined;
}
