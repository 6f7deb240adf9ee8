import type { Knex } from 'knex';
import { doublingBackoffMs } from '../../platform/backoff.ts';
import type { Clock } from '../../platform/clock.ts';
import type { EventBus } from '../../platform/events/event-bus.ts';
import type { Logger } from '../../platform/logger.ts';
import { createOutboundClient, OutboundError } from '../../platform/outbound/index.ts';
import { VERSION } from '../../platform/version.ts';
import { createWorkLoop } from '../../platform/work-loop.ts';
import { type ExecutionWaiting, isTerminal } from '../executions/index.ts';
import {
  type ApprovalRequest,
  claimDueCallbacks,
  latestOfExecution,
  nextCallbackDueAt,
  recordCallbackAttempt,
} from './repository.ts';
import type { ApprovalSettings } from './settings.ts';

/** The event-bus topic that wakes the callback deliverers of every replica: a decision is due. */
export const APPROVAL_CALLBACKS_TOPIC = 'approval_callbacks';

/** A lease lasts one attempt's timeout plus this margin, so it never expires under a live attempt. */
const LEASE_MARGIN_MS = 5_000;
/** Deliveries claimed per query, attempted side by side. */
const CLAIM_BATCH = 32;
/** First retry delay; doubles per failure up to approvals.callback_max_backoff. */
const FIRST_BACKOFF_MS = 1_000;
/** Longest sleep between two looks at the table (bounds the damage of a missed wake-up). */
const SAFETY_WAKE_MS = 30_000;
/**
 * How long the notice of an expiry is retried. Its execution has already ended, so "until the
 * execution ends" cannot bound it: an agent that never takes it is given up on after a day.
 */
export const EXPIRED_NOTICE_WINDOW_MS = 24 * 3_600_000;

/**
 * Delay before retry `attempt + 1`: from 1 s, doubled up to approvals.callback_max_backoff, with no
 * attempt limit (the retries last until the execution ends).
 */
export function callbackBackoffMs(attempt: number, maxBackoffMs: number): number {
  return doublingBackoffMs(attempt, FIRST_BACKOFF_MS, maxBackoffMs);
}

export interface CallbackDelivererDeps {
  db: Knex;
  events: EventBus;
  clock: Clock;
  log: Logger;
  settings: Pick<ApprovalSettings, 'callbackTimeoutMs' | 'callbackMaxBackoffMs'>;
  /** Names this replica in the lease; unique per process. */
  replicaId: string;
  /** Sent as X-API-Key, as with every call to an agent, when API-key authentication is on; read per call. */
  apiKey?: () => string | undefined;
  waiting: ExecutionWaiting;
}

/**
 * Delivers decisions to the agents' callback_url: `{ execution_id, approval_request_id, decision,
 * feedback }` as JSON, at least once. Due rows are claimed from approval_requests (FOR UPDATE SKIP
 * LOCKED, status `delivering` with a lease), so two replicas never deliver one at once and a
 * replica that dies mid-attempt leaves a lease that expires and is claimed again. A failed attempt
 * is retried after 1 s, 2 s, 4 s… up to callback_max_backoff, until the agent answers 2xx or the
 * execution ends (then the delivery is `abandoned`); an expiry notice is the one delivery made
 * after the end.
 */
