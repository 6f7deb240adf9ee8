import type { Database } from '@switchyard/shared/db';
import type { Logger } from './logger.ts';
import {
  FixedWindows,
  type RateLimiter,
  type RateLimitOptions,
  type RateLimitState,
} from './rate-limiter.ts';

/** The table of the windows (migration 20261124000000_create_docs_rate_windows). */
const TABLE = 'docs_rate_windows';

/**
 * One statement per batch of counted requests (see `flush`): the requests of each client in the
 * batch ($1: clients, $4: how many requests each) are added to its row of the budget ($5). A client without a row
 * gets a window opened now; a row whose window ended (started at or before the cutoff $3) starts
 * over the same way; any other row adds them to its count. PostgreSQL runs
 * `insert … on conflict do update` under each row's lock, so what replicas send for one client
 * is added up one statement after the other, and the count a statement returns, less its own
 * requests, is the place its first request took: no two requests, on any replica, get the same
 * place, so no two are both granted the last request of a window. Rows are locked in client
 * order, the same in every statement, so two replicas' batches cannot deadlock. Both SET
 * expressions read the old row. The count is not capped at the limit (refused requests count
 * too, so their place is known); the bound only keeps a flood within the column's range.
 */
const COUNT: Statement = {
  name: 'docs_rate_windows_count',
  text: `insert into ${TABLE} as w (budget, client, window_start, count)
select $5, client, $2, n from unnest($1::text[], $4::int[]) as batch(client, n) order by client
on conflict (budget, client) do update set
  window_start = case when w.window_start <= $3 then excluded.window_start else w.window_start end,
  count = case when w.window_start <= $3 then excluded.count else least(w.count + excluded.count, 2000000000) end
returning client, window_start, count`,
};

const PEEK: Statement = {
  name: 'docs_rate_windows_peek',
  text: `select window_start, count from ${TABLE} where client = $1 and budget = $2`,
};

/**
 * Deletes up to `limit` ended windows of one budget ($3; the other's windows may be longer). The cutoff is checked again on the row being deleted (not
 * only in the subquery), so a window a request re-opened meanwhile is kept. The rows are locked
 * first, skipping those a count holds: a sweep that waited on them would lock its rows in
 * window-start order while a count locks its own in client order, and a batch that re-opens two
 * ended windows could deadlock with it (the count then timed out and was counted in memory).
 */
const SWEEP: Statement = {
  name: 'docs_rate_windows_sweep',
  text: `delete from ${TABLE} where budget = $3 and window_start <= $1 and client in
  (select client from ${TABLE} where budget = $3 and window_start <= $1 limit $2 for update skip locked)`,
};

/** Places of a client's budget this replica took in the database ahead of its requests. */
interface Reservation {
  /** The window the places belong to (the row's window_start). */
  startedAt: number;
  /** The places left, lowest first; each is granted as that place in the window. */
  places: number[];
  /** Ask for more once this few are left. */
  refillBelow: number;
}

interface WindowRow {
  window_start: Date;
  count: number;
}

interface CountedRow extends WindowRow {
  client: string;
}

/** A statement with positional parameters ($1 …) and the name it is prepared under. */
interface Statement {
  name: string;
  text: string;
}

/** What `pg` answers a query with (the part read here). */
interface QueryResult<Row> {
  rows: Row[];
  rowCount: number | null;
}

/** The pooled `pg` client knex hands out, and the knex client methods used on it. */
interface PgConnection {
  query<Row>(query: { name: string; text: string; values: unknown[] }): Promise<QueryResult<Row>>;
}
interface KnexClientWithConnections {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): unknown;
  cancelQuery(connection: PgConnection): Promise<unknown>;
}

/** Thrown when the database does not answer within the wait a request is given. */
class StoreTimeoutError extends Error {
  constructor(ms: number) {
    super(`the rate limit store did not answer within ${ms} ms`);
  }
}

