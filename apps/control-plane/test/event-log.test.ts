import { ProblemError } from '@switchyard/shared';
import { databaseKind, migrateLatest, type TestDatabase } from '@switchyard/shared/db';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { controlPlaneMigrations } from '../src/migrations/index.ts';
import {
  appendEvent,
  appendEvents,
  createEventLog,
  createInProcessEventBus,
  type EventBus,
  type EventLog,
  type EventLogEntry,
  parseCursor,
} from '../src/platform/events/index.ts';
import { silentLogger } from '../src/platform/logger.ts';
import { openMigratedTestDatabase } from './helpers/database.ts';

let handle: TestDatabase;
const logs: EventLog[] = [];
let streamCounter = 0;

/** A stream no other test touches, so tests never see each other's entries. */
const uniqueStream = () => `test_${process.pid}_${++streamCounter}`;

function open(options: { events?: EventBus; safetyPollMs?: number; retentionMs?: number } = {}): EventLog {
  const log = createEventLog({
    db: handle.db,
    events: options.events ?? createInProcessEventBus(),
    log: silentLogger(),
    safetyPollMs: options.safetyPollMs ?? 60_000,
    retentionMs: options.retentionMs,
  });
  logs.push(log);
  return log;
}

/** Entries a follower received, and a way to wait for a number of them. */
function receiver() {
  const entries: EventLogEntry[] = [];
  const waiters: Array<() => void> = [];
  return {
    entries,
    onEntry: (entry: EventLogEntry) => {
      entries.push(entry);
      for (const wake of waiters.splice(0)) wake();
    },
    async until(count: number, timeoutMs = 10_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (entries.length < count) {
        if (Date.now() > deadline) throw new Error(`received ${entries.length} of ${count} entries`);
        await new Promise<void>((wake) => {
          waiters.push(wake);
          setTimeout(wake, 50);
        });
      }
    },
    names: () => entries.map((entry) => entry.event),
  };
}

/** A bus that carries nothing, as when every NOTIFY is lost during a LISTEN reconnect. */
function deafBus(): EventBus {
  return { publish: async () => {}, subscribe: () => () => {}, close: async () => {} };
}

/** Counts the tail's reads (the statements that read entries as they commit) the database runs. */
function countReads() {
  let reads = 0;
  const listener = (query: { sql: string }) => {
    if (query.sql.includes('held_back')) reads += 1;
  };
  handle.db.on('query', listener);
  return {
    get reads() {
      return reads;
    },
    stop: () => handle.db.off('query', listener),
  };
}

function ascending(entries: EventLogEntry[]): boolean {
  return entries.every((entry, i) => {
    if (i === 0) return true;
    const a = parseCursor(entries[i - 1]!.id)!;
    const b = parseCursor(entry.id)!;
    return a.tx < b.tx || (a.tx === b.tx && a.id < b.id);
  });
}

beforeAll(async () => {
  handle = await openMigratedTestDatabase();
  await migrateLatest(handle.db, controlPlaneMigrations);
});

afterEach(async () => {
  for (const log of logs.splice(0)) await log.stop();
});

afterAll(async () => {
  await handle?.close();
});

