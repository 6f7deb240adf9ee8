import type { Knex } from 'knex';
import type { Clock } from '../../platform/clock.ts';
import type { EventBus } from '../../platform/events/event-bus.ts';
import { appendEvent, type EventLog } from '../../platform/events/event-log.ts';
import { storableText } from '../../platform/json-storable.ts';
import type { Logger } from '../../platform/logger.ts';
import { enqueueWebhookDelivery } from '../webhooks/index.ts';
import { completedPayload, EXECUTIONS_STREAM } from './events.ts';
import type { ExecutionMetrics } from './metrics.ts';
import type { ExecutionRow } from './records.ts';
import {
  type Executor,
  type FinishedRow,
  finishExecution,
  finishWithoutWebhook,
  finishWithoutWebhookLean,
  type Outcome,
} from './repository.ts';

/** Bus topic telling every replica that a synchronous call's execution ended (its caller may wait elsewhere). */
export const SYNC_FINISHED_TOPIC = 'execution_finished';

/** The webhook payload (content/concepts/webhooks.md; the dispatcher adds `delivery_id` and the attempt's `timestamp`). */
export function webhookPayload(row: ExecutionRow): Record<string, unknown> {
  const succeeded = row.status === 'succeeded';
  const payload: Record<string, unknown> = {
    event: succeeded ? 'execution.completed' : 'execution.failed',
    execution_id: row.execution_id,
    workflow_id: row.workflow_id,
    run_id: row.run_id,
    status: row.status,
    target: row.target,
    type: row.function_type,
    duration_ms: row.duration_ms === null ? null : Math.round(row.duration_ms),
    completed_at: new Date(row.completed_at as string | Date).toISOString(),
  };
  if (succeeded) payload.result = row.result ?? null;
  else payload.error_message = row.error ?? `execution ${row.status}`;
  return payload;
}

/**
 * Called inside the transaction that ends an execution which was `waiting` (cancelled, failed or
 * timed out before its approval was decided), with the ended row (its `waiting_for` says for what).
 */
export type EndedWhileWaiting = (trx: Knex.Transaction, row: ExecutionRow, now: Date) => Promise<void>;

/** The one statement that ends an execution without a webhook, handing back `Row`. */
type EndStatement<Row extends FinishedRow> = (
  db: Executor,
  id: string,
  outcome: Outcome,
  stream: string,
  now: Date,
) => Promise<Row | undefined>;

export interface FinisherDeps {
  db: Knex;
  clock: Clock;
  events: EventBus;
  eventLog: EventLog;
  metrics: ExecutionMetrics;
  log: Logger;
  /** Wakes the webhook workers after a delivery was written. */
  wakeWebhooks: () => void;
  /** This replica's id: sync calls it took are waited for here. */
  replicaId: string;
}

/**
 * The one way an execution ends. In one transaction: the terminal state (only if the execution
 * is still active, so whatever comes second of a callback, a cancel, a timeout or the reaper
 * changes nothing), the `execution.completed` event, and the webhook delivery when one is
 * registered (an outbox row, so a crash can never record a result and lose its webhook). After
 * the commit: wake the event readers and webhook workers, count the metrics, and tell whoever
 * waits for it.
 */
