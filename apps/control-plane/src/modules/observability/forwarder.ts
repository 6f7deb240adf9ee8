import { newId, toIso } from '@switchyard/shared';
import type { Knex } from 'knex';
import { doublingBackoffMs } from '../../platform/backoff.ts';
import { type Clock, systemClock } from '../../platform/clock.ts';
import type { EventBus } from '../../platform/events/event-bus.ts';
import { EVENT_LOG_TOPIC, type EventLog } from '../../platform/events/event-log.ts';
import { createIdleSignal } from '../../platform/idle-signal.ts';
import type { Logger } from '../../platform/logger.ts';
import { EXECUTIONS_STREAM } from '../executions/index.ts';
import { MEMORY_STREAM } from '../memory/index.ts';
import { type CollectorClient, createCollectorClient } from './collector-client.ts';
import {
  acquireLease,
  type CollectorSettings,
  claimSnapshot,
  databaseNow,
  type ForwardedEvent,
  type ForwarderState,
  readSettings,
  recordDelivered,
  recordError,
  recordParked,
  releaseLease,
  restartForwarding,
} from './repository.ts';
import type { ObservabilitySettings } from './settings.ts';
import { readSystemSnapshot } from './snapshot.ts';

/** The event-bus topic that tells every replica's forwarder to re-read the settings. */
export const OBSERVABILITY_TOPIC = 'observability';

/** The event-log streams forwarded; `nodes` is the stream nodes/transitions.ts appends to. */
export const FORWARDED_STREAMS = [EXECUTIONS_STREAM, 'nodes', MEMORY_STREAM] as const;

/** Entries per event-log read. */
const PAGE_LIMIT = 256;

/**
 * Least time between two read passes woken by new events. Every execution appends events, and a
 * pass reads each forwarded stream: woken per event, the reads cost executions a third of their
 * throughput on the embedded database (bench/control-plane/forwarder.mjs). Batches wait up to
 * `batch_timeout` anyway, so reading at most every 200 ms costs forwarding nothing it promised.
 */
const READ_INTERVAL_MS = 200;

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