describe('event log', () => {
  it('delivers only entries appended after follow when no cursor is given, in order, each with a cursor id', async () => {
    const log = open();
    const stream = uniqueStream();
    await appendEvent(handle.db, stream, 'before', { n: 0 });
    const got = receiver();
    const unfollow = await log.follow(stream, undefined, got.onEntry);
    await appendEvent(handle.db, stream, 'one', { n: 1 });
    await appendEvents(handle.db, [
      { stream, event: 'two', payload: { n: 2 } },
      { stream, event: 'three', payload: { n: 3, nested: { ok: true } } },
    ]);
    log.announce(stream);
    await got.until(3);
    expect(got.names()).toEqual(['one', 'two', 'three']);
    expect(got.entries[2]!.payload).toEqual({ n: 3, nested: { ok: true } });
    for (const entry of got.entries) expect(entry.id).toMatch(/^\d+-\d+$/);
    expect(ascending(got.entries)).toBe(true);
    unfollow();
  });

  it('keeps streams apart', async () => {
    const log = open();
    const [mine, other] = [uniqueStream(), uniqueStream()];
    const got = receiver();
    await log.follow(mine, undefined, got.onEntry);
    await appendEvent(handle.db, other, 'elsewhere', {});
    await appendEvent(handle.db, mine, 'here', {});
    log.announce(other);
    log.announce(mine);
    await got.until(1);
    await appendEvent(handle.db, mine, 'here-too', {});
    log.announce(mine);
    await got.until(2);
    expect(got.names()).toEqual(['here', 'here-too']);
  });

  it('resumes after a cursor with exactly the entries after it, then live ones', async () => {
    const log = open();
    const stream = uniqueStream();
    const first = receiver();
    const unfollow = await log.follow(stream, undefined, first.onEntry);
    await appendEvents(
      handle.db,
      ['a', 'b', 'c', 'd'].map((event) => ({ stream, event, payload: {} })),
    );
    log.announce(stream);
    await first.until(4);
    unfollow();

    const resumed = receiver();
    await log.follow(stream, first.entries[1]!.id, resumed.onEntry);
    await resumed.until(2);
    await appendEvent(handle.db, stream, 'e', {});
    log.announce(stream);
    await resumed.until(3);
    expect(resumed.names()).toEqual(['c', 'd', 'e']);
    expect(resumed.entries.map((e) => e.id)).toEqual([
      first.entries[2]!.id,
      first.entries[3]!.id,
      expect.any(String),
    ]);
  });

  it('catches a follower up over many batches, pacing it, without gaps or repeats while others write', async () => {
    const log = open();
    const stream = uniqueStream();
    const rows = Array.from({ length: 700 }, (_, n) => ({ stream, event: 'old', payload: { n } }));
    await appendEvents(handle.db, rows);
    let paced = 0;
    const got = receiver();
    await log.follow(stream, '0-0', got.onEntry, {
      pace: async () => {
        // Entries written while the follower is still catching up arrive too, after the old ones.
        // Counted before it is written, so the wait below always expects it.
        const n = 700 + paced++;
        await appendEvent(handle.db, stream, 'new', { n });
        log.announce(stream);
      },
    });
    while (got.entries.length < 700 + paced) await got.until(700 + paced);
    expect(paced).toBeGreaterThan(0);
    expect(got.entries.map((e) => e.payload.n)).toEqual(Array.from({ length: 700 + paced }, (_, n) => n));
    expect(ascending(got.entries)).toBe(true);
  });

  it('refuses a malformed cursor with invalid_request', async () => {
    const log = open();
    for (const bad of [
      '',
      'abc',
      '12',
      '1-',
      '-1',
      '1-2-3',
      ' 1-2',
      '1.5-2',
      '18446744073709551616-1',
      '1-9223372036854775808',
    ]) {
      const attempt = log.follow(uniqueStream(), bad, () => {});
      await expect(attempt).rejects.toBeInstanceOf(ProblemError);
      await expect(attempt).rejects.toMatchObject({ code: 'invalid_request' });
    }
  });

  it('prunes entries older than the retention, and a cursor from before them resumes at the oldest kept', async () => {
    const log = open({ retentionMs: 60 * 60 * 1000 });
    const stream = uniqueStream();
    await appendEvents(
      handle.db,
      ['gone-1', 'gone-2', 'kept-1', 'kept-2'].map((event) => ({ stream, event, payload: {} })),
    );
    const first = receiver();
    await log.follow(stream, '0-0', first.onEntry);
    await first.until(4);
    await handle
      .db('event_log')
      .where({ stream })
      .whereIn('event', ['gone-1', 'gone-2'])
      .update({ created_at: handle.db.raw("now() - interval '2 hours'") });

    expect(await log.prune()).toBeGreaterThanOrEqual(2);
    const left = await handle.db('event_log').where({ stream }).orderBy('id').pluck('event');
    expect(left).toEqual(['kept-1', 'kept-2']);

    const resumed = receiver();
    await log.follow(stream, first.entries[0]!.id, resumed.onEntry);
    await resumed.until(2);
    expect(resumed.names()).toEqual(['kept-1', 'kept-2']);
  });

  // Regression: such a cursor (kept by a client across a database reset or restore) used to
  // leave its follower registered but silent until the log's own ids passed it.
  it('starts a follower whose cursor lies beyond every entry with the next entry, like one without a cursor', async () => {
    const log = open();
    const stream = uniqueStream();
    await appendEvent(handle.db, stream, 'before', {});
    const { entries } = await log.page(stream, { limit: 1 });
    const { tx, id } = parseCursor(entries[0]!.id)!;
    // Behind a tail already open (its head at `before`), next to a follower without a cursor.
    const live = receiver();
    await log.follow(stream, undefined, live.onEntry);
    const ahead = receiver();
    await log.follow(stream, `${tx + 1_000_000n}-${id + 1_000n}`, ahead.onEntry);
    // And a stream with no entries at all, as after a reset.
    const empty = uniqueStream();
    const fresh = receiver();
    await log.follow(empty, `${tx + 1_000_000n}-1`, fresh.onEntry);
    await appendEvent(handle.db, stream, 'next', {});
    await appendEvent(handle.db, empty, 'first', {});
    log.announce(stream);
    log.announce(empty);
    await ahead.until(1);
    expect(ahead.names()).toEqual(['next']);
    expect(ahead.entries).toEqual(live.entries);
    await fresh.until(1);
    expect(fresh.names()).toEqual(['first']);
  });

  it('prunes periodically once started', async () => {
    const log = createEventLog({
      db: handle.db,
      events: createInProcessEventBus(),
      log: silentLogger(),
      retentionMs: 1000,
      pruneIntervalMs: 20,
    });
    logs.push(log);
    const stream = uniqueStream();
    await appendEvent(handle.db, stream, 'old', {});
    await handle
      .db('event_log')
      .where({ stream })
      .update({ created_at: handle.db.raw("now() - interval '1 minute'") });
    log.start();
    for (let i = 0; i < 200 && (await handle.db('event_log').where({ stream }).first()); i++) {
      await new Promise((done) => setTimeout(done, 20));
    }
    expect(await handle.db('event_log').where({ stream }).first()).toBeUndefined();
  });

  it('serves many followers of a stream with one shared reader, and stops reading when the last leaves', async () => {
    const log = open();
    const stream = uniqueStream();
    const followers = Array.from({ length: 25 }, () => receiver());
    const unfollows = await Promise.all(followers.map((f) => log.follow(stream, undefined, f.onEntry)));
    // Settle the catch-up checks of the followers (none of them reads: they start at the head).
    await new Promise((done) => setTimeout(done, 10));
    const counter = countReads();
    try {
      for (let n = 1; n <= 4; n++) {
        await appendEvent(handle.db, stream, 'tick', { n });
        log.announce(stream);
        await Promise.all(followers.map((f) => f.until(n)));
      }
      // One reader: a read or two per announce, however many followers (25 readers would be 100+).
      expect(counter.reads).toBeLessThanOrEqual(8);
      for (const f of followers) expect(f.entries.map((e) => e.payload.n)).toEqual([1, 2, 3, 4]);

      for (const unfollow of unfollows) unfollow();
      const before = counter.reads;
      await appendEvent(handle.db, stream, 'tick', { n: 5 });
      log.announce(stream);
      await handle.db.raw('select 1'); // the announce's wake-up would have started by now
      expect(counter.reads).toBe(before);
    } finally {
      counter.stop();
    }
  });

  it('still delivers when every bus hint is lost, through the safety poll', async () => {
    const log = open({ events: deafBus(), safetyPollMs: 30 });
    const stream = uniqueStream();
    const got = receiver();
    await log.follow(stream, undefined, got.onEntry);
    // Another replica appended and announced; the NOTIFY never arrived here.
    await appendEvent(handle.db, stream, 'unannounced', { n: 1 });
    await got.until(1);
    expect(got.names()).toEqual(['unannounced']);
  });

  it('delivers every entry of many concurrent writers exactly once, in cursor order', async () => {
    const log = open();
    const stream = uniqueStream();
    const got = receiver();
    await log.follow(stream, undefined, got.onEntry);
    const writers = 10;
    const perWriter = 30;
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < perWriter; i += 3) {
          await handle.db.transaction(async (trx) => {
            await appendEvents(
              trx,
              [i, i + 1, i + 2].map((n) => ({ stream, event: 'w', payload: { w, n } })),
            );
          });
          log.announce(stream);
        }
      }),
    );
    await got.until(writers * perWriter);
    await new Promise((done) => setTimeout(done, 20));
    expect(got.entries).toHaveLength(writers * perWriter);
    expect(ascending(got.entries)).toBe(true);
    expect(new Set(got.entries.map((e) => `${e.payload.w}/${e.payload.n}`)).size).toBe(writers * perWriter);
  });
});

