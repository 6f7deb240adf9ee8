import type { Knex } from 'knex';
import type { Registry } from 'prom-client';
import { doublingBackoffMs } from '../../platform/backoff.ts';
import { type Clock, systemClock } from '../../platform/clock.ts';
import type { EventBus } from '../../platform/events/index.ts';
import { createIdleSignal } from '../../platform/idle-signal.ts';
import type { Logger } from '../../platform/logger.ts';
import { createWorkLoop } from '../../platform/work-loop.ts';
import { createDeliveryClient, send } from './http-delivery.ts';
import { createWebhookMetrics } from './metrics.ts';
import {
  type AttemptOutcome,
  claimDue,
  type Delivery,
  nextDueAt,
  recordAttempt,
  releaseLeases,
  renewLease,
} from './repository.ts';
import type { WebhookSettings } from './settings.ts';
import { attemptRequest } from './signing.ts';

/** The event-bus topic that wakes the dispatchers of every replica: deliveries are due. */
export const WEBHOOKS_TOPIC = 'webhooks';

/**
 * A lease lasts one attempt's timeout plus this margin: enough to record the outcome after the
 * timeout cut the request, so a lease never expires under a live attempt.
 */
const LEASE_MARGIN_MS = 5000;

/** Rows claimed per query; the queue size bounds the total. */
const CLAIM_BATCH = 64;

/**
 * Longest sleep between two looks at the table. Wake-ups come through the event bus and the
 * timer of the next due attempt; this only bounds the damage of a missed wake-up (a NOTIFY sent
 * while a LISTEN connection was reconnecting) and is far from polling.
 */
const SAFETY_WAKE_MS = 30_000;

/**
 * Shortest timer when the table says something is due but the claim found nothing (another
 * replica holds the rows locked for a moment): waiting a little avoids a loop of empty claims.
 */
const MIN_REARM_MS = 100;

export interface WebhookDispatcherDeps {
  db: Knex;
  events: EventBus;
  clock?: Clock;
  log: Logger;
  settings: WebhookSettings;
  /** Names this replica in `leased_by`; unique per process. */
  replicaId: string;
  metrics?: Registry;
}

export interface WebhookDispatcher {
  start(): void;
  /** Stops claiming, hands back claimed rows not yet started, and waits for attempts in flight. */
  stop(): Promise<void>;
  /** Call after a transaction that enqueued deliveries committed: wakes workers here and on other replicas. */
  wake(): void;
  /** Tests: claim and deliver everything due now, resolve when done. */
  runOnce(): Promise<void>;
}

/** Delay before retry `attempt + 1`: the initial backoff doubled per failure, capped at the longest backoff. */
export function backoffMs(attempt: number, settings: WebhookSettings): number {
  return doublingBackoffMs(attempt, settings.webhookInitialBackoffMs, settings.webhookMaxBackoffMs);
}

/**
 * The delivery workers of one replica. Due rows are claimed from the database (FOR UPDATE SKIP
 * LOCKED, status `delivering` with a lease) into an in-memory queue of `webhook_queue_size`;
 * `webhook_workers` attempts run at once; the rest wait in the table. A row whose lease expires
 * (its replica crashed) is claimed again by any replica, so delivery is at least once.
 */