/** A batch's position among those formed since this replica began forwarding. */
interface Batch {
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

interface Queued {
  event: ForwardedEvent;
  /** The stream's cursor once this event is forwarded; undefined for snapshots. */
  cursor?: string;
  /** Its payload's size as JSON text. */
  bytes: number;
  /** When it was read (wall time: the batch timeout is a real wait). */
  readAt: number;
}

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

function timestampOf(payload: Record<string, unknown>, fallback: number): string {
  const value = payload.timestamp;
  if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return value;
  return toIso(fallback);
}

/**
 * The forwarder of one replica. One replica forwards at a time: it holds the lease on the
 * `observability_forwarder` row, reads the event-log streams after the stored cursors, keeps at
 * most `queue_size` events read ahead, batches them, and posts `workers` batches at once, each
 * attempt bounded by `http_timeout`, retried with doubling backoff, then parked in the DLQ. A
 * stream's cursor moves only past batches that are delivered or parked, in the order they were
 * formed, so a replica that takes over after a crash resends at most the batches in flight.
 * Executions never wait for any of this: they only append to the event log.
 */
export function createForwarder(deps: ForwarderDeps): Forwarder {
  const { db, events, eventLog, log, settings, replicaId } = deps;
  const clock = deps.clock ?? systemClock;
  const leaseTtlMs = deps.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  const readAheadBytes = deps.readAheadBytes ?? READ_AHEAD_BYTES;
  const batchBytes = deps.batchBytes ?? BATCH_BYTES;
  const client = createCollectorClient({
    allowPrivateNetworks: deps.allowPrivateNetworks,
    timeoutMs: settings.httpTimeoutMs,
    replicaId,
  });

  let collector: CollectorSettings | undefined;
  let leading = false;
  /** Bumped whenever this replica stops forwarding or starts afresh: older batches commit nothing. */
  let generation = 0;
  let startedAt: Date | null = null;
  /**
   * Until when this replica's lease runs, as of its last renewal. Past it another replica may have
   * taken the lease, forwarded and moved the cursors on (and given the lease back): what this
   * replica read ahead is then stale, and no cursor of it may be written.
   */
  let heldUntil = 0;
  const readCursors = new Map<string, string>();
  const queue: Queued[] = [];
  const pending: Batch[] = [];
  let seq = 0;
  let active = 0;
  let inFlightEvents = 0;
  let queuedBytes = 0;
  let inFlightBytes = 0;
  let flushing = false;
  let started = false;
  let stopped = false;
  let unsubscribe: (() => void) | undefined;
  let unhint: (() => void) | undefined;
  let readTimer: NodeJS.Timeout | undefined;
  let lastReadAt = Number.NEGATIVE_INFINITY;
  let renewTimer: NodeJS.Timeout | undefined;
  let snapshotTimer: NodeJS.Timeout | undefined;
  let batchTimer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> | undefined;
  let tickAgain = false;
  let filling: Promise<boolean> | undefined;
  let fillAgain = false;
  let commits: Promise<unknown> = Promise.resolve();
  const sleepers = new Set<() => void>();
  const idleSignal = createIdleSignal(() => queue.length === 0 && active === 0);

  const depth = () => queue.length + inFlightEvents;
  const bytesAhead = () => queuedBytes + inFlightBytes;
  const sizeOf = (payload: unknown) => Buffer.byteLength(JSON.stringify(payload) ?? '');

  /** Waits `ms`, or less when the forwarder stops or steps down (resolves false then). */
  function sleep(ms: number, batchGeneration: number): Promise<boolean> {
    return new Promise((done) => {
      const wake = () => {
        clearTimeout(timer);
        sleepers.delete(wake);
        done(!stopped && batchGeneration === generation);
      };
      const timer = setTimeout(wake, ms);
      timer.unref();
      sleepers.add(wake);
    });
  }

  function backoffMs(attempt: number): number {
    return doublingBackoffMs(attempt, settings.initialBackoffMs, settings.maxBackoffMs);
  }

  /** Stops forwarding here: what is read ahead is forgotten (the next holder reads it again). */
  function stepDown() {
    if (!leading) return;
    leading = false;
    generation += 1;
    queue.splice(0);
    queuedBytes = 0;
    pending.splice(0);
    readCursors.clear();
    clearTimeout(readTimer);
    readTimer = undefined;
    clearTimeout(batchTimer);
    batchTimer = undefined;
    for (const wake of [...sleepers]) wake();
    idleSignal.check();
  }

  function becomeLeader(state: ForwarderState) {
    stepDown();
    leading = true;
    generation += 1;
    startedAt = state.startedAt;
    for (const [stream, cursor] of Object.entries(state.cursors)) readCursors.set(stream, cursor);
  }

  /** Reads the settings and the lease; the one place that decides whether this replica forwards. */
  function tick(): Promise<void> {
    if (stopped) return Promise.resolve();
    if (ticking) {
      tickAgain = true;
      return ticking;
    }
    ticking = (async () => {
      try {
        do {
          tickAgain = false;
          await tickOnce();
        } while (tickAgain && !stopped);
      } catch (error) {
        if (!stopped)
          log.error({ err: error }, 'observability forwarder pass failed; retrying at the next renewal');
      } finally {
        ticking = undefined;
      }
    })();
    return ticking;
  }

  async function tickOnce(): Promise<void> {
    collector = await readSettings(db);
    if (!collector?.enabled) {
      if (leading) {
        stepDown();
        await releaseLease(db, replicaId, new Date(clock.now()));
      }
      return;
    }
    const now = clock.now();
    const lapsed = leading && now >= heldUntil;
    let state = await acquireLease(db, {
      replicaId,
      now: new Date(now),
      until: new Date(now + leaseTtlMs),
      queueDepth: depth(),
    });
    if (!state) {
      stepDown();
      return;
    }
    if (state.startedAt === null) {
      // Enabled without a start time (a row written before this replica knew it): start now.
      await restartForwarding(db, await databaseNow(db), new Date(now));
      state = await acquireLease(db, {
        replicaId,
        now: new Date(now),
        until: new Date(now + leaseTtlMs),
        queueDepth: 0,
      });
      if (!state) return;
    }
    // A lapsed lease is taken afresh: the stored cursors may have moved on meanwhile.
    if (!leading || lapsed || state.startedAt?.getTime() !== startedAt?.getTime()) {
      becomeLeader(state);
    }
    heldUntil = now + leaseTtlMs;
    await snapshotIfDue();
    // Not awaited: under a steady flow of events the reads go on and on, and the lease must still
    // be renewed on time (a lapsed lease lets a second replica forward the same events at once).
    void fill();
  }

  async function snapshotIfDue(): Promise<void> {
    if (!leading || settings.snapshotIntervalMs <= 0) return;
    const now = clock.now();
    const due = await claimSnapshot(db, {
      replicaId,
      now: new Date(now),
      dueBefore: new Date(now - settings.snapshotIntervalMs),
    });
    if (!due) return;
    const snapshot = await readSystemSnapshot(db, new Date(now));
    const payload = { ...snapshot, forwarder: { replica_id: replicaId, queue_depth: depth() } };
    const bytes = sizeOf(payload);
    queue.push({
      event: {
        id: newId('snap'),
        stream: 'system',
        event: 'system.snapshot',
        timestamp: toIso(now),
        payload,
      },
      bytes,
      readAt: Date.now(),
    });
    queuedBytes += bytes;
    drain();
  }

  /**
   * New entries in a stream (the event log's hint on the bus, from this replica or another): read
   * them, no sooner than READ_INTERVAL_MS after the last pass began. The hint carries no entries,
   * so no tail reader runs for the forwarder; the reads are its own page() calls.
   */
  function onHint(hint: Record<string, unknown>): void {
    if ((FORWARDED_STREAMS as readonly unknown[]).includes(hint.stream)) scheduleRead();
  }

  /** A read pass as soon as READ_INTERVAL_MS has passed since the last one began. */
  function scheduleRead(): void {
    if (stopped || !leading || readTimer) return;
    const wait = lastReadAt + READ_INTERVAL_MS - Date.now();
    if (wait <= 0) {
      void fill();
      return;
    }
    readTimer = setTimeout(() => {
      readTimer = undefined;
      void fill();
    }, wait);
    readTimer.unref();
  }

  /** Reads the streams while there is room; resolves true when it read anything. Coalesced. */
  function fill(): Promise<boolean> {
    if (stopped || !leading) return Promise.resolve(false);
    if (filling) {
      fillAgain = true;
      return filling;
    }
    filling = (async () => {
      let any = false;
      try {
        do {
          fillAgain = false;
          any = (await fillOnce()) || any;
        } while (fillAgain && !stopped && leading);
      } catch (error) {
        if (!stopped) log.error({ err: error }, 'observability forwarder could not read the event log');
      } finally {
        filling = undefined;
      }
      return any;
    })();
    return filling;
  }

  async function fillOnce(): Promise<boolean> {
    lastReadAt = Date.now();
    const mine = generation;
    let any = false;
    let more = true;
    while (more && leading && mine === generation && !stopped) {
      more = false;
      for (const stream of FORWARDED_STREAMS) {
        const room = settings.queueSize - depth();
        if (room <= 0 || bytesAhead() >= readAheadBytes) return any;
        const after = readCursors.get(stream);
        const page = await eventLog.page(stream, {
          after,
          since: after === undefined ? (startedAt ?? undefined) : undefined,
          limit: Math.min(room, PAGE_LIMIT),
        });
        if (mine !== generation || stopped) return any;
        const readAt = Date.now();
        let full = false;
        for (const entry of page.entries) {
          // Past the byte bound the rest of the page is left in the log (the cursor stays before it).
          const bytes = sizeOf(entry.payload);
          if (bytesAhead() > 0 && bytesAhead() + bytes > readAheadBytes) {
            full = true;
            break;
          }
          queuedBytes += bytes;
          queue.push({
            event: {
              id: entry.id,
              stream,
              event: entry.event,
              timestamp: timestampOf(entry.payload, clock.now()),
              payload: entry.payload,
            },
            cursor: entry.id,
            bytes,
            readAt,
          });
          readCursors.set(stream, entry.id);
          any = true;
        }
        if (full) {
          drain();
          return any;
        }
        if (page.hasMore) more = true;
      }
      drain();
    }
    return any;
  }

  /** Forms batches while a worker is free: full ones at once, partial ones after the batch timeout. */
  function drain() {
    while (!stopped && leading && active < settings.workers && queue.length > 0) {
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
        generation,
        createdAt: new Date(clock.now()),
        done: false,
        released: false,
      };
      pending.push(batch);
      active += 1;
      inFlightEvents += batch.events.length;
      inFlightBytes += batch.bytes;
      forward(batch)
        .catch((error) =>
          log.error({ err: error, batch_id: batch.batchId }, 'observability batch failed to run'),
        )
        .finally(() => {
          active -= 1;
          release(batch);
          // Room in the queue again: read on, at the pace new events are read.
          scheduleRead();
          drain();
          idleSignal.check();
        });
    }
  }

