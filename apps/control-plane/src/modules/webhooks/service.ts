import { newId, ProblemError } from '@switchyard/shared';
import type { Knex } from 'knex';
import { type Clock, systemClock } from '../../platform/clock.ts';
import {
  type Attempt,
  type DeadLetterCursor,
  type Delivery,
  deadLetters,
  deliveriesOf,
  insertDelivery,
  latestDeliveryForUpdate,
  restartDelivery,
  type WebhookEvent,
} from './repository.ts';
import type { WebhookConfig } from './webhook-check.ts';

/**
 * Writes one delivery row in the caller's transaction (the outbox): it commits, or is rolled back,
 * with the terminal state it reports. Returns the delivery id. Call the dispatcher's `wake()` once
 * the transaction committed.
 */
export async function enqueueWebhookDelivery(
  trx: Knex | Knex.Transaction,
  delivery: {
    executionId: string;
    event: WebhookEvent;
    webhook: WebhookConfig;
    /** The webhook payload's fields except delivery_id and timestamp (added to each attempt). */
    payload: Record<string, unknown>;
    now: Date;
  },
): Promise<string> {
  const deliveryId = newId('whd');
  await insertDelivery(trx, {
    deliveryId,
    executionId: delivery.executionId,
    event: delivery.event,
    url: delivery.webhook.url,
    secret: delivery.webhook.secret ?? null,
    headers: delivery.webhook.headers,
    payload: delivery.payload,
    now: delivery.now,
  });
  return deliveryId;
}

/** Whether an execution exists (the executions module answers; webhooks never read its table). */
export type ExecutionExists = (executionId: string) => Promise<boolean>;

export interface WebhookServiceDeps {
  db: Knex;
  executionExists: ExecutionExists;
  /** Wakes the dispatchers after a manual retry committed (the dispatcher's `wake`). */
  wake: () => void;
  clock?: Clock;
}

/** The operator's side of webhooks: history, the dead-letter queue and manual retry. */
export function createWebhookService(deps: WebhookServiceDeps) {
  const { db } = deps;
  const clock = deps.clock ?? systemClock;

  const unknownExecution = (executionId: string) =>
    new ProblemError('not_found', `Execution "${executionId}" does not exist.`);

  return {
    /** Every delivery of an execution with its attempts; 404 for an unknown execution. */
    async history(executionId: string): Promise<Array<{ delivery: Delivery; attempts: Attempt[] }>> {
      const found = await deliveriesOf(db, executionId);
      if (found.length === 0 && !(await deps.executionExists(executionId)))
        throw unknownExecution(executionId);
      return found;
    },

    /**
     * Re-delivers the execution's newest delivery: due at once, attempts counted from 0 again and
     * recorded as manual. 404 without a delivery; 409 while one is pending or in flight.
     */
    async retry(executionId: string): Promise<Delivery> {
      const restarted = await db.transaction(async (trx) => {
        const latest = await latestDeliveryForUpdate(trx, executionId);
        if (!latest) return undefined;
        if (latest.status === 'pending' || latest.status === 'delivering') {
          throw new ProblemError(
            'conflict',
            `The webhook delivery ${latest.deliveryId} of execution "${executionId}" is still ${latest.status}; retry once it is delivered or dead-lettered.`,
          );
        }
        return restartDelivery(trx, latest.deliveryId, new Date(clock.now()));
      });
      if (!restarted) {
        // Asked after the transaction: executionExists uses its own connection, and the embedded
        // database has only one, which the transaction would be holding.
        if (!(await deps.executionExists(executionId))) throw unknownExecution(executionId);
        throw new ProblemError(
          'not_found',
          `Execution "${executionId}" has no webhook delivery: it registered no webhook, or has not finished yet.`,
        );
      }
      deps.wake();
      return restarted;
    },

    /** One page of the dead-letter queue, newest first. */
    async deadLetters(page: { limit: number; after?: DeadLetterCursor }) {
      const rows = await deadLetters(db, page);
      const more = rows.length > page.limit;
      const items = more ? rows.slice(0, page.limit) : rows;
      const last = items.at(-1);
      return {
        items,
        next: more && last?.deadAt ? { deadAt: last.deadAt, deliveryId: last.deliveryId } : undefined,
      };
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