export function createWebhookDispatcher(deps: WebhookDispatcherDeps): WebhookDispatcher {
  const { db, events, log, settings, replicaId } = deps;
  const clock = deps.clock ?? systemClock;
  const metrics = deps.metrics ? createWebhookMetrics(deps.metrics, db) : undefined;
  const client = createDeliveryClient(settings.webhookAllowPrivateNetworks);

  const queue: Delivery[] = [];
  /** Ids queued or in flight here: a row re-claimed while still held is not queued twice. */
  const held = new Set<string>();
  let active = 0;
  let claimed = 0;
  /** The last claim filled the queue, so more may be due in the table. */
  let backlog = false;
  /** Rows the last pass claimed. */
  let lastClaimed = 0;
  let started = false;
  let stopped = false;
  let unsubscribe: (() => void) | undefined;
  const idleSignal = createIdleSignal(() => queue.length === 0 && active === 0);

  const leaseUntil = (now: number) => new Date(now + settings.webhookTimeoutMs + LEASE_MARGIN_MS);

  /** Claims due rows until the queue is full or nothing is due. Returns how many it claimed. */
  async function fill(): Promise<number> {
    let total = 0;
    while (!stopped) {
      const room = settings.webhookQueueSize - queue.length;
      if (room <= 0) {
        backlog = true;
        break;
      }
      const limit = Math.min(room, CLAIM_BATCH);
      const now = clock.now();
      const rows = await claimDue(db, { replicaId, now: new Date(now), leaseUntil: leaseUntil(now), limit });
      for (const row of rows) {
        if (held.has(row.deliveryId)) continue;
        held.add(row.deliveryId);
        queue.push(row);
        total++;
      }
      drain();
      if (rows.length < limit) {
        backlog = false;
        break;
      }
    }
    claimed += total;
    return total;
  }

  /** Sets the timer for whatever becomes due next, while the queue has room for it. */
  async function wakeWhenDue(): Promise<void> {
    if (queue.length >= settings.webhookQueueSize) return;
    const at = await nextDueAt(db);
    const now = clock.now();
    if (at === undefined) loop.wakeAt(now + SAFETY_WAKE_MS);
    else loop.wakeAt(at <= now && lastClaimed === 0 ? now + MIN_REARM_MS : at);
  }

  const loop = createWorkLoop({
    pass: async () => {
      lastClaimed = await fill();
    },
    afterPasses: wakeWhenDue,
    onError: (error) =>
      log.error({ err: error }, 'webhook dispatcher could not claim deliveries; trying again shortly'),
    retryAfterMs: 1000,
    longestSleepMs: SAFETY_WAKE_MS,
    clock,
  });

  function drain() {
    while (!stopped && active < settings.webhookWorkers && queue.length > 0) {
      const delivery = queue.shift() as Delivery;
      active++;
      attempt(delivery)
        .catch((error) =>
          log.error(
            { err: error, delivery_id: delivery.deliveryId },
            'webhook delivery attempt failed to run',
          ),
        )
        .finally(() => {
          active--;
          held.delete(delivery.deliveryId);
          if (backlog && queue.length <= settings.webhookQueueSize / 2) void loop.run();
          drain();
          idleSignal.check();
        });
    }
  }

  async function attempt(delivery: Delivery): Promise<void> {
    const startedAt = clock.now();
    const renewed = await renewLease(db, {
      deliveryId: delivery.deliveryId,
      replicaId,
      now: new Date(startedAt),
      leaseUntil: leaseUntil(startedAt),
    });
    if (!renewed) {
      log.debug({ delivery_id: delivery.deliveryId }, 'webhook delivery was claimed by another replica');
      return;
    }
    const request = attemptRequest(delivery, new Date(startedAt));
    const result = await send(
      { url: delivery.url, headers: request.headers, body: request.body },
      { timeoutMs: settings.webhookTimeoutMs, client },
    );
    const number = delivery.attempts + 1;
    const now = clock.now();
    const ok = result.error === null;
    let next: AttemptOutcome['next'];
    if (ok) next = { status: 'delivered', at: new Date(now) };
    else if (number >= settings.webhookMaxAttempts) next = { status: 'dead', at: new Date(now) };
    else next = { status: 'pending', nextAttemptAt: new Date(now + backoffMs(number, settings)) };
    const moved = await recordAttempt(db, {
      deliveryId: delivery.deliveryId,
      replicaId,
      now: new Date(now),
      next,
      attempt: {
        attempt: number,
        manual: delivery.manual,
        startedAt: new Date(startedAt).toISOString(),
        durationMs: result.durationMs,
        statusCode: result.statusCode,
        error: result.error,
        responseBody: result.responseBody,
      },
    });
    const context = {
      delivery_id: delivery.deliveryId,
      execution_id: delivery.executionId,
      attempt: number,
      manual: delivery.manual,
      status_code: result.statusCode,
      duration_ms: result.durationMs,
    };
    log.debug({ ...context, error: result.error }, `webhook attempt ${ok ? 'delivered' : 'failed'}`);
    metrics?.attemptsTotal.inc({ result: ok ? 'success' : 'failure' });
    if (!moved) {
      log.warn(context, 'webhook delivery lease was lost during the attempt; the attempt is recorded only');
      return;
    }
    if (next.status === 'pending') loop.wakeAt(next.nextAttemptAt.getTime());
    if (next.status === 'delivered') metrics?.deliveriesTotal.inc({ outcome: 'delivered' });
    if (next.status === 'dead') {
      metrics?.deliveriesTotal.inc({ outcome: 'dead' });
      log.warn(
        { ...context, url: delivery.url, error: result.error },
        `webhook delivery dead-lettered after ${number} attempts`,
      );
    }
  }

  return {
    start() {
      if (started || stopped) return;
      started = true;
      unsubscribe = events.subscribe(WEBHOOKS_TOPIC, () => loop.wake());
      loop.start();
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      unsubscribe?.();
      await loop.stop();
      const waiting = queue.splice(0);
      for (const delivery of waiting) held.delete(delivery.deliveryId);
      try {
        // Handed back now rather than when their leases expire: another replica can take them.
        await releaseLeases(
          db,
          waiting.map((d) => d.deliveryId),
          replicaId,
          new Date(clock.now()),
        );
      } catch (error) {
        log.warn({ err: error }, 'could not hand back claimed webhook deliveries; their leases will expire');
      }
      // Attempts in flight end within the timeout; their outcome is recorded before the database closes.
      await idleSignal.wait();
      await client.destroy();
    },

    wake() {
      if (stopped) return;
      events
        .publish(WEBHOOKS_TOPIC, {})
        .catch((error) => log.warn({ err: error }, 'could not announce due webhook deliveries'));
      // Our own bus subscription would wake us too; a pass now saves the round trip.
      loop.wake();
    },

    async runOnce() {
      for (;;) {
        const before = claimed;
        await loop.run();
        await idleSignal.wait();
        if (claimed === before && !backlog) return;
      }
    },
  };
}