/**
 * Runs a statement as a named prepared statement on a connection of knex's pool. Not `db.raw`:
 * knex builds and rewrites the SQL on every call and cannot prepare it, and at one statement per
 * request that doubled the limiter's cost (bench/docs-api: about 70 against 40 µs of the docs
 * process's CPU per statement, and PostgreSQL parses and plans the upsert each time). The
 * connection comes from the same pool, so the pool's limit still holds. Past `timeoutMs` the
 * caller gets a StoreTimeoutError; a statement under way is then cancelled (pg_cancel_backend,
 * while its connection is still ours) so a lock that keeps it waiting does not hold the
 * connection, and a connection that arrives late is handed back unused. The connection goes back
 * to the pool only once the cancel has been delivered: pg_cancel_backend stops whatever the
 * backend runs when it arrives, and knex opens a connection of its own to send it, so a statement
 * that ended meanwhile would otherwise leave the cancel to hit the next user of the connection
 * (another batch, or a share being stored).
 */
async function runStatement<Row>(
  db: Database,
  statement: Statement,
  values: unknown[],
  timeoutMs: number,
  /** Ends the wait early, the statement cancelled as on a timeout (the limiter is closing). */
  stop?: AbortSignal,
): Promise<QueryResult<Row>> {
  const client = db.client as unknown as KnexClientWithConnections;
  let timedOut = false;
  let running: PgConnection | undefined;
  let cancelling: Promise<unknown> | undefined;
  const work = (async () => {
    const connection = await client.acquireConnection();
    try {
      if (timedOut) throw new StoreTimeoutError(timeoutMs);
      running = connection;
      return await connection.query<Row>({ ...statement, values });
    } finally {
      running = undefined;
      if (cancelling) await cancelling;
      client.releaseConnection(connection);
    }
  })();
  let timer: NodeJS.Timeout | undefined;
  let giveUp: (() => void) | undefined;
  const deadline = new Promise<never>((_, reject) => {
    giveUp = () => {
      timedOut = true;
      if (running) cancelling = client.cancelQuery(running).catch(() => {});
      reject(new StoreTimeoutError(timeoutMs));
    };
    timer = setTimeout(giveUp, timeoutMs);
  });
  if (stop?.aborted) giveUp!();
  else stop?.addEventListener('abort', giveUp!, { once: true });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
    stop?.removeEventListener('abort', giveUp!);
    // Whatever the late outcome of the statement, it has been accounted for by the race.
    work.catch(() => {});
  }
}

export interface SharedRateLimitOptions extends RateLimitOptions {
  /** PostgreSQL, migrated with docsMigrations. */
  db: Database;
  logger: Logger;
  /** Longest wait on the database per request before the in-memory window answers (default 500 ms). */
  timeoutMs?: number;
  /**
   * Places in a client's budget this replica may reserve ahead of its requests (see
   * createSharedRateLimiter); default a tenth of the limit. 0 counts every request in the database
   * before it is answered.
   */
  reserveAhead?: number;
  /** Rows deleted per sweep statement (default 500), and statements per sweep (default 20). */
  sweepBatch?: number;
  sweepBatches?: number;
}