  /**
   * Marks the batch done and returns the cursors it lets move: those of the done batches at the
   * front, in the order they were formed. An earlier batch still in flight holds them back.
   */
  function settle(batch: Batch): Record<string, string> {
    batch.done = true;
    const cursors: Record<string, string> = {};
    while (pending.length > 0 && (pending[0] as Batch).done) {
      const first = pending.shift() as Batch;
      if (first.generation === generation) Object.assign(cursors, first.cursors);
    }
    return cursors;
  }

  /** Stops counting a batch's events as read ahead, once. */
  function release(batch: Batch) {
    if (batch.released) return;
    batch.released = true;
    inFlightEvents -= batch.events.length;
    inFlightBytes -= batch.bytes;
  }

  /**
   * The cursors a batch may write when its commit runs: none once this replica stepped down or its
   * lease lapsed (the lease row may be another holder's, or ours again with cursors that moved on).
   * A skipped move costs at most a resend by the next holder, never a lost event.
   */
  function current(batch: Batch, cursors: Record<string, string>): Record<string, string> {
    return batch.generation === generation && clock.now() < heldUntil ? cursors : {};
  }

  /** Commits serialise, so cursors written later are never older than cursors written earlier. */
  function commit<T>(write: () => Promise<T>): Promise<T> {
    const next = commits.then(write, write);
    commits = next.catch(() => undefined);
    return next;
  }

