import { randomUUID } from 'node:crypto';
import { ProblemError } from '@switchyard/shared';
import type { Knex } from 'knex';
import type { Logger } from '../logger.ts';
import { createWorkLoop, type WorkLoop } from '../work-loop.ts';
import type { EventBus } from './event-bus.ts';
import { type Cursor, compareCursors, formatCursor, parseCursor, ZERO_CURSOR } from './event-log-cursor.ts';

export { type Cursor, formatCursor, isCursor, parseCursor } from './event-log-cursor.ts';

/** The bus topic of "a stream has new entries" hints; one topic for every stream. */
export const EVENT_LOG_TOPIC = 'event_log';

/** Rows per query: the tail's wake-up reads and a follower's catch-up reads. */
const BATCH = 256;
/**
 * Payload bytes (as JSON text) per read: a batch or page ends early once this much is read, with
 * at least one entry. Payloads can be large (a memory change carries a value of up to a MiB), and
 * a full batch of those would hold hundreds of MiB in the process at once.
 */
const BATCH_BYTES = 8 * 1024 * 1024;
/** Rows per DELETE of the retention sweep, so pruning never holds one huge transaction. */
const PRUNE_BATCH = 10_000;
/** First and longest delay of a re-read while a committed entry is held back by an older transaction. */
const HELD_BACK_FIRST_MS = 20;
const HELD_BACK_MAX_MS = 1_000;

/** One entry of a stream as followers receive it. */
export interface EventLogEntry {
  /** Opaque, ordered cursor (`<tx>-<id>`): send it back as Last-Event-ID to resume after it. */
  id: string;
  event: string;
  payload: Record<string, unknown>;
}

export interface FollowOptions {
  /**
   * Called between catch-up batches: resolve when the consumer can take more. Lets a follower
   * resuming far back read the log at its reader's pace instead of buffering it all.
   */
  pace?: () => Promise<void>;
  /**
   * Called once, when the follower has caught up and joins the shared tail. Entries delivered
   * before it were read for this follower alone (at its `pace`); entries after it are fanned out
   * as they are written, and a consumer that cannot keep up with those is the one to drop.
   */
  onLive?: () => void;
}

/** What {@link EventLog.page} reads. */
export interface PageOptions {
  /** Start after this entry (an id a reader received), exclusive. */
  after?: string;
  /** Only entries recorded at or after this time (the database's clock, when the entry was written). */
  since?: Date;
  /** The most entries to return: a positive integer. */
  limit: number;
  /** Only entries whose payload has each of these top-level fields equal to the given text. */
  payloadEquals?: Record<string, string>;
  /**
   * Only entries whose payload has each of these top-level fields matching the given SQL LIKE
   * pattern, with `\` as the escape character (so `\%`, `\_` and `\\` are literal).
   */
  payloadLike?: Record<string, string>;
}

/** One page of a stream, oldest first. */
export interface EventLogPage {
  entries: EventLogEntry[];
  /** True when more entries matched after the last one returned. */
  hasMore: boolean;
  /**
   * The id to pass as `after` for the next page (also when `hasMore` is false, to poll later for
   * newer entries): the last entry's id, else the `after` given, else null.
   */
  nextCursor: string | null;
}

export interface EventLog {
  /**
   * Call after a transaction that appended to `stream` committed: wakes readers here at once and
   * on every replica through the event bus. Announces are coalesced: at most one NOTIFY per stream
   * is in flight, and the next goes no sooner than `announceIntervalMs` after it.
   */
  announce(stream: string): void;
  /**
   * Delivers entries of `stream` in log order: those after `after` (a Last-Event-ID; undefined =
   * only entries from now on), then live ones. One shared tail reader per stream per process fans
   * out to all followers. Throws ProblemError('invalid_request') for a malformed cursor. Resolves
   * once the follower is registered (catching up continues in the background); returns unfollow.
   */
  follow(
    stream: string,
    after: string | undefined,
    onEntry: (entry: EventLogEntry) => void,
    options?: FollowOptions,
  ): Promise<() => void>;
  /**
   * One page of `stream` in log order, read under the same rule as followers: only entries whose
   * transaction ended before every transaction still running, ordered by (tx, id), so paging on
   * with `nextCursor` never skips an entry that commits late. Filters run in the database.
   * Throws ProblemError('invalid_request') for a malformed `after`.
   */
  page(stream: string, options: PageOptions): Promise<EventLogPage>;
  /** Deletes entries older than the retention now; resolves with how many went. */
  prune(): Promise<number>;
  /** Starts the periodic retention sweep (safe on every replica at once). */
  start(): void;
  /** Stops the sweep and every tail reader; followers receive nothing more. */
  stop(): Promise<void>;
}

