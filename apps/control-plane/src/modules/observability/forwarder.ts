import { newId, toIso } from '@switchyard/shared';
import type { Knex } from 'knex';
import { type Clock, systemClock } from '../../platform/clock.ts';
import type { EventBus } from '../../platform/events/event-bus.ts';
import { EVENT_LOG_TOPIC, type EventLog } from '../../platform/events/event-log.ts';
import type { Logger } from '../../platform/logger.ts';
import { createWorkLoop } from '../../platform/work-loop.ts';
import { createBatchSender } from './batch-sender.ts';
import { createBatcher } from './batcher.ts';
import { type CollectorClient, createCollectorClient } from './collector-client.ts';
import { createEventReader, sizeOf } from './event-reader.ts';
import { createForwardingLease } from './forwarding-lease.ts';
import { claimSnapshot } from './repository.ts';
import type { ObservabilitySettings } from './settings.ts';
import { readSystemSnapshot } from './snapshot.ts';

export { FORWARDED_STREAMS } from './event-reader.ts';

/** The event-bus topic that tells every replica's forwarder to re-read the settings. */
export const OBSERVABILITY_TOPIC = 'observability';

/**
 * Payload bytes (as JSON text) read ahead at most, queued and in flight together, besides the
 * `queue_size` bound on events: a memory change carries a value of up to `memory.max_value_bytes`
 * (1 MiB by default), and a thousand of those would hold a GiB in the process. A read stops once
 * this much is ahead; one event is always let through, however large.
 */
export const READ_AHEAD_BYTES = 32 * 1024 * 1024;

/**
 * Payload bytes in one batch at most: a batch ends before the event that would take it past this,
 * so huge events make smaller batches instead of bodies of many MiB (an event larger than this
 * goes alone).
 */
export const BATCH_BYTES = 4 * 1024 * 1024;

/** How long the forwarding lease lasts without renewal; renewed every third of it. */
const DEFAULT_LEASE_TTL_MS = 15_000;

export interface ForwarderDeps {
  db: Knex;
  events: EventBus;
  eventLog: EventLog;
  clock?: Clock;
  log: Logger;
  settings: ObservabilitySettings;
  /** `execution_queue.webhook_allow_private_networks`: collectors obey the webhooks' address rules. */
  allowPrivateNetworks: boolean;
  /** Names this replica in the lease and in every batch's `source.replica`. */
  replicaId: string;
  leaseTtlMs?: number;
  /** Tests: the byte bounds ({@link READ_AHEAD_BYTES}, {@link BATCH_BYTES}). */
  readAheadBytes?: number;
  batchBytes?: number;
}

export interface Forwarder {
  start(): void;
  /** Stops reading, abandons batches waiting to retry, waits for posts in flight, gives the lease up. */
  stop(): Promise<void>;
  /** Call after the settings changed: every replica's forwarder re-reads them. */
  settingsChanged(): void;
  /** The HTTP client (redrive posts through it, under the same rules). */
  readonly client: CollectorClient;
  readonly replicaId: string;
  /** Batches posted at once (redrive uses as many). */
  readonly workers: number;
  /** Longest one post to the collector may take (`observability.http_timeout`). */
  readonly httpTimeoutMs: number;
  /** Events read ahead on this replica (queued or in flight). */
  queueDepth(): number;
  /**
   * Tests: one pass that reads everything readable, sends it (partial batches at once, without
   * waiting for the batch timeout) and resolves when every batch is delivered or parked.
   */
  runOnce(): Promise<void>;
}

/**
 * The forwarder of one replica, composed of its parts: the lease (whether this replica forwards),
 * the reader (event-log streams after the stored cursors, at most `queue_size` events read ahead),
 * the batcher (batches, in the order formed) and the sender (`workers` posts at once, each bounded
 * by `http_timeout`, retried with doubling backoff, then parked in the DLQ). A stream's cursor
 * moves only past batches that are delivered or parked, in the order they were formed, so a
 * replica that takes over after a crash resends at most the batches in flight. Executions never
 * wait for any of this: they only append to the event log.
 */