describe('event log: large payloads', () => {
  // A memory change carries a value of up to 1 MiB: a read of 256 of them at once would hold
  // hundreds of MiB in the process. Reads and pages stop at 8 MiB of payload instead.
  const MIB = 1024 * 1024;
  const big = (n: number) => ({ n, pad: 'x'.repeat(MIB) });

  it('pages at most about 8 MiB of payload at a time, and paging on still yields every entry once, in order', async () => {
    const log = open();
    const stream = uniqueStream();
    await appendEvents(
      handle.db,
      Array.from({ length: 20 }, (_, n) => ({ stream, event: 'big', payload: big(n) })),
    );
    const first = await log.page(stream, { limit: 1000 });
    expect(first.entries.length).toBeGreaterThan(0);
    expect(first.entries.length).toBeLessThanOrEqual(9);
    expect(first.hasMore).toBe(true);
    const seen: number[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await log.page(stream, { limit: 1000, after });
      seen.push(...page.entries.map((entry) => entry.payload.n as number));
      after = page.nextCursor ?? undefined;
      if (!page.hasMore) break;
    }
    expect(seen).toEqual(Array.from({ length: 20 }, (_, n) => n));
  });

  it('catches a follower up over large payloads in byte-bounded reads, every entry once, in order', async () => {
    const log = open();
    const stream = uniqueStream();
    await appendEvents(
      handle.db,
      Array.from({ length: 20 }, (_, n) => ({ stream, event: 'big', payload: big(n) })),
    );
    const got = receiver();
    let paces = 0;
    await log.follow(stream, '0-0', got.onEntry, {
      pace: async () => {
        paces += 1;
      },
    });
    await got.until(20);
    expect(got.entries.map((entry) => entry.payload.n)).toEqual(Array.from({ length: 20 }, (_, n) => n));
    // The reads were cut by size, so the follower was paced between them.
    expect(paces).toBeGreaterThanOrEqual(2);
  });
});

