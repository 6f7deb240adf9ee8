import type { Knex } from 'knex';
import { appendEvent, type EventLog } from '../../platform/events/event-log.ts';
import {
  approvalResolvedPayload,
  childWaitingPayload,
  EXECUTIONS_STREAM,
  resumedPayload,
  waitingPayload,
} from './events.ts';
import type { EndedWhileWaiting, Finisher } from './finisher.ts';
import type { ApprovalWait, ExecutionRow } from './records.ts';
import {
  awaitChild,
  findExecution,
  findExecutionForUpdate,
  pauseRunning,
  resumeFromChild,
  resumeWaiting,
} from './repository.ts';

/**
 * The `waiting` state for the approvals feature: each transition changes the execution and
 * appends its event in the caller's transaction (the one that writes the approval request), so
 * an execution is never waiting without its request, nor resumed without the decision recorded.
 * After the commit the caller calls `committed` (or, for an end, the row's `finished`).
 */
export interface ExecutionWaiting {
  /** running → waiting with `waiting_for`, and `execution.waiting`. Undefined unless it was running. */
  pause(
    trx: Knex.Transaction,
    id: string,
    waitingFor: ApprovalWait,
    now: Date,
  ): Promise<ExecutionRow | undefined>;
  /**
   * waiting → running (waiting_for cleared), and `execution.approval_resolved` with the decision.
   * Undefined unless it was waiting for this approval request.
   */
  resume(
    trx: Knex.Transaction,
    id: string,
    approvalRequestId: string,
    decision: string,
    now: Date,
  ): Promise<ExecutionRow | undefined>;
  /**
   * waiting → `timeout` through the normal terminal path (execution.completed, the webhook
   * delivery), preceded by `execution.approval_resolved` with decision `expired`. Undefined
   * unless it was waiting for this approval request.
   */
  expire(
    trx: Knex.Transaction,
    id: string,
    approvalRequestId: string,
    now: Date,
  ): Promise<ExecutionRow | undefined>;
  /**
   * running → waiting for a child (awaiter-status `waiting`), and `execution.waiting`. Undefined
   * unless it was running: a repeated report, or one from an execution paused for its own
   * approval, changes nothing.
   */
  awaitChild(
    trx: Knex.Transaction,
    id: string,
    reason: string | null,
    now: Date,
  ): Promise<ExecutionRow | undefined>;
  /** waiting for a child → running (awaiter-status `running`), and `execution.resumed`. */
  resumeFromChild(trx: Knex.Transaction, id: string, now: Date): Promise<ExecutionRow | undefined>;
  /** After the commit of a pause or resume: wakes the readers of the event stream. */
  committed(): void;
  /** After the commit of an expiry: what every end does (metrics, webhooks, waiters). */
  finished(row: ExecutionRow): void;
  /** The execution, or undefined when there is none. */
  find(db: Knex | Knex.Transaction, id: string): Promise<ExecutionRow | undefined>;
  /**
   * The execution, locked for the transaction (undefined when there is none, or with
   * `skipLocked` when another transaction holds it). Lock the execution before its approval
   * request: every path that changes both takes them in this order, so none deadlocks another.
   */
  lock(
    trx: Knex.Transaction,
    id: string,
    options?: { skipLocked?: boolean },
  ): Promise<ExecutionRow | undefined>;
  /** Registers what ends an open approval request when its execution ends otherwise (one hook). */
  onEndedWhileWaiting(hook: EndedWhileWaiting): void;
}

export function createExecutionWaiting(deps: { eventLog: EventLog; finisher: Finisher }): ExecutionWaiting {
  return {
    async pause(trx, id, waitingFor, now) {
      const row = await pauseRunning(trx, id, waitingFor, now);
      if (!row) return undefined;
      await appendEvent(
        trx,
        EXECUTIONS_STREAM,
        'execution.waiting',
        waitingPayload(row, waitingFor.approval_request_id, now),
      );
      return row;
    },

    async resume(trx, id, approvalRequestId, decision, now) {
      const row = await resumeWaiting(trx, id, approvalRequestId, now);
      if (!row) return undefined;
      await appendEvent(
        trx,
        EXECUTIONS_STREAM,
        'execution.approval_resolved',
        approvalResolvedPayload(row, approvalRequestId, decision, now),
      );
      return row;
    },

    async awaitChild(trx, id, reason, now) {
      const row = await awaitChild(trx, id, { type: 'child', reason, since: now.toISOString() }, now);
      if (!row) return undefined;
      await appendEvent(trx, EXECUTIONS_STREAM, 'execution.waiting', childWaitingPayload(row, reason, now));
      return row;
    },

    async resumeFromChild(trx, id, now) {
      const row = await resumeFromChild(trx, id, now);
      if (!row) return undefined;
      await appendEvent(trx, EXECUTIONS_STREAM, 'execution.resumed', resumedPayload(row, now));
      return row;
    },

    async expire(trx, id, approvalRequestId, now) {
      // Only an execution still waiting for this request: one that ended otherwise, or moved on
      // to another request, is not this expiry's to end.
      const current = await findExecution(trx, id);
      const waitsFor = current?.status === 'waiting' ? current.waiting_for : null;
      if (waitsFor?.type !== 'approval' || waitsFor.approval_request_id !== approvalRequestId) {
        return undefined;
      }
      return deps.finisher.finishIn(
        trx,
        id,
        { status: 'timeout', error: `approval request ${approvalRequestId} expired` },
        now,
        (row) => [
          {
            name: 'execution.approval_resolved',
            payload: approvalResolvedPayload(row, approvalRequestId, 'expired', now),
          },
        ],
      );
    },

    committed() {
      deps.eventLog.announce(EXECUTIONS_STREAM);
    },

    finished(row) {
      deps.finisher.afterFinish(row);
    },

    find: (db, id) => findExecution(db, id),
    lock: (trx, id, options) => findExecutionForUpdate(trx, id, options),
    onEndedWhileWaiting: (hook) => deps.finisher.onEndedWhileWaiting(hook),
  };
}