export interface EventLogDeps {
  db: Knex;
  events: EventBus;
  log: Logger;
  /** How long entries are kept (and how far back Last-Event-ID can resume); 24 h by default. */
  retentionMs?: number;
  /**
   * Interval of the tail's unconditional re-read, a backstop for hints the bus lost (NOTIFYs sent
   * while a LISTEN connection reconnects are gone); 2 s by default.
   */
  safetyPollMs?: number;
  /** Interval of the retention sweep; a minute by default. */
  pruneIntervalMs?: number;
  /** Least time between two NOTIFYs for one stream; 10 ms by default. */
  announceIntervalMs?: number;
}

type Db = Knex | Knex.Transaction;

/** Appends one event to a stream inside the caller's transaction (or alone). */
export async function appendEvent(db: Db, stream: string, event: string, payload: object): Promise<void> {
  await appendEvents(db, [{ stream, event, payload }]);
}

/**
 * Rows per INSERT of appendEvents. A statement carries at most 65,535 parameters (three a row),
 * and a presence sweep after an outage may expire a whole fleet in one pass.
 */
const APPEND_CHUNK_ROWS = 1000;

/**
 * Appends many events, a thousand rows per INSERT, in the caller's transaction when given one;
 * their ids follow the order of `rows`.
 */
export async function appendEvents(
  db: Db,
  rows: Array<{ stream: string; event: string; payload: object }>,
): Promise<void> {
  for (let start = 0; start < rows.length; start += APPEND_CHUNK_ROWS) {
    // `tx` is left to its default (pg_current_xact_id()): the writing transaction's own id.
    await db('event_log').insert(
      rows
        .slice(start, start + APPEND_CHUNK_ROWS)
        .map((row) => ({ stream: row.stream, event: row.event, payload: JSON.stringify(row.payload) })),
    );
  }
}

interface Row {
  id: string | null;
  tx: string | null;
  event: string | null;
  payload: Record<string, unknown> | string | null;
  held_back: boolean;
  /** Rows the read found before the byte bound cut it (the same on every row). */
  found: number | null;
}

/**
 * The CTE `s` that every read starts with: `s.bound`, the transaction id below which every
 * transaction that could still append to the log has ended, taken from one snapshot. Entries with
 * `tx < bound` can be passed in (tx, id) order: nothing can later commit below them.
 *
 * Transaction ids (and so the snapshot's xmin) are shared by every database of a server, so a long
 * transaction of another application on the same PostgreSQL server would hold back the whole log
 * if the bound were the snapshot's xmin. When a committed entry of the stream sits at or above the
 * xmin (the only case where the two differ in effect), the bound is instead the oldest transaction
 * of the snapshot's in-progress list that is not running in another database: its owner's database
 * is read from pg_locks (which backend holds the transaction's id) and pg_stat_activity (that
 * backend's database), both readable without privileges. pg_locks is read after the snapshot was
 * taken, so another database's transaction that ended in between no longer shows there and is
 * counted as if it were this database's: the bound can come out lower than an earlier read's, never
 * higher than it should be. So no reader may assume the bound only grows: the tail only waits
 * longer, catch-up reads up to a cursor the tail already passed use no bound at all (readRange),
 * and "from now on" (readHead) also names the committed entries above the bound.
 * Takes one binding: the stream.
 */
const SNAPSHOT_BOUND = `c as materialized (select pg_current_snapshot() as snap),
     s as materialized (
       select case
         when exists (select 1 from event_log h where h.stream = ? and h.tx >= pg_snapshot_xmin(c.snap)) then (
           select coalesce(min(x), pg_snapshot_xmax(c.snap)) from pg_snapshot_xip(c.snap) x
           where not exists (
             select 1 from pg_locks l join pg_stat_activity a on a.pid = l.pid
             where l.locktype = 'transactionid' and l.mode = 'ExclusiveLock' and l.granted
               and l.transactionid = xid(x)
               and a.datid <> (select oid from pg_database where datname = current_database())
           )
         )
         else pg_snapshot_xmin(c.snap)
       end as bound
       from c
     )`;