describe('event log ordering with a late-committing older transaction', () => {
  it('holds back a newer entry until an older transaction commits, then delivers both in (tx, id) order', async (ctx) => {
    if (databaseKind(handle.db) !== 'postgres') ctx.skip(); // PGlite runs one transaction at a time
    const log = open();
    const stream = uniqueStream();
    const got = receiver();
    await log.follow(stream, undefined, got.onEntry);

    const older = await handle.db.transaction();
    try {
      // The older transaction takes its id first but writes its entry last: a higher row id, a lower tx.
      await older.raw('select pg_current_xact_id()');
      await appendEvent(handle.db, stream, 'newer', {});
      await appendEvent(older, stream, 'older', {});

      // Wait for a read that saw the newer entry committed and held back.
      const sawHeldBack = new Promise<void>((resolve) => {
        const listener = (response: { rows?: Array<{ held_back: boolean }> }, query: { sql: string }) => {
          if (query.sql.includes('held_back') && response.rows?.[0]?.held_back === true) {
            handle.db.off('query-response', listener);
            resolve();
          }
        };
        handle.db.on('query-response', listener);
      });
      log.announce(stream);
      await sawHeldBack;
      expect(got.entries).toEqual([]);

      await older.commit();
    } finally {
      if (!older.isCompleted()) await older.rollback();
    }
    log.announce(stream);
    await got.until(2);
    expect(got.names()).toEqual(['older', 'newer']);
    const [a, b] = got.entries.map((e) => parseCursor(e.id)!);
    expect(a!.tx < b!.tx && a!.id > b!.id).toBe(true);
  });

  it('delivers a held-back entry without another announce once the older transaction ends', async (ctx) => {
    if (databaseKind(handle.db) !== 'postgres') ctx.skip();
    const log = open();
    const stream = uniqueStream();
    const got = receiver();
    await log.follow(stream, undefined, got.onEntry);
    // An older transaction that writes no events (so nobody will announce when it ends).
    const older = await handle.db.transaction();
    await older.raw('select pg_current_xact_id()');
    await appendEvent(handle.db, stream, 'waiting', {});
    log.announce(stream);
    await older.commit();
    await got.until(1);
    expect(got.names()).toEqual(['waiting']);
  });
});

