import { toIso } from '@switchyard/shared';
import type { Clock } from '../../platform/clock.ts';
import type { EventLog } from '../../platform/events/event-log.ts';
import type { Logger } from '../../platform/logger.ts';
import { createWorkLoop } from '../../platform/work-loop.ts';
import { EXECUTIONS_STREAM } from '../executions/index.ts';
import { MEMORY_STREAM } from '../memory/index.ts';
import type { Batcher } from './batcher.ts';
import type { LeaseView } from './forwarding-lease.ts';
import type { ObservabilitySettings } from './settings.ts';

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

export interface EventReaderDeps {
  clock: Clock;
  log: Logger;
  eventLog: EventLog;
  settings: Pick<ObservabilitySettings, 'queueSize'>;
  /** Payload bytes read ahead at most, queued and in flight together. */
  readAheadBytes: number;
  lease: LeaseView;
  batcher: Pick<Batcher, 'add' | 'drain' | 'depth' | 'bytesAhead'>;
  stopped: () => boolean;
}

export const sizeOf = (payload: unknown) => Buffer.byteLength(JSON.stringify(payload) ?? '');

function timestampOf(payload: Record<string, unknown>, fallback: number): string {
  const value = payload.timestamp;
  if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return value;
  return toIso(fallback);
}

/**
 * Reads the forwarded streams after this replica's cursors into the batcher, while fewer than
 * `queue_size` events and `readAheadBytes` bytes are read ahead. It reads when the forwarder
 * starts leading, and again when new entries are hinted or a batch ends, at most every
 * READ_INTERVAL_MS.
 */
export function createEventReader(deps: EventReaderDeps) {
  const { clock, log, eventLog, settings, readAheadBytes, lease, batcher, stopped } = deps;
  const cursors = new Map<string, string>();
  let lastReadAt = Number.NEGATIVE_INFINITY;
  /** Entries read so far, so a caller can tell whether a read found anything. */
  let entriesRead = 0;

  const loop = createWorkLoop({
    pass: async () => {
      if (!stopped() && lease.leading) await readOnce();
    },
    onError: (error) => log.error({ err: error }, 'observability forwarder could not read the event log'),
  });

  /** Reads pages of every stream while there is room and a stream has more. */
  async function readOnce(): Promise<void> {
    lastReadAt = Date.now();
    const mine = lease.generation;
    let more = true;
    while (more && lease.leading && mine === lease.generation && !stopped()) {
      more = false;
      for (const stream of FORWARDED_STREAMS) {
        const room = settings.queueSize - batcher.depth();
        if (room <= 0 || batcher.bytesAhead() >= readAheadBytes) return;
        const after = cursors.get(stream);
        const page = await eventLog.page(stream, {
          after,
          since: after === undefined ? (lease.startedAt ?? undefined) : undefined,
          limit: Math.min(room, PAGE_LIMIT),
        });
        if (mine !== lease.generation || stopped()) return;
        const readAt = Date.now();
        let full = false;
        for (const entry of page.entries) {
          // Past the byte bound the rest of the page is left in the log (the cursor stays before it).
          const bytes = sizeOf(entry.payload);
          const ahead = batcher.bytesAhead();
          if (ahead > 0 && ahead + bytes > readAheadBytes) {
            full = true;
            break;
          }
          batcher.add({
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
          cursors.set(stream, entry.id);
          entriesRead += 1;
        }
        if (full) {
          batcher.drain();
          return;
        }
        if (page.hasMore) more = true;
      }
      batcher.drain();
    }
  }

  /** A read as soon as READ_INTERVAL_MS has passed since the last one began. */
  function readSoon(): void {
    if (stopped() || !lease.leading) return;
    loop.wakeAt(lastReadAt + READ_INTERVAL_MS);
  }

  return {
    /** Reads now (or once more after the read running); resolves true when it read anything. */
    async read(): Promise<boolean> {
      if (stopped() || !lease.leading) return false;
      const before = entriesRead;
      await loop.run();
      return entriesRead > before;
    },
    readSoon,
    /**
     * The event log's hint on the bus: new entries in a stream, from this replica or another. The
     * hint carries no entries, so no tail reader runs for the forwarder; the reads are its own pages.
     */
    onHint(hint: Record<string, unknown>): void {
      if ((FORWARDED_STREAMS as readonly unknown[]).includes(hint.stream)) readSoon();
    },
    /** Reads on from these cursors (this replica starts leading). */
    startFrom(stored: Record<string, string>): void {
      cursors.clear();
      for (const [stream, cursor] of Object.entries(stored)) cursors.set(stream, cursor);
    },
    /** Forgets the cursors read to (this replica stepped down). */
    forget(): void {
      cursors.clear();
    },
    start: () => loop.start(),
    stop: () => loop.stop(),
  };
}

export type EventReader = ReturnType<typeof createEventReader>;