export function createForwarder(deps: ForwarderDeps): Forwarder {
  const { db, events, log, settings, replicaId } = deps;
  const clock = deps.clock ?? systemClock;
  const client = createCollectorClient({
    allowPrivateNetworks: deps.allowPrivateNetworks,
    timeoutMs: settings.httpTimeoutMs,
    replicaId,
  });
  let started = false;
  let stopped = false;
  const isStopped = () => stopped;
  let unsubscribe: (() => void) | undefined;
  let unhint: (() => void) | undefined;
  let snapshotTimer: NodeJS.Timeout | undefined;

  const lease = createForwardingLease({
    db,
    clock,
    replicaId,
    ttlMs: deps.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS,
    queueDepth: () => batcher.depth(),
    // What is read ahead is forgotten: the next holder reads it again.
    onStepDown: () => {
      reader.forget();
      batcher.forget();
      sender.interruptWaits();
    },
    onLead: (cursors) => reader.startFrom(cursors),
  });
  const batcher = createBatcher({
    clock,
    log,
    settings,
    batchBytes: deps.batchBytes ?? BATCH_BYTES,
    lease: lease.view,
    stopped: isStopped,
    send: (batch) => sender.send(batch),
    // Room in the queue again: read on, at the pace new events are read.
    onBatchEnded: () => reader.readSoon(),
  });
  const sender = createBatchSender({
    db,
    clock,
    log,
    settings,
    client,
    replicaId,
    lease: lease.view,
    stopped: isStopped,
    batches: batcher,
  });
  const reader = createEventReader({
    clock,
    log,
    eventLog: deps.eventLog,
    settings,
    readAheadBytes: deps.readAheadBytes ?? READ_AHEAD_BYTES,
    lease: lease.view,
    batcher,
    stopped: isStopped,
  });

  /** One pass: settings and lease, then the snapshot if due, then reading on. */
  async function tick(): Promise<void> {
    if (!(await lease.renew())) return;
    await snapshotIfDue();
    // Not awaited: under a steady flow of events the reads go on and on, and the lease must still
    // be renewed on time (a lapsed lease lets a second replica forward the same events at once).
    void reader.read();
  }

  const ticks = createWorkLoop({
    pass: tick,
    onError: (error) =>
      log.error({ err: error }, 'observability forwarder pass failed; retrying at the next renewal'),
    pollMs: Math.max(1, Math.floor((deps.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS) / 3)),
    clock,
  });

  async function snapshotIfDue(): Promise<void> {
    if (!lease.view.leading || settings.snapshotIntervalMs <= 0) return;
    const now = clock.now();
    const due = await claimSnapshot(db, {
      replicaId,
      now: new Date(now),
      dueBefore: new Date(now - settings.snapshotIntervalMs),
    });
    if (!due) return;
    const snapshot = await readSystemSnapshot(db, new Date(now));
    const payload = { ...snapshot, forwarder: { replica_id: replicaId, queue_depth: batcher.depth() } };
    batcher.add({
      event: {
        id: newId('snap'),
        stream: 'system',
        event: 'system.snapshot',
        timestamp: toIso(now),
        payload,
      },
      bytes: sizeOf(payload),
      readAt: Date.now(),
    });
    batcher.drain();
  }

  return {
    client,
    replicaId,
    workers: settings.workers,
    httpTimeoutMs: settings.httpTimeoutMs,
    queueDepth: () => batcher.depth(),

    start() {
      if (started || stopped) return;
      started = true;
      unsubscribe = events.subscribe(OBSERVABILITY_TOPIC, () => ticks.wake());
      unhint = events.subscribe(EVENT_LOG_TOPIC, reader.onHint);
      reader.start();
      // The lease is renewed every third of its time to live, by the tick loop's poll.
      ticks.start();
      if (settings.snapshotIntervalMs > 0) {
        snapshotTimer = setInterval(() => ticks.wake(), settings.snapshotIntervalMs);
        snapshotTimer.unref();
      }
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      unsubscribe?.();
      unhint?.();
      clearInterval(snapshotTimer);
      const ticking = ticks.stop();
      const reading = reader.stop();
      sender.interruptWaits();
      await ticking;
      await reading;
      batcher.stop();
      // Posts in flight end within the HTTP timeout; their outcome is recorded before the database closes.
      await batcher.idle();
      await sender.committed();
      try {
        await lease.release();
      } catch (error) {
        log.warn({ err: error }, 'could not hand back the observability forwarding lease; it will expire');
      }
      client.destroy();
    },

    settingsChanged() {
      if (stopped) return;
      events
        .publish(OBSERVABILITY_TOPIC, {})
        .catch((error) => log.warn({ err: error }, 'could not announce new observability settings'));
      // Our own subscription would wake us too (when started); a pass now saves the round trip.
      ticks.wake();
    },

    async runOnce() {
      await ticks.run();
      batcher.setFlushing(true);
      try {
        for (;;) {
          batcher.drain();
          await batcher.idle();
          await sender.committed();
          if (!(await reader.read()) && batcher.queued() === 0) return;
        }
      } finally {
        batcher.setFlushing(false);
      }
    },
  };
}