describe('event log: from now on, beside an older transaction', () => {
  it('starts a follower without a cursor after every entry committed before it, also one an older transaction holds back', async (ctx) => {
    if (databaseKind(handle.db) !== 'postgres') ctx.skip();
    const log = open();
    const other = open();
    const stream = uniqueStream();
    const early = receiver();
    await log.follow(stream, undefined, early.onEntry);
    const older = await handle.db.transaction();
    const late = receiver();
    const alone = receiver();
    try {
      await older.raw('select pg_current_xact_id()');
      await appendEvent(handle.db, stream, 'committed before', {});
      log.announce(stream);
      // One follower joins the tail that is already reading, one opens a tail of its own.
      await log.follow(stream, undefined, late.onEntry);
      await other.follow(stream, undefined, alone.onEntry);
      await appendEvent(older, stream, 'older, committed after', {});
      await older.commit();
    } finally {
      if (!older.isCompleted()) await older.rollback();
    }
    await appendEvent(handle.db, stream, 'after', {});
    log.announce(stream);
    other.announce(stream);
    await Promise.all([early.until(3), late.until(2), alone.until(2)]);
    // (tx, id) order: the older transaction's entry comes first, whenever it committed.
    expect(early.names()).toEqual(['older, committed after', 'committed before', 'after']);
    expect(late.names()).toEqual(['older, committed after', 'after']);
    expect(alone.names()).toEqual(['older, committed after', 'after']);
    expect(late.entries.map((entry) => entry.id)).toEqual(
      early.entries.filter((entry) => entry.event !== 'committed before').map((entry) => entry.id),
    );
  });
});

describe('event log beside another database on the same server', () => {
  it("delivers entries while another database's transaction stays open: transaction ids are server-wide, but that one cannot write this log", async (ctx) => {
    if (databaseKind(handle.db) !== 'postgres') ctx.skip();
    // Another application's long transaction, in another database of the same server (DATABASE_URL
    // names the server's database; each test file works in a scratch database beside it), holding
    // a transaction id older than every entry written below.
    const elsewhere = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await elsewhere.connect();
    try {
      await elsewhere.query('begin');
      await elsewhere.query('select pg_current_xact_id()');
      const log = open();
      const stream = uniqueStream();
      const got = receiver();
      await log.follow(stream, undefined, got.onEntry);
      await appendEvent(handle.db, stream, 'first', {});
      log.announce(stream);
      await got.until(1);
      // Paging and "from now on" (the head a new follower starts after) see it too.
      const page = await log.page(stream, { limit: 10 });
      expect(page.entries.map((entry) => entry.event)).toEqual(['first']);
      const late = receiver();
      await log.follow(stream, undefined, late.onEntry);
      await appendEvent(handle.db, stream, 'second', {});
      log.announce(stream);
      await late.until(1);
      expect(late.names()).toEqual(['second']);
      await got.until(2);
      expect(got.names()).toEqual(['first', 'second']);
    } finally {
      await elsewhere.query('rollback').catch(() => {});
      await elsewhere.end();
    }
  });
});