export function createFinisher(deps: FinisherDeps) {
  const localWaiters = new Map<string, Set<() => void>>();
  let endedWhileWaiting: EndedWhileWaiting | undefined;

  function notifyLocal(id: string): void {
    for (const wake of localWaiters.get(id) ?? []) wake();
  }
  deps.events.subscribe(SYNC_FINISHED_TOPIC, (event) => notifyLocal(String(event.execution_id)));

  return {
    /**
     * Ends an execution; hands back what the end's own work and a synchronous answer read
     * (FinishedRow), or undefined when it had already ended. An outcome the database refuses (a
     * result it cannot store, whatever slipped past the checks) still ends it: as `failed`,
     * saying why, rather than leaving it running with nobody left to end it.
     */
    finish: (id: string, outcome: Outcome) => finishSafely(id, outcome, finishWithoutWebhookLean),

    /** finish, handing back the whole row, for an answer that shows the execution's record. */
    finishRecord: (id: string, outcome: Outcome) => finishSafely(id, outcome, finishWithoutWebhook),

    /**
     * Ends an execution inside the caller's transaction (see finishIn); the caller calls
     * `afterFinish` with the row once its transaction committed.
     */
    finishIn: (
      trx: Knex.Transaction,
      id: string,
      outcome: Outcome,
      now: Date,
      before?: (row: ExecutionRow) => Array<{ name: string; payload: object }>,
    ) => finishIn(trx, id, outcome, now, before),
    afterFinish: (row: ExecutionRow) => afterFinish(row),

    /** Sets what else happens, in the ending transaction, when an execution ends while waiting. */
    onEndedWhileWaiting(hook: EndedWhileWaiting): void {
      endedWhileWaiting = hook;
    },

    /** Calls `wake` when the execution ends, here or on another replica; returns the unsubscribe. */
    onFinished(id: string, wake: () => void): () => void {
      let set = localWaiters.get(id);
      if (!set) {
        set = new Set();
        localWaiters.set(id, set);
      }
      set.add(wake);
      return () => {
        set.delete(wake);
        if (set.size === 0) localWaiters.delete(id);
      };
    },
  };

  /**
   * The terminal state, the events and the webhook delivery, inside the caller's transaction.
   * `before` names events appended ahead of `execution.completed` (an approval that expired
   * resolves before the execution completes). Undefined when the execution had already ended.
   */
  async function finishIn(
    trx: Knex.Transaction,
    id: string,
    outcome: Outcome,
    now: Date,
    before: (row: ExecutionRow) => Array<{ name: string; payload: object }> = () => [],
  ): Promise<ExecutionRow | undefined> {
    const finished = await finishExecution(trx, id, outcome, now);
    if (!finished) return undefined;
    // It ended while waiting for an approval: the request ends with it, in this transaction.
    if (finished.waiting_for?.type === 'approval' && endedWhileWaiting)
      await endedWhileWaiting(trx, finished, now);
    for (const event of before(finished))
      await appendEvent(trx, EXECUTIONS_STREAM, event.name, event.payload);
    await appendEvent(trx, EXECUTIONS_STREAM, 'execution.completed', completedPayload(finished, now));
    if (finished.webhook) {
      await enqueueWebhookDelivery(trx, {
        executionId: finished.execution_id,
        event: finished.status === 'succeeded' ? 'execution.completed' : 'execution.failed',
        webhook: finished.webhook,
        payload: webhookPayload(finished),
        now,
      });
    }
    return finished;
  }

  /** After the commit of an end: wake the event readers and webhook workers, count, tell waiters. */
  function afterFinish(row: FinishedRow): void {
    deps.eventLog.announce(EXECUTIONS_STREAM);
    if (row.webhook) deps.wakeWebhooks();
    deps.metrics.executionsTotal.inc({ node: row.node_id, type: row.function_type, status: row.status });
    if (row.duration_ms !== null) deps.metrics.executionDurationSeconds.observe(row.duration_ms / 1000);
    deps.metrics.workflowDagDepth.observe(row.depth);
    notifyLocal(row.execution_id);
    // The caller of a sync call waits on the replica that took it (dispatched_by), and an async
    // call the agent had not answered yet is still open there, holding a dispatch slot: when
    // that is another replica, tell it. When it is this one, the local wake-up above was enough
    // and no NOTIFY is spent on it (nor on the common async end: a callback after a 202).
    const openElsewhere = row.lane === 'sync' || (row.dispatched_by !== null && row.accepted_at === null);
    if (openElsewhere && row.dispatched_by !== deps.replicaId) {
      deps.events
        .publish(SYNC_FINISHED_TOPIC, { execution_id: row.execution_id })
        .catch((error) => deps.log.warn({ err: error }, 'could not announce a finished execution'));
    }
  }

  async function finishSafely<Row extends FinishedRow>(
    id: string,
    outcome: Outcome,
    end: EndStatement<Row>,
  ): Promise<Row | undefined> {
    try {
      return await finishOnce(id, outcome, end);
    } catch (error) {
      // Only a value the database refuses (SQLSTATE class 22, data exception) or one too deep to
      // walk is worth recording as a failure; a lost connection is not the agent's doing.
      const refused =
        String((error as { code?: unknown }).code ?? '').startsWith('22') || error instanceof RangeError;
      if (
        !refused ||
        (outcome.status === 'failed' && outcome.result === undefined && outcome.errorDetails == null)
      )
        throw error;
      deps.log.warn(
        { err: error, execution_id: id },
        'execution outcome could not be stored; recording a failure',
      );
      const failure: Outcome = {
        status: 'failed',
        error: `the agent's ${outcome.status === 'succeeded' ? 'result' : 'report'} could not be stored: ${storableText((error as Error).message).slice(0, 500)}`,
      };
      return finishOnce(id, failure, end);
    }
  }

  async function finishOnce<Row extends FinishedRow>(
    id: string,
    outcome: Outcome,
    end: EndStatement<Row>,
  ): Promise<Row | undefined> {
    const now = new Date(deps.clock.now());
    // Most executions have no webhook: their end and its event are one statement. The others
    // (and an execution that had already ended, which this finds nothing to do for) go through
    // the transaction that also writes the delivery; its whole row is every Row.
    const row =
      (await end(deps.db, id, outcome, EXECUTIONS_STREAM, now)) ??
      ((await deps.db.transaction((trx: Knex.Transaction) => finishIn(trx, id, outcome, now))) as
        | Row
        | undefined);
    if (!row) return undefined;
    afterFinish(row);
    return row;
  }
}

export type Finisher = ReturnType<typeof createFinisher>;