  async function forward(batch: Batch): Promise<void> {
    let lastError = '';
    let lastStatus: number | null = null;
    for (let attempt = 1; attempt <= settings.maxAttempts; attempt++) {
      const target = collector;
      // A batch given up stays in `pending`, never done: no cursor of this generation can pass
      // its events, so whoever forwards next reads them again.
      if (stopped || batch.generation !== generation || !target?.enabled) return;
      const result = await client.post(batch, target, new Date(clock.now()));
      if (result.error === null) {
        const cursors = batch.generation === generation ? settle(batch) : {};
        release(batch);
        await commit(() =>
          recordDelivered(db, {
            replicaId,
            events: batch.events.length,
            cursors: current(batch, cursors),
            now: new Date(clock.now()),
            queueDepth: depth(),
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
      if (attempt < settings.maxAttempts && !(await sleep(backoffMs(attempt), batch.generation))) return;
    }
    if (batch.generation !== generation || stopped) return;
    const cursors = settle(batch);
    release(batch);
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
        queueDepth: depth(),
      }),
    );
  }

  return {
    client,
    replicaId,
    workers: settings.workers,
    httpTimeoutMs: settings.httpTimeoutMs,
    queueDepth: depth,

    start() {
      if (started || stopped) return;
      started = true;
      unsubscribe = events.subscribe(OBSERVABILITY_TOPIC, () => void tick());
      unhint = events.subscribe(EVENT_LOG_TOPIC, onHint);
      renewTimer = setInterval(() => void tick(), Math.max(1, Math.floor(leaseTtlMs / 3)));
      renewTimer.unref();
      if (settings.snapshotIntervalMs > 0) {
        snapshotTimer = setInterval(() => void tick(), settings.snapshotIntervalMs);
        snapshotTimer.unref();
      }
      void tick();
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      unsubscribe?.();
      unhint?.();
      clearTimeout(readTimer);
      clearInterval(renewTimer);
      clearInterval(snapshotTimer);
      clearTimeout(batchTimer);
      for (const wake of [...sleepers]) wake();
      await ticking;
      await filling;
      queue.splice(0);
      queuedBytes = 0;
      // Posts in flight end within the HTTP timeout; their outcome is recorded before the database closes.
      await idleSignal.wait();
      await commits;
      try {
        await releaseLease(db, replicaId, new Date(clock.now()));
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
      if (started) void tick();
    },

    async runOnce() {
      await tick();
      flushing = true;
      try {
        for (;;) {
          drain();
          await idleSignal.wait();
          await commits;
          if (!(await fill()) && queue.length === 0) return;
        }
      } finally {
        flushing = false;
      }
    },
  };
}