/**
 * The entries of one read in log order, at most `limit`, ended early by BATCH_BYTES: `before` is
 * the size of the payloads ahead of a row, so the first row always passes. `found` (rows before the
 * cut) tells a reader whether more may follow. `where` holds the read's conditions on `e`.
 */
function boundedRead(where: string, from = 'event_log e, s'): string {
  return `select c.id, c.tx, c.event, c.payload, c.found from (
       select b.*, count(*) over () as found from (
         select e.id::text as id, e.tx::text as tx, e.event, e.payload,
                sum(octet_length(e.payload::text)) over w - octet_length(e.payload::text) as before
         from ${from}
         where ${where}
         window w as (order by e.tx, e.id)
         order by e.tx, e.id
         limit ?
       ) b
     ) c where c.before < ${BATCH_BYTES}`;
}

/** Whether a read may have left entries behind: it hit its row limit, or the byte bound cut it. */
function readWasFull(rows: Array<Pick<Row, 'id' | 'found'>>, limit: number): boolean {
  const returned = rows.filter((row) => row.id !== null).length;
  const found = Number(rows[0]?.found ?? 0);
  return found >= limit || returned < found;
}

/**
 * One statement, so one snapshot: the entries after `after` whose transaction ended before every
 * transaction that could still append (`tx < bound`, see SNAPSHOT_BOUND), in (tx, id) order, plus
 * whether a committed entry of the stream is held back behind a still-running older transaction.
 * Only `tx < bound` is safe to pass: an entry of an older transaction may still commit below
 * anything newer, and a cursor already past it would skip it. The LEFT JOIN keeps the held_back
 * row when there are no entries.
 */
async function readAfter(db: Knex, stream: string, after: Cursor): Promise<Row[]> {
  // Cursor parts travel as text: bigints are beyond what the drivers bind as numbers.
  const bindings = [stream, stream, stream, String(after.tx), String(after.id), BATCH];
  const result = await db.raw(
    `with ${SNAPSHOT_BOUND},
     held as (
       select exists (select 1 from event_log e, s where e.stream = ? and e.tx >= s.bound) as held_back
     )
     select r.id, r.tx, r.event, r.payload, r.found, held.held_back
     from held left join lateral (
       ${boundedRead(`e.stream = ? and e.tx < s.bound and (e.tx, e.id) > (?::text::xid8, ?::bigint)`)}
     ) r on true
     order by r.tx::xid8, r.id::bigint`,
    bindings,
  );
  return result.rows as Row[];
}

/**
 * The entries after `after` up to `until`, a cursor the tail has already passed, in (tx, id) order.
 * The tail passed `until` when every transaction with an id up to its tx had ended, so every entry
 * in the range is final: no bound is needed (and none is applied, see SNAPSHOT_BOUND).
 */
async function readRange(
  db: Knex,
  stream: string,
  after: Cursor,
  until: Cursor,
): Promise<Array<Omit<Row, 'held_back'>>> {
  const result = await db.raw(
    `select r.* from (
       ${boundedRead(
         `e.stream = ? and (e.tx, e.id) > (?::text::xid8, ?::bigint)
          and (e.tx, e.id) <= (?::text::xid8, ?::bigint)`,
         'event_log e',
       )}
     ) r
     order by r.tx::xid8, r.id::bigint`,
    [stream, String(after.tx), String(after.id), String(until.tx), String(until.id), BATCH],
  );
  return result.rows as Array<Omit<Row, 'held_back'>>;
}

/**
 * Most committed entries above the bound that "from now on" names one by one; past this many (a
 * transaction of this database kept open for long while others wrote), a follower without a
 * cursor may also receive the oldest of them, entries that committed before it followed.
 */
const HEAD_SEEN_LIMIT = 10_000;

