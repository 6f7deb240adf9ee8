import type { Knex } from 'knex';
import { doublingBackoffMs } from '../../platform/backoff.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Batch } from './batcher.ts';
import type { CollectorClient } from './collector-client.ts';
import type { LeaseView } from './forwarding-lease.ts';
import { recordDelivered, recordError, recordParked } from './repository.ts';
import type { ObservabilitySettings } from './settings.ts';

export interface BatchSenderDeps {
  db: Knex;
  clock: Clock;
  log: Logger;
  settings: Pick<ObservabilitySettings, 'maxAttempts' | 'initialBackoffMs' | 'maxBackoffMs'>;
  client: CollectorClient;
  replicaId: string;
  lease: LeaseView;
  stopped: () => boolean;
  /** The batcher's bookkeeping: the cursors a settled batch lets move, and the read-ahead count. */
  batches: {
    settle(batch: Batch): Record<string, string>;
    release(batch: Batch): void;
    depth(): number;
  };
}

/**
 * Posts a batch to the collector, each attempt bounded by `http_timeout`, retried with doubling
 * backoff, then parked in the dead-letter queue; records the outcome and the cursors it lets
 * move. Commits run one after another, so cursors written later are never older.
 */
export function createBatchSender(deps: BatchSenderDeps) {
  const { db, clock, log, settings, client, replicaId, lease, stopped, batches } = deps;
  let commits: Promise<unknown> = Promise.resolve();
  const sleepers = new Set<() => void>();

  /** Waits `ms`, or less when the forwarder stops or steps down (resolves false then). */
  function sleep(ms: number, batchGeneration: number): Promise<boolean> {
    return new Promise((done) => {
      const wake = () => {
        clearTimeout(timer);
        sleepers.delete(wake);
        done(!stopped() && batchGeneration === lease.generation);
      };
      const timer = setTimeout(wake, ms);
      timer.unref();
      sleepers.add(wake);
    });
  }

  /**
   * The cursors a batch may write when its commit runs: none once this replica stepped down or its
   * lease lapsed (the lease row may be another holder's, or ours again with cursors that moved on).
   * A skipped move costs at most a resend by the next holder, never a lost event.
   */
  function current(batch: Batch, cursors: Record<string, string>): Record<string, string> {
    return lease.holds(batch.generation, clock.now()) ? cursors : {};
  }

  /** Commits serialise, so cursors written later are never older than cursors written earlier. */
  function commit<T>(write: () => Promise<T>): Promise<T> {
    const next = commits.then(write, write);
    commits = next.catch(() => undefined);
    return next;
  }

  async function send(batch: Batch): Promise<void> {
    let lastError = '';
    let lastStatus: number | null = null;
    for (let attempt = 1; attempt <= settings.maxAttempts; attempt++) {
      const target = lease.collector;
      // A batch given up stays in `pending`, never done: no cursor of this generation can pass
      // its events, so whoever forwards next reads them again.
      if (stopped() || batch.generation !== lease.generation || !target?.enabled) return;
      const result = await client.post(batch, target, new Date(clock.now()));
      if (result.error === null) {
        const cursors = batch.generation === lease.generation ? batches.settle(batch) : {};
        batches.release(batch);
        await commit(() =>
          recordDelivered(db, {
            replicaId,
            events: batch.events.length,
            cursors: current(batch, cursors),
            now: new Date(clock.now()),
            queueDepth: batches.depth(),
          }),
        );
        return;
      }
      lastError = result.error;
      lastStatus = result.statusCode;
      log.debug(
        { batch_id: batch.batchId, attempt, error: result.error },
        'observability batch attempt failed',
      );
      await recordError(
        db,
        `batch ${batch.batchId}, attempt ${attempt}: ${result.error}`,
        new Date(clock.now()),
      );
      const backoffMs = doublingBackoffMs(attempt, settings.initialBackoffMs, settings.maxBackoffMs);
      if (attempt < settings.maxAttempts && !(await sleep(backoffMs, batch.generation))) return;
    }
    if (batch.generation !== lease.generation || stopped()) return;
    const cursors = batches.settle(batch);
    batches.release(batch);
    log.warn(
      { batch_id: batch.batchId, events: batch.events.length, error: lastError },
      `observability batch parked in the dead-letter queue after ${settings.maxAttempts} attempts`,
    );
    await commit(() =>
      recordParked(db, {
        replicaId,
        batchId: batch.batchId,
        events: batch.events,
        attempts: settings.maxAttempts,
        error: lastError,
        statusCode: lastStatus,
        createdAt: batch.createdAt,
        cursors: current(batch, cursors),
        now: new Date(clock.now()),
        queueDepth: batches.depth(),
      }),
    );
  }

  return {
    send,
    /** Ends every backoff wait now (the forwarder stopped or stepped down). */
    interruptWaits(): void {
      for (const wake of [...sleepers]) wake();
    },
    /** Resolves once every commit begun so far has ended. */
    committed: (): Promise<unknown> => commits,
  };
}

export type BatchSender = ReturnType<typeof createBatchSender>;