describe('event log: onLive', () => {
  it('tells a follower once when it has caught up: entries before it were the catch-up, entries after it live', async () => {
    const log = open();
    const stream = uniqueStream();
    await appendEvents(handle.db, [
      { stream, event: 'old', payload: { n: 0 } },
      { stream, event: 'old', payload: { n: 1 } },
    ]);
    const order: string[] = [];
    let lives = 0;
    const got = receiver();
    await log.follow(
      stream,
      '0-0',
      (entry) => {
        order.push(entry.event);
        got.onEntry(entry);
      },
      {
        onLive: () => {
          lives += 1;
          order.push('(live)');
        },
      },
    );
    await got.until(2);
    await appendEvent(handle.db, stream, 'new', { n: 2 });
    log.announce(stream);
    await got.until(3);
    expect(order).toEqual(['old', 'old', '(live)', 'new']);
    expect(lives).toBe(1);
    // Without a cursor there is nothing to catch up on: live at once.
    let fresh = 0;
    await log.follow(stream, undefined, () => {}, { onLive: () => fresh++ });
    expect(fresh).toBe(1);
  });
});

describe('event log: page', () => {
  it('reads a stream oldest first, a page at a time, after an entry, and keeps streams apart', async () => {
    const log = open();
    const [stream, other] = [uniqueStream(), uniqueStream()];
    await appendEvents(handle.db, [
      ...Array.from({ length: 5 }, (_, n) => ({ stream, event: 'e', payload: { n } })),
      { stream: other, event: 'elsewhere', payload: { n: 99 } },
    ]);
    const first = await log.page(stream, { limit: 2 });
    expect(first.entries.map((e) => e.payload.n)).toEqual([0, 1]);
    expect(first.hasMore).toBe(true);
    expect(first.nextCursor).toBe(first.entries[1]!.id);
    expect(first.entries[0]).toEqual({
      id: expect.stringMatching(/^\d+-\d+$/),
      event: 'e',
      payload: { n: 0 },
    });
    const second = await log.page(stream, { limit: 2, after: first.nextCursor! });
    expect(second.entries.map((e) => e.payload.n)).toEqual([2, 3]);
    const last = await log.page(stream, { limit: 2, after: second.nextCursor! });
    expect(last.entries.map((e) => e.payload.n)).toEqual([4]);
    expect(last.hasMore).toBe(false);
    expect(ascending([...first.entries, ...second.entries, ...last.entries])).toBe(true);
    // Past the end the cursor stays; with nothing at all there is none.
    expect(await log.page(stream, { limit: 2, after: last.nextCursor! })).toEqual({
      entries: [],
      hasMore: false,
      nextCursor: last.nextCursor,
    });
    expect(await log.page(uniqueStream(), { limit: 2 })).toEqual({
      entries: [],
      hasMore: false,
      nextCursor: null,
    });
    // The ids are the ones followers receive.
    const got = receiver();
    await log.follow(stream, '0-0', got.onEntry);
    await got.until(5);
    expect(got.entries.map((e) => e.id)).toEqual(
      [...first.entries, ...second.entries, ...last.entries].map((e) => e.id),
    );
  });

  it('appends more events at once than one statement has parameters for (a sweep expiring a whole fleet)', async () => {
    const log = open();
    const stream = uniqueStream();
    // Three parameters a row: 25,000 rows in one INSERT would need 75,000 (PostgreSQL takes 65,535).
    const count = 25_000;
    await appendEvents(
      handle.db,
      Array.from({ length: count }, (_, n) => ({ stream, event: 'node.status_changed', payload: { n } })),
    );
    const seen: number[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await log.page(stream, { limit: 1000, ...(after ? { after } : {}) });
      seen.push(...page.entries.map((e) => e.payload.n as number));
      if (!page.hasMore) break;
      after = page.nextCursor!;
    }
    expect(seen).toEqual(Array.from({ length: count }, (_, n) => n));
  });

  it('filters by payload fields (equal, and LIKE with escapes) and by recording time, in the database', async () => {
    const log = open();
    const stream = uniqueStream();
    await appendEvents(handle.db, [
      { stream, event: 'e', payload: { team: 'a', name: '100%' } },
      { stream, event: 'e', payload: { team: 'a', name: '1000' } },
      { stream, event: 'e', payload: { team: 'b', name: '100%' } },
      { stream, event: 'e', payload: { team: 'a', name: 'x_y' } },
      { stream, event: 'e', payload: { team: 'a', name: 'xzy' } },
      { stream, event: 'e', payload: { name: 'a\\b' } },
    ]);
    const names = async (options: Omit<Parameters<EventLog['page']>[1], 'limit'>) =>
      (await log.page(stream, { limit: 100, ...options })).entries.map(
        (e) => `${e.payload.team}/${e.payload.name}`,
      );
    expect(await names({ payloadEquals: { team: 'a' } })).toEqual(['a/100%', 'a/1000', 'a/x_y', 'a/xzy']);
    expect(await names({ payloadLike: { name: '100\\%' } })).toEqual(['a/100%', 'b/100%']);
    expect(await names({ payloadLike: { name: '100%' } })).toEqual(['a/100%', 'a/1000', 'b/100%']);
    expect(await names({ payloadLike: { name: 'x\\_y' } })).toEqual(['a/x_y']);
    expect(await names({ payloadLike: { name: 'x_y' } })).toEqual(['a/x_y', 'a/xzy']);
    expect(await names({ payloadLike: { name: 'a\\\\b' } })).toEqual(['undefined/a\\b']);
    expect(await names({ payloadEquals: { team: 'a' }, payloadLike: { name: '1%' } })).toEqual([
      'a/100%',
      'a/1000',
    ]);
    // Field names are bound, never spliced into the statement.
    expect(await names({ payloadEquals: { "team' or '1'='1": 'a' } })).toEqual([]);
    expect(await names({ since: new Date(Date.now() + 60_000) })).toEqual([]);
    expect(await names({ since: new Date(Date.now() - 60_000) })).toHaveLength(6);
  });

  it('refuses a malformed after with invalid_request naming it, and a limit that is not a positive integer', async () => {
    const log = open();
    const attempt = log.page(uniqueStream(), { limit: 1, after: '1-2-3' });
    await expect(attempt).rejects.toBeInstanceOf(ProblemError);
    await expect(attempt).rejects.toMatchObject({
      code: 'invalid_request',
      init: { extensions: { errors: [{ field: 'after', message: 'not an event id' }] } },
    });
    for (const limit of [0, -1, 1.5, Number.NaN]) {
      await expect(log.page(uniqueStream(), { limit })).rejects.toBeInstanceOf(RangeError);
    }
  });

  it('holds back an entry newer than a transaction still running, so the next page finds the older one first', async (ctx) => {
    if (databaseKind(handle.db) !== 'postgres') ctx.skip(); // PGlite runs one transaction at a time
    const log = open();
    const stream = uniqueStream();
    await appendEvent(handle.db, stream, 'first', {});
    const older = await handle.db.transaction();
    try {
      await older.raw('select pg_current_xact_id()');
      await appendEvent(handle.db, stream, 'newer', {});
      const page = await log.page(stream, { limit: 10 });
      expect(page.entries.map((e) => e.event)).toEqual(['first']);
      await appendEvent(older, stream, 'older', {});
      await older.commit();
      const next = await log.page(stream, { limit: 10, after: page.nextCursor! });
      expect(next.entries.map((e) => e.event)).toEqual(['older', 'newer']);
    } finally {
      if (!older.isCompleted()) await older.rollback();
    }
  });
});