/** Where "from now on" starts: see {@link readHead}. */
interface Head {
  /** The last entry below the bound: a follower starts after it. */
  cursor: Cursor;
  /** Entries above it that had committed already: a follower starting at `cursor` skips them. */
  seen: Set<string>;
}

/**
 * What every reader can see of a stream now, in one snapshot: the last entry below the bound, and
 * the committed entries above it, held back behind an older transaction still running (or behind
 * one counted as running, see SNAPSHOT_BOUND). Every entry committing later sorts after `cursor`
 * and is not in `seen`, so a follower that starts there and skips `seen` receives exactly them.
 */
async function readHead(db: Knex, stream: string): Promise<Head> {
  const result = await db.raw(
    `with ${SNAPSHOT_BOUND},
     head as (
       select e.id, e.tx from event_log e, s where e.stream = ? and e.tx < s.bound
       order by e.tx desc, e.id desc limit 1
     ),
     seen as (
       select e.id, e.tx from event_log e, s where e.stream = ? and e.tx >= s.bound
       order by e.tx, e.id limit ?
     )
     select true as head, id::text as id, tx::text as tx from head
     union all
     select false, id::text, tx::text from seen`,
    [stream, stream, stream, HEAD_SEEN_LIMIT],
  );
  const rows = result.rows as Array<{ head: boolean; id: string; tx: string }>;
  const head = rows.find((row) => row.head);
  return {
    cursor: head ? { tx: BigInt(head.tx), id: BigInt(head.id) } : ZERO_CURSOR,
    seen: new Set(
      rows.filter((row) => !row.head).map((row) => formatCursor({ tx: BigInt(row.tx), id: BigInt(row.id) })),
    ),
  };
}

function entriesOf(rows: Array<Omit<Row, 'held_back'>>): Array<EventLogEntry & { cursor: Cursor }> {
  const entries: Array<EventLogEntry & { cursor: Cursor }> = [];
  for (const row of rows) {
    if (row.id === null || row.tx === null || row.event === null) continue;
    const cursor = { tx: BigInt(row.tx), id: BigInt(row.id) };
    const payload = typeof row.payload === 'string' ? JSON.parse(row.payload) : (row.payload ?? {});
    entries.push({ id: formatCursor(cursor), event: row.event, payload, cursor });
  }
  return entries;
}

/**
 * The SQL of one page: readAfter's visibility rule (`tx < bound`, one snapshot) and order, plus the
 * optional time and payload filters. Payload field names travel as bindings like the values, so no
 * caller-supplied text is ever spliced into the statement.
 */
async function readPage(
  db: Knex,
  stream: string,
  after: Cursor,
  options: PageOptions,
): Promise<Array<Omit<Row, 'held_back'>>> {
  const conditions: string[] = [];
  const bindings: Array<string | number> = [stream, stream, String(after.tx), String(after.id)];
  if (options.since) {
    conditions.push('and e.created_at >= ?::timestamptz');
    bindings.push(options.since.toISOString());
  }
  for (const [field, value] of Object.entries(options.payloadEquals ?? {})) {
    conditions.push('and e.payload ->> ? = ?');
    bindings.push(field, value);
  }
  for (const [field, pattern] of Object.entries(options.payloadLike ?? {})) {
    // The escape character (LIKE's default) is named, and bound rather than written as a literal,
    // so the callers' contract holds whatever standard_conforming_strings says.
    conditions.push('and e.payload ->> ? like ? escape ?');
    bindings.push(field, pattern, '\\');
  }
  // One more than asked for tells whether another page follows, without a count.
  bindings.push(options.limit + 1);
  const result = await db.raw(
    `with ${SNAPSHOT_BOUND}
     select r.* from (
       ${boundedRead(`e.stream = ? and e.tx < s.bound and (e.tx, e.id) > (?::text::xid8, ?::bigint)
       ${conditions.join('\n       ')}`)}
     ) r
     order by r.tx::xid8, r.id::bigint`,
    bindings,
  );
  return result.rows as Array<Omit<Row, 'held_back'>>;
}

/** A malformed cursor as the 400 problem a client can act on; `field` names where it came from. */
function badCursor(text: string, field: string): ProblemError {
  return new ProblemError(
    'invalid_request',
    `"${text.slice(0, 100)}" is not an event id of this stream; send back an id: the server sent.`,
    { extensions: { errors: [{ field, message: 'not an event id' }] } },
  );
}