export function createCallbackDeliverer(deps: CallbackDelivererDeps) {
  const { db, clock, log, settings, replicaId } = deps;
  // Agents are trusted and live on private networks (as for executions): no address filtering.
  const client = createOutboundClient({
    addresses: 'any',
    keepAliveMs: 10_000,
    connections: 16,
    connectTimeoutMs: 10_000,
  });
  let started = false;
  let stopped = false;
  let unsubscribe: (() => void) | undefined;

  const leaseUntil = (now: number) => new Date(now + settings.callbackTimeoutMs + LEASE_MARGIN_MS);

  /** POSTs the decision; never throws (a failure is an outcome). */
  async function post(
    delivery: ApprovalRequest,
  ): Promise<{ statusCode: number | null; error: string | null }> {
    const body = JSON.stringify({
      execution_id: delivery.executionId,
      approval_request_id: delivery.approvalRequestId,
      decision: delivery.status,
      feedback: delivery.feedback,
    });
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': `Switchyard-Approvals/${VERSION}`,
      'x-execution-id': delivery.executionId,
    };
    const key = deps.apiKey?.();
    if (key) headers['x-api-key'] = key;
    let statusCode: number;
    try {
      const response = await client.request(delivery.callbackUrl as string, {
        method: 'POST',
        headers,
        body,
        timeoutMs: settings.callbackTimeoutMs,
        // The answer's body means nothing here; up to this much is read so the connection can be reused.
        maxBodyBytes: 64 * 1024,
        overLimit: 'truncate',
      });
      statusCode = response.status;
    } catch (error) {
      if (error instanceof OutboundError && error.status !== null) {
        // The agent answered; only reading the meaningless body failed.
        statusCode = error.status;
      } else {
        // A timeout says how long was waited; other failures are named by their socket code.
        const reason =
          error instanceof OutboundError ? (error.code ?? error.message) : (error as Error).message;
        return { statusCode: null, error: `could not deliver to ${delivery.callbackUrl}: ${reason}` };
      }
    }
    return {
      statusCode,
      error: statusCode >= 200 && statusCode < 300 ? null : `the agent answered ${statusCode}`,
    };
  }

  async function attempt(delivery: ApprovalRequest): Promise<void> {
    const start = clock.now();
    if (delivery.status === 'expired') {
      if (start - Date.parse(delivery.decidedAt as string) > EXPIRED_NOTICE_WINDOW_MS) {
        await recordCallbackAttempt(db, {
          id: delivery.approvalRequestId,
          replicaId,
          statusCode: null,
          error: `the agent did not take the expiry notice within ${EXPIRED_NOTICE_WINDOW_MS / 3_600_000} h (last: ${delivery.callbackLastError ?? 'none'})`,
          next: { status: 'abandoned' },
          countAttempt: false,
          now: new Date(start),
        });
        return;
      }
    } else {
      const execution = await deps.waiting.find(db, delivery.executionId);
      if (!execution || isTerminal(execution.status)) {
        await recordCallbackAttempt(db, {
          id: delivery.approvalRequestId,
          replicaId,
          statusCode: null,
          error: `the execution ended (${execution?.status ?? 'removed'}) before the agent took the decision`,
          next: { status: 'abandoned' },
          countAttempt: false,
          now: new Date(start),
        });
        return;
      }
      // The execution asked for approval again since: the agent had this decision (its 2xx was
      // lost). A repeat now would answer the new pause, since the SDKs resolve a pause whose
      // approval id they do not know by its execution id.
      const latest = await latestOfExecution(db, delivery.executionId);
      if (latest && latest.approvalRequestId !== delivery.approvalRequestId) {
        await recordCallbackAttempt(db, {
          id: delivery.approvalRequestId,
          replicaId,
          statusCode: null,
          error: `the execution asked for approval again ("${latest.approvalRequestId}") after this decision, so the agent had it; not delivered again`,
          next: { status: 'abandoned' },
          countAttempt: false,
          now: new Date(start),
        });
        return;
      }
    }
    const result = await post(delivery);
    const now = clock.now();
    const number = delivery.callbackAttempts + 1;
    const next =
      result.error === null
        ? ({ status: 'delivered' } as const)
        : ({
            status: 'pending',
            at: new Date(now + callbackBackoffMs(number, settings.callbackMaxBackoffMs)),
          } as const);
    const moved = await recordCallbackAttempt(db, {
      id: delivery.approvalRequestId,
      replicaId,
      statusCode: result.statusCode,
      error: result.error,
      next,
      countAttempt: true,
      now: new Date(now),
    });
    const context = {
      approval_request_id: delivery.approvalRequestId,
      execution_id: delivery.executionId,
      attempt: number,
      status_code: result.statusCode,
    };
    if (!moved) log.warn(context, 'approval callback lease was lost during the attempt');
    else if (result.error) {
      log.warn(
        { ...context, error: result.error },
        'approval decision not delivered to the agent; will retry',
      );
      if (next.status === 'pending') loop.wakeAt(next.at.getTime());
    } else log.debug(context, 'approval decision delivered to the agent');
  }

  /** Claims and delivers everything due now, a batch at a time. */
  async function deliverDue(): Promise<void> {
    for (;;) {
      const now = clock.now();
      const rows = await claimDueCallbacks(db, {
        replicaId,
        now: new Date(now),
        leaseUntil: leaseUntil(now),
        limit: CLAIM_BATCH,
      });
      await Promise.all(
        rows.map((row) =>
          attempt(row).catch((error) =>
            log.error(
              { err: error, approval_request_id: row.approvalRequestId },
              'approval callback attempt failed to run',
            ),
          ),
        ),
      );
      if (rows.length < CLAIM_BATCH || stopped) break;
    }
  }

  /** Sets the timer for the next delivery that falls due. */
  async function wakeWhenDue(): Promise<void> {
    const at = await nextCallbackDueAt(db);
    loop.wakeAt(at === undefined ? clock.now() + SAFETY_WAKE_MS : Math.max(at, clock.now() + 100));
  }

  const loop = createWorkLoop({
    pass: deliverDue,
    afterPasses: wakeWhenDue,
    onError: (error) =>
      log.error(
        { err: error },
        'approval callback deliverer could not claim deliveries; trying again shortly',
      ),
    retryAfterMs: 1_000,
    longestSleepMs: SAFETY_WAKE_MS,
    clock,
  });

  return {
    start(): void {
      if (started || stopped) return;
      started = true;
      unsubscribe = deps.events.subscribe(APPROVAL_CALLBACKS_TOPIC, () => loop.wake());
      loop.start();
    },

    /** Stops claiming and waits for the attempts in flight (each ends within callback_timeout). */
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      unsubscribe?.();
      await loop.stop();
      await client.destroy();
    },

    /** Call after a transaction that made a delivery due committed: wakes deliverers here and elsewhere. */
    wake(): void {
      if (stopped) return;
      deps.events
        .publish(APPROVAL_CALLBACKS_TOPIC, {})
        .catch((error) => log.warn({ err: error }, 'could not announce a due approval callback'));
      loop.wake();
    },

    /** Tests: claims and delivers everything due now (by the clock), until nothing is. */
    runOnce: (): Promise<void> => loop.run(),
  };
}

export type CallbackDeliverer = ReturnType<typeof createCallbackDeliverer>;
