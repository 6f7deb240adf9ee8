import { newId } from '@switchyard/shared';
import type { Clock } from '../../platform/clock.ts';
import { createIdleSignal } from '../../platform/idle-signal.ts';
import type { Logger } from '../../platform/logger.ts';
import type { LeaseView } from './forwarding-lease.ts';
import type { ForwardedEvent } from './repository.ts';
import type { ObservabilitySettings } from './settings.ts';

/** A batch's position among those formed since this replica began forwarding. */
export interface Batch {
  seq: number;
  batchId: string;
  events: ForwardedEvent[];
  /** The events' payload bytes (as JSON text). */
  bytes: number;
  /** Per stream, the last entry in the batch (snapshots have none). */
  cursors: Record<string, string>;
  generation: number;
  createdAt: Date;
  /** Set once delivered or parked: its cursors may then be committed. */
  done: boolean;
  /** Its events no longer count as read ahead (its outcome is known). */
  released: boolean;
}

/** An event read ahead, waiting for a batch. */
export interface Queued {
  event: ForwardedEvent;
  /** The stream's cursor once this event is forwarded; undefined for snapshots. */
  cursor?: string;
  /** Its payload's size as JSON text. */
  bytes: number;
  /** When it was read (wall time: the batch timeout is a real wait). */
  readAt: number;
}

export interface BatcherDeps {
  clock: Clock;
  log: Logger;
  settings: Pick<ObservabilitySettings, 'batchSize' | 'batchTimeoutMs' | 'workers'>;
  /** Payload bytes in one batch at most. */
  batchBytes: number;
  lease: LeaseView;
  stopped: () => boolean;
  /** Delivers or parks a batch (settling it), or gives it up. */
  send: (batch: Batch) => Promise<void>;
  /** A batch's post ended: there is room to read ahead again. */
  onBatchEnded: () => void;
}

/**
 * Turns the events read ahead into batches and hands them to the sender, `workers` at a time:
 * full ones at once, partial ones after the batch timeout. It keeps the batches in the order they
 * were formed, so a stream's cursor moves only past batches whose outcome is known.
 */
export function createBatcher(deps: BatcherDeps) {
  const { clock, log, settings, batchBytes, lease, stopped } = deps;
  const queue: Queued[] = [];
  /** Batches formed and not yet settled, oldest first. */
  const pending: Batch[] = [];
  let seq = 0;
  let active = 0;
  let inFlightEvents = 0;
  let queuedBytes = 0;
  let inFlightBytes = 0;
  /** Partial batches go at once, without waiting for the batch timeout. */
  let flushing = false;
  let batchTimer: NodeJS.Timeout | undefined;
  const idleSignal = createIdleSignal(() => queue.length === 0 && active === 0);

  /** Forms batches while a worker is free: full ones at once, partial ones after the batch timeout. */
  function drain(): void {
    while (!stopped() && lease.leading && active < settings.workers && queue.length > 0) {
      const full = queue.length >= settings.batchSize || queuedBytes >= batchBytes;
      const waited = Date.now() - (queue[0] as Queued).readAt;
      if (!full && !flushing && waited < settings.batchTimeoutMs) {
        if (!batchTimer) {
          batchTimer = setTimeout(() => {
            batchTimer = undefined;
            drain();
          }, settings.batchTimeoutMs - waited);
          batchTimer.unref();
        }
        return;
      }
      // Up to batch_size events, ended early before the event that would pass the byte bound.
      let count = 0;
      let bytes = 0;
      for (const item of queue) {
        if (count >= settings.batchSize || (count > 0 && bytes + item.bytes > batchBytes)) break;
        count += 1;
        bytes += item.bytes;
      }
      const taken = queue.splice(0, count);
      queuedBytes -= bytes;
      const cursors: Record<string, string> = {};
      for (const item of taken) if (item.cursor) cursors[item.event.stream] = item.cursor;
      const batch: Batch = {
        seq: seq++,
        batchId: newId('obsb'),
        events: taken.map((item) => item.event),
        bytes,
        cursors,
        generation: lease.generation,
        createdAt: new Date(clock.now()),
        done: false,
        released: false,
      };
      pending.push(batch);
      active += 1;
      inFlightEvents += batch.events.length;
      inFlightBytes += batch.bytes;
      deps
        .send(batch)
        .catch((error) =>
          log.error({ err: error, batch_id: batch.batchId }, 'observability batch failed to run'),
        )
        .finally(() => {
          active -= 1;
          release(batch);
          deps.onBatchEnded();
          drain();
          idleSignal.check();
        });
    }
  }

  /** Stops counting a batch's events as read ahead, once. */
  function release(batch: Batch): void {
    if (batch.released) return;
    batch.released = true;
    inFlightEvents -= batch.events.length;
    inFlightBytes -= batch.bytes;
  }

  return {
    /** Queues an event read ahead (call drain() to form batches). */
    add(item: Queued): void {
      queue.push(item);
      queuedBytes += item.bytes;
    },
    drain,
    release,
    /**
     * Marks the batch done and returns the cursors it lets move: those of the done batches at the
     * front, in the order they were formed. An earlier batch still in flight holds them back.
     */
    settle(batch: Batch): Record<string, string> {
      batch.done = true;
      const cursors: Record<string, string> = {};
      while (pending.length > 0 && (pending[0] as Batch).done) {
        const first = pending.shift() as Batch;
        if (first.generation === lease.generation) Object.assign(cursors, first.cursors);
      }
      return cursors;
    },
    /** Events read ahead: queued or in flight. */
    depth: () => queue.length + inFlightEvents,
    /** Payload bytes read ahead: queued or in flight. */
    bytesAhead: () => queuedBytes + inFlightBytes,
    /** Events queued, not yet in a batch. */
    queued: () => queue.length,
    /** While on, partial batches go at once instead of after the batch timeout. */
    setFlushing(on: boolean): void {
      flushing = on;
    },
    /** Forgets the events queued and the batches not yet settled (this replica stepped down). */
    forget(): void {
      queue.splice(0);
      queuedBytes = 0;
      pending.splice(0);
      clearTimeout(batchTimer);
      batchTimer = undefined;
      idleSignal.check();
    },
    /** Forms no more batches; what is queued is dropped. */
    stop(): void {
      clearTimeout(batchTimer);
      queue.splice(0);
      queuedBytes = 0;
    },
    /** Resolves once nothing is queued and no post is in flight. */
    idle: () => idleSignal.wait(),
  };
}

export type Batcher = ReturnType<typeof createBatcher>;