interface Follower {
  /** The last entry this follower received (or skipped as already seen). */
  cursor: Cursor;
  /** Entries after `cursor` it skips: those that had committed when it followed without a cursor. */
  seen?: Set<string>;
  onEntry: (entry: EventLogEntry) => void;
  closed: boolean;
}

interface Tail {
  stream: string;
  /** Resolves with the head the tail started from, once its reads have started. */
  ready: Promise<Head>;
  /** The last entry the tail has read and fanned out. */
  head: Cursor;
  /** Live followers: those the tail fans out to. */
  followers: Set<Follower>;
  /** Followers live or still catching up; the tail closes when the last one leaves. */
  members: number;
  /** Its reads: woken by announces and hints, the safety poll, and re-reads of held-back entries. */
  loop: WorkLoop;
  /** The last read found a committed entry held back behind an older, still-running transaction. */
  heldBack: boolean;
  heldBackDelay: number;
  stopped: boolean;
}

/**
 * The durable event log (table `event_log`): writers append rows in their own transactions and
 * announce after commit; each process keeps one tail reader per followed stream that wakes on
 * the announce (local, or a NOTIFY from another replica), reads what became visible in batches
 * and fans it out. Entries survive restarts and are the same on every replica, so a cursor from
 * one replica resumes on any other.
 */