/**
 * A request budget shared by every docs replica on one PostgreSQL database: one row per budget and
 * client address (window start, count) in `docs_rate_windows`, counted by one atomic upsert per batch of
 * requests: the requests that arrive while the previous statement makes its round trip.
 *
 * Why not rate-limiter-flexible's RateLimiterPostgres, which does a similar upsert: it creates its
 * table itself at run time (outside the docs migrations), reads `Date.now()` with no way to give it
 * another clock (the tests move the clock instead of sleeping), and deletes expired rows in one
 * unbounded statement on its own timer; it also makes one round trip per request, which batching
 * here avoids. What remains to write is one statement, the batching, the sweep and the fallback.
 *
 * Clock: the app's (`now`), passed into the statement, not the database's `now()`. Replicas keep
 * their clocks in step (NTP: milliseconds apart), and a difference only moves the edge of a window
 * by that much: the count itself is one row under one lock, so it never grants more than the limit
 * within a window whoever's clock opened it. A replica behind the one that opened the window just
 * sees it as still open, and reports a reset no longer than the window (FixedWindows.state). With
 * the app clock the tests drive the exact code production runs, and both limiters tell time alike.
 *
 * Reserving ahead: a client with several requests in one batch on this replica (a busy client:
 * an agent, a crawler, a page loading) is counted ahead by up to `reserveAhead` places (a tenth
 * of the limit by default): the statement adds them to its row with the batch, this replica
 * keeps them, and the client's next requests here take them at once, without waiting on the
 * database; once half of them are used, the next batch tops them back up in the background, and
 * requests that queued while a statement reserved places take those places. This replica never
 * holds more than `reserveAhead` places of a client. A place is still taken in the database
 * before it is granted, so the budget is never exceeded and no two requests, on any replica, get
 * the same place: the count is exact from above. What it costs
 * is at the other end: places a replica reserved and the client did not use there (it stopped,
 * or went on at another replica) are spent all the same, so a client spreading its requests over
 * replicas can be refused up to `reserveAhead` requests per replica before its limit. A client
 * with one request at a time is counted one request per statement, as before. Reserved places
 * lapse with their window.
 *
 * When the database fails or takes longer than `timeoutMs`, the requests are counted in this
 * process instead, on from the count it last read for each client, and the site stays up: for the
 * outage each replica grants what it saw left of the budget, by itself. The first failure is
 * logged as a warning, the recovery as an info line with how many requests were counted in memory
 * meanwhile; during an outage the database is tried again at most once a second, so a down
 * database does not cost every request a failed attempt.
 */