export function createEventLog(deps: EventLogDeps): EventLog {
  const { db, events, log } = deps;
  const retentionMs = deps.retentionMs ?? 24 * 60 * 60 * 1000;
  const safetyPollMs = deps.safetyPollMs ?? 2_000;
  const pruneIntervalMs = deps.pruneIntervalMs ?? 60_000;
  const announceIntervalMs = deps.announceIntervalMs ?? 10;
  // Lets this process ignore its own NOTIFYs: its tails were already woken directly.
  const origin = randomUUID();
  const tails = new Map<string, Tail>();
  const announcing = new Map<string, { pending: boolean; timer?: NodeJS.Timeout; publishing?: boolean }>();
  let unsubscribe: (() => void) | undefined;
  let pruneTimer: NodeJS.Timeout | undefined;
  let pruning: Promise<number> | undefined;
  let stopped = false;

  function deliverTo(follower: Follower, entry: EventLogEntry & { cursor: Cursor }): void {
    if (follower.closed || compareCursors(entry.cursor, follower.cursor) <= 0) return;
    follower.cursor = entry.cursor;
    if (follower.seen?.delete(entry.id)) {
      if (follower.seen.size === 0) follower.seen = undefined;
      return;
    }
    try {
      follower.onEntry({ id: entry.id, event: entry.event, payload: entry.payload });
    } catch (error) {
      log.error({ err: error }, 'event log follower failed');
    }
  }

  function onHint(event: Record<string, unknown>): void {
    if (event.origin === origin || typeof event.stream !== 'string') return;
    tails.get(event.stream)?.loop.wake();
  }

  /** Reads everything visible after the head, in batches, fanning each batch out at once. */
  async function read(tail: Tail): Promise<void> {
    tail.heldBack = false;
    let full: boolean;
    do {
      const rows = await readAfter(db, tail.stream, tail.head);
      if (tail.stopped) return;
      tail.heldBack = rows[0]?.held_back ?? false;
      const entries = entriesOf(rows);
      full = readWasFull(rows, BATCH);
      // Head and fan-out change together, in one synchronous step: a follower that joins
      // between two reads is exactly at the head and misses nothing.
      for (const entry of entries) {
        tail.head = entry.cursor;
        for (const follower of tail.followers) deliverTo(follower, entry);
      }
    } while (full);
  }

  /**
   * A committed entry held back by an older transaction becomes readable when that transaction
   * ends, which nobody announces when it wrote no events: re-read soon, backing off while it
   * stays held back, and not at all when nothing is.
   */
  function scheduleHeldBack(tail: Tail): void {
    if (!tail.heldBack) {
      tail.heldBackDelay = HELD_BACK_FIRST_MS;
      return;
    }
    // A re-read already timed no later keeps its delay; the delay doubles with each one timed.
    if (tail.loop.wakeAt(Date.now() + tail.heldBackDelay)) {
      tail.heldBackDelay = Math.min(tail.heldBackDelay * 2, HELD_BACK_MAX_MS);
    }
  }

  function openTail(stream: string): Tail {
    const loop = createWorkLoop({
      pass: () => read(tail),
      afterPasses: () => scheduleHeldBack(tail),
      onError: (error) => {
        log.error({ err: error, stream }, 'event log read failed; the safety poll retries');
        scheduleHeldBack(tail);
      },
      pollMs: safetyPollMs,
    });
    const tail: Tail = {
      stream,
      head: ZERO_CURSOR,
      followers: new Set(),
      members: 0,
      loop,
      heldBack: false,
      heldBackDelay: HELD_BACK_FIRST_MS,
      stopped: false,
      ready: Promise.resolve({ cursor: ZERO_CURSOR, seen: new Set() }),
    };
    unsubscribe ??= events.subscribe(EVENT_LOG_TOPIC, onHint);
    // Reads start from the head: the first one at once (it finds what was announced meanwhile).
    tail.ready = readHead(db, stream).then((head) => {
      tail.head = head.cursor;
      loop.start();
      return head;
    });
    tails.set(stream, tail);
    tail.ready.catch(() => closeTail(tail));
    return tail;
  }

  function closeTail(tail: Tail): void {
    tail.stopped = true;
    void tail.loop.stop();
    if (tails.get(tail.stream) === tail) tails.delete(tail.stream);
    if (tails.size === 0 && unsubscribe) {
      unsubscribe();
      unsubscribe = undefined;
    }
  }

  /**
   * Brings a follower that resumes behind the head up to it with its own reads (bounded by the
   * head, which every entry up to is final), then hands it to the tail. The check and the join
   * happen in one synchronous step, so no entry falls between the catch-up and the tail.
   */
  async function catchUp(tail: Tail, follower: Follower, options: FollowOptions): Promise<void> {
    const { pace, onLive } = options;
    while (!follower.closed && !tail.stopped) {
      if (compareCursors(follower.cursor, tail.head) >= 0) {
        tail.followers.add(follower);
        try {
          onLive?.();
        } catch (error) {
          log.error({ err: error }, 'event log follower failed');
        }
        return;
      }
      const target = tail.head;
      let entries: Array<EventLogEntry & { cursor: Cursor }>;
      let full: boolean;
      try {
        const rows = await readRange(db, tail.stream, follower.cursor, target);
        entries = entriesOf(rows);
        full = readWasFull(rows, BATCH);
      } catch (error) {
        log.error({ err: error, stream: tail.stream }, 'event log catch-up read failed; retrying');
        await new Promise((done) => setTimeout(done, safetyPollMs).unref());
        continue;
      }
      for (const entry of entries) deliverTo(follower, entry);
      // Not full: nothing is left up to the target (older entries may have been pruned).
      if (!full && compareCursors(follower.cursor, target) < 0) follower.cursor = target;
      if (pace && full) await pace();
    }
  }

  /**
   * Where a follower resuming after `cursor` starts: right after it, unless it lies beyond the last
   * entry of the stream (an id kept by a client across a database reset or restore). Entries
   * written from now on would sort before such a cursor and never reach the follower, and none
   * can have been missed after it, so it starts with the next entry, like a follower without one.
   * Only a cursor ahead of the tail is looked up: a tail may lag behind an id another replica sent.
   */
  async function resumable(tail: Tail, cursor: Cursor): Promise<Head> {
    if (compareCursors(cursor, tail.head) <= 0) return { cursor, seen: new Set() };
    const head = await readHead(db, tail.stream);
    return compareCursors(cursor, head.cursor) > 0 ? head : { cursor, seen: new Set() };
  }

  function announceNow(stream: string): void {
    const state = announcing.get(stream) ?? { pending: false };
    announcing.set(stream, state);
    if (state.timer || state.publishing) {
      state.pending = true;
      return;
    }
    state.pending = false;
    // The next announce waits for both the interval and this publish: announces meanwhile become
    // one, and on a slow database NOTIFYs never pile up behind each other.
    const next = () => {
      if (state.timer || state.publishing) return;
      if (state.pending && !stopped) announceNow(stream);
      else if (announcing.get(stream) === state) announcing.delete(stream);
    };
    state.timer = setTimeout(() => {
      state.timer = undefined;
      next();
    }, announceIntervalMs);
    state.timer.unref();
    state.publishing = true;
    events
      .publish(EVENT_LOG_TOPIC, { stream, origin })
      .catch((error) => {
        // The tails of other replicas still find the entries with their safety poll.
        log.warn({ err: error, stream }, 'event log announce failed');
      })
      .finally(() => {
        state.publishing = false;
        next();
      });
  }

  return {
    announce(stream) {
      if (stopped) return;
      tails.get(stream)?.loop.wake();
      announceNow(stream);
    },

    async follow(stream, after, onEntry, options = {}) {
      let cursor: Cursor | undefined;
      if (after !== undefined) {
        cursor = parseCursor(after);
        if (!cursor) throw badCursor(after, 'Last-Event-ID');
      }
      if (stopped) throw new Error('event log is stopped');
      const opened = tails.get(stream);
      const tail = opened ?? openTail(stream);
      tail.members += 1;
      const leave = () => {
        tail.members -= 1;
        if (tail.members === 0 && !tail.stopped) closeTail(tail);
      };
      let start: Head;
      try {
        const head = await tail.ready;
        // Without a cursor: after everything committed by now, read in one snapshot (the tail's
        // own head when this follower opened it). The tail's position would not do: an entry that
        // committed before this call may lie beyond it (not announced yet, or held back behind an
        // older transaction), and the follower would receive it.
        if (cursor) start = await resumable(tail, cursor);
        else start = opened ? await readHead(db, stream) : head;
      } catch (error) {
        leave();
        throw error;
      }
      const follower: Follower = {
        cursor: start.cursor,
        seen: start.seen.size > 0 ? start.seen : undefined,
        onEntry,
        closed: false,
      };
      void catchUp(tail, follower, options);
      return () => {
        if (follower.closed) return;
        follower.closed = true;
        tail.followers.delete(follower);
        leave();
      };
    },

    async page(stream, options) {
      if (!Number.isSafeInteger(options.limit) || options.limit < 1) {
        throw new RangeError(`page limit must be a positive integer, not ${options.limit}`);
      }
      let after = ZERO_CURSOR;
      if (options.after !== undefined) {
        const cursor = parseCursor(options.after);
        if (!cursor) throw badCursor(options.after, 'after');
        after = cursor;
      }
      const rows = await readPage(db, stream, after, options);
      const entries = entriesOf(rows);
      const page = entries.slice(0, options.limit).map(({ cursor: _cursor, ...entry }) => entry);
      return {
        entries: page,
        // One more than asked was read: it, or a cut by the byte bound, says more follow.
        hasMore: entries.length > options.limit || readWasFull(rows, options.limit + 1),
        nextCursor: page.at(-1)?.id ?? options.after ?? null,
      };
    },

    prune() {
      pruning ??= (async () => {
        let total = 0;
        try {
          for (;;) {
            // Raw, for the row count: knex's delete() answers differently on the PGlite driver.
            const result = await db.raw(
              `delete from event_log where id in (
                 select id from event_log where created_at < now() - ?::interval limit ?
               )`,
              [`${retentionMs} milliseconds`, PRUNE_BATCH],
            );
            const deleted = Number(result.rowCount ?? 0);
            total += deleted;
            if (deleted < PRUNE_BATCH) return total;
          }
        } finally {
          pruning = undefined;
        }
      })();
      return pruning;
    },

    start() {
      if (pruneTimer || stopped) return;
      const sweep = () =>
        this.prune().catch((error) => log.error({ err: error }, 'event log retention sweep failed'));
      void sweep();
      pruneTimer = setInterval(sweep, pruneIntervalMs);
      pruneTimer.unref();
    },

    async stop() {
      stopped = true;
      clearInterval(pruneTimer);
      pruneTimer = undefined;
      for (const state of announcing.values()) clearTimeout(state.timer);
      announcing.clear();
      for (const tail of [...tails.values()]) closeTail(tail);
      await pruning?.catch(() => {});
    },
  };
}