export function createSharedRateLimiter(options: SharedRateLimitOptions): RateLimiter {
  const { db, logger, budget, limit, windowSeconds } = options;
  const now = options.now ?? Date.now;
  const windowMs = windowSeconds * 1000;
  const timeoutMs = options.timeoutMs ?? 500;
  const sweepBatch = options.sweepBatch ?? 500;
  const sweepBatches = options.sweepBatches ?? 20;
  const reserveAhead = Math.max(0, Math.floor(options.reserveAhead ?? limit / 10));
  // The rows as this process last read them. During an outage requests are counted on in here,
  // so a client that had spent its budget (as far as this replica saw) stays refused.
  const seen = new FixedWindows(budget, limit, windowSeconds);

  let outage: { since: number; retryAt: number; countedInMemory: number } | undefined;
  let lastSweep = now();
  let sweeping: Promise<void> | undefined;
  let closed = false;
  // Cancels a sweep's statement when the limiter closes: a shutdown must not wait for it.
  const closing = new AbortController();

  /** Whether to ask the database now: always, except during an outage until the next retry. */
  function tryDatabase(at: number): boolean {
    return !outage || at >= outage.retryAt;
  }

  function failed(error: unknown, at: number, operation: string): void {
    if (!outage) {
      logger.warn(
        { err: error, operation, budget },
        'rate limit store unavailable: counting requests in this process until the database answers again (each replica counts on its own meanwhile)',
      );
      outage = { since: at, retryAt: at + 1000, countedInMemory: 0 };
    } else {
      outage.retryAt = at + 1000;
    }
  }

  function recovered(at: number): void {
    if (!outage) return;
    logger.info(
      { countedInMemory: outage.countedInMemory, outageMs: at - outage.since, budget },
      'rate limit store answers again: the budget is shared across replicas again',
    );
    outage = undefined;
  }

  function fromRow(client: string, row: WindowRow, at: number) {
    const startedAt = row.window_start.getTime();
    seen.record(client, startedAt, row.count, at);
    return seen.state(startedAt, row.count, at);
  }

  /** Deletes ended windows in short batches, at most once per window length, in the background. */
  function maybeSweep(at: number): void {
    if (closed || sweeping || at - lastSweep < windowMs) return;
    lastSweep = at;
    const cutoff = new Date(at - windowMs);
    sweeping = (async () => {
      for (let batch = 0; batch < sweepBatches && !closed; batch++) {
        // The wait of a request does not apply: nobody waits on a sweep, but a shutdown, which
        // cancels it instead (the ended windows are deleted by the next sweep, on any replica).
        const deleted = await runStatement(db, SWEEP, [cutoff, sweepBatch, budget], 30_000, closing.signal);
        if ((deleted.rowCount ?? 0) < sweepBatch) break;
      }
    })()
      .catch((error: unknown) => {
        // Cancelled by close(): nothing failed.
        if (!closed) logger.warn({ err: error, budget }, 'rate limit store: deleting ended windows failed');
      })
      .finally(() => {
        sweeping = undefined;
      });
  }

  // Requests waiting to be counted, by client, in arrival order; sent as one statement once the
  // one under way (if any) has answered. While a statement makes its round trip the next batch
  // gathers: one round trip per batch instead of per request is most of the shared count's cost
  // on a busy replica (bench/docs-api/rate-limit.mjs), and a lone request still waits for just
  // one round trip.
  let pending = new Map<string, Array<(state: RateLimitState) => void>>();
  let scheduled = false;
  let inFlight = false;
  // Places taken in the database ahead of the client's requests (see reserving ahead, above), by
  // client: the window they belong to and the places left, in order. `refill` names the clients
  // whose reservation ran half down, to be topped up by the next statement.
  const reserved = new Map<string, Reservation>();
  let refill = new Set<string>();

  /** A reserved place of the client, taken now, or undefined when it has none left in an open window. */
  function takeReserved(client: string, at: number): RateLimitState | undefined {
    const reservation = reserved.get(client);
    if (!reservation) return undefined;
    if (at - reservation.startedAt >= windowMs || reservation.places.length === 0) {
      reserved.delete(client);
      return undefined;
    }
    const place = reservation.places.shift()!;
    if (reservation.places.length <= reservation.refillBelow && !closed) {
      refill.add(client);
      schedule();
    }
    return seen.state(reservation.startedAt, place, at);
  }

  /** How many places of an open window this replica holds for the client. */
  function held(client: string, at: number): number {
    const reservation = reserved.get(client);
    return reservation && at - reservation.startedAt < windowMs ? reservation.places.length : 0;
  }

  /** Keeps the places `from`…`to` of a window for the client's next requests (those within the limit). */
  function keep(client: string, startedAt: number, from: number, to: number): void {
    let reservation = reserved.get(client);
    if (!reservation || reservation.startedAt !== startedAt) {
      reservation = { startedAt, places: [], refillBelow: Math.floor(reserveAhead / 2) };
      reserved.set(client, reservation);
    }
    for (let place = from; place <= Math.min(to, limit); place++) reservation.places.push(place);
    if (reservation.places.length === 0) reserved.delete(client);
  }

  function schedule(): void {
    if (scheduled || inFlight || closed) return;
    scheduled = true;
    // After the I/O phase, so the requests read from sockets in this turn join one batch.
    setImmediate(() => {
      scheduled = false;
      void flush();
    });
  }

  async function flush(): Promise<void> {
    // One statement at a time: a flush scheduled meanwhile leaves its requests to the next batch.
    if (inFlight) return;
    const at = now();
    // Requests that queued while the statement before reserved places for their client take
    // those places: counting them in another statement would also reserve more than reserveAhead.
    for (const [client, waiters] of pending) {
      while (waiters.length > 0) {
        const state = takeReserved(client, at);
        if (!state) break;
        waiters.shift()!(state);
      }
      if (waiters.length === 0) pending.delete(client);
    }
    if (pending.size === 0 && refill.size === 0) return;
    const batch = pending;
    const topUp = refill;
    pending = new Map();
    refill = new Set();
    inFlight = true;
    const cutoff = new Date(at - windowMs);
    // Each client's requests in the batch, plus the places reserved ahead for it: a client with
    // several requests at once, or whose reservation ran half down, is busy here.
    const counts = new Map<string, number>();
    for (const [client, waiters] of batch) counts.set(client, waiters.length);
    for (const client of topUp) counts.set(client, counts.get(client) ?? 0);
    const ahead = new Map<string, number>();
    for (const [client, waiting] of counts) {
      const busy = waiting > 1 || topUp.has(client);
      // Up to reserveAhead places held in all: a top-up only replaces those used. A client this
      // replica saw spend its budget gets no places ahead: they would all be refusals.
      const places = busy && seen.peek(client, at).remaining > 0 ? reserveAhead - held(client, at) : 0;
      if (places > 0) ahead.set(client, places);
      counts.set(client, waiting + places);
    }
    for (const [client, n] of counts) if (n === 0) counts.delete(client);
    const clients = [...counts.keys()];
    // Requests queued behind a statement that just failed go straight to the process's count.
    if (tryDatabase(at)) {
      try {
        const result = await runStatement<CountedRow>(
          db,
          COUNT,
          [clients, new Date(at), cutoff, clients.map((client) => counts.get(client)!), budget],
          timeoutMs,
        );
        recovered(at);
        for (const row of result.rows) {
          const waiters = batch.get(row.client) ?? [];
          const startedAt = row.window_start.getTime();
          seen.record(row.client, startedAt, row.count, at);
          // The statement's places are count - n + 1 … count: the waiting requests take the
          // first, in arrival order; the rest are kept for the client's next requests here.
          const first = row.count - counts.get(row.client)!;
          for (const [i, resolve] of waiters.entries()) resolve(seen.state(startedAt, first + i + 1, at));
          const places = ahead.get(row.client) ?? 0;
          if (places > 0) keep(row.client, startedAt, row.count - places + 1, row.count);
          batch.delete(row.client);
        }
        maybeSweep(at);
      } catch (error) {
        failed(error, at, 'count');
      }
    }
    inFlight = false;
    // What the statement did not answer for (it failed) is counted in the process.
    for (const [client, waiters] of batch) {
      for (const resolve of waiters) {
        if (outage) outage.countedInMemory += 1;
        resolve(seen.take(client, at));
      }
    }
    if (pending.size > 0 || refill.size > 0) schedule();
    dropLapsedReservations(at);
  }

  // Reservations of clients that went quiet lapse with their window; they are dropped at most
  // once per window length, so the map holds only the clients of about the last window.
  let lastReservationSweep = now();
  function dropLapsedReservations(at: number): void {
    if (at - lastReservationSweep < windowMs) return;
    lastReservationSweep = at;
    for (const [client, reservation] of reserved) {
      if (at - reservation.startedAt >= windowMs) reserved.delete(client);
    }
  }

  // Peeks under way, by client, shared by every peek of that client that arrives meanwhile: a page
  // loads dozens of assets at once (none spends the budget), and each would otherwise take a
  // pooled connection, before the shares' statements and the counts, to read the same row.
  const peeking = new Map<string, Promise<RateLimitState>>();

  async function peekOnce(client: string): Promise<RateLimitState> {
    const at = now();
    if (tryDatabase(at)) {
      try {
        const result = await runStatement<WindowRow>(db, PEEK, [client, budget], timeoutMs);
        recovered(at);
        const row = result.rows[0];
        // A peek never refuses (see FixedWindows.peek); it only reports.
        if (row && at - row.window_start.getTime() < windowMs)
          return { ...fromRow(client, row, at), allowed: true };
        return seen.state(at, 0, at);
      } catch (error) {
        failed(error, at, 'peek');
      }
    }
    return seen.peek(client, at);
  }

  return {
    take(client) {
      const at = now();
      const place = takeReserved(client, at);
      if (place) return place;
      if (!tryDatabase(at) || closed) {
        if (outage) outage.countedInMemory += 1;
        return Promise.resolve(seen.take(client, at));
      }
      return new Promise((resolve) => {
        const waiters = pending.get(client);
        if (waiters) waiters.push(resolve);
        else pending.set(client, [resolve]);
        schedule();
      });
    },
    peek(client) {
      const under = peeking.get(client);
      if (under) return under;
      const answer = peekOnce(client).finally(() => peeking.delete(client));
      peeking.set(client, answer);
      return answer;
    },
    lastKnown(client) {
      return seen.peek(client, now());
    },
    async close() {
      closed = true;
      // A batch under way answers its requests (from the database or the process) before this.
      while (inFlight || pending.size > 0) {
        if (!inFlight) await flush();
        else await new Promise((resolve) => setImmediate(resolve));
      }
      closing.abort();
      await sweeping;
    },
  };
}
