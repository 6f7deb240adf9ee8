import {
  createScratchDatabase,
  type Database,
  migrateLatest,
  openDatabase,
  type ScratchDatabase,
} from '@switchyard/shared/db';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RateLimitState } from '../../server/http/rate-limiter.ts';
import { createSharedRateLimiter } from '../../server/http/shared-rate-limiter.ts';
import { docsMigrations } from '../../server/shares/index.ts';
import {
  expectCommonHeaders,
  expectProblem,
  memoryLogger,
  request,
  startTestServer,
  type TestResponse,
} from './support/docs-server.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const LIMIT = 12;
const PAGE_LIMIT = 30;
const WINDOW_SECONDS = 60;

/**
 * The request budget is per client address, not per process: docs replicas sharing one PostgreSQL
 * database count a client's requests together, so adding a replica does not multiply its budget.
 */
describe.skipIf(!DATABASE_URL)(
  'rate limit shared by two replicas on one PostgreSQL database (needs DATABASE_URL: PGlite belongs to one process, so there is no second replica to share with)',
  () => {
    let scratch: ScratchDatabase;
    let admin: Database;
    let clock = Date.parse('2026-11-24T10:00:00Z');
    // Replica B's clock can be set behind A's, as a host whose clock lags would be.
    let skewB = 0;
    let a: Awaited<ReturnType<typeof startTestServer>>;
    let b: Awaited<ReturnType<typeof startTestServer>>;
    // Each test uses addresses of its own, so budgets never carry over between tests.
    let nextAddress = 10;
    const address = () => ({ localAddress: `127.0.0.${nextAddress++}` });

    beforeAll(async () => {
      scratch = await createScratchDatabase(DATABASE_URL!, 'sy_docs_rate');
      admin = await openDatabase({ url: scratch.url, poolMax: 2 });
      const replica = (now: () => number) =>
        startTestServer({
          databaseUrl: scratch.url,
          rateLimit: LIMIT,
          pageRateLimit: PAGE_LIMIT,
          rateWindowSeconds: WINDOW_SECONDS,
          now,
          // A statement past the default 500 ms wait is counted in memory instead, which on a
          // loaded 2-core CI machine would make these tests of the shared count fail at random;
          // the wait itself is tested below, on the limiter, with a table held locked.
          rateLimitStoreTimeoutMs: 10_000,
        });
      // Each replica opens its own pool from DATABASE_URL, as two processes would.
      a = await replica(() => clock);
      b = await replica(() => clock - skewB);
    });
    afterEach(() => {
      skewB = 0;
    });
    afterAll(async () => {
      await a?.close();
      await b?.close();
      await admin?.destroy();
      await scratch?.drop();
    });

    const get = (server: { url: string }, client: { localAddress: string }, path = '/api/v1/topics') =>
      request(`${server.url}${path}`, client);

    /** A replica's limiter of the API budget that reserves ten places ahead, on the pool `db`. */
    const reservingLimiter = (db: Database, limit: number) =>
      createSharedRateLimiter({
        db,
        logger: memoryLogger().logger,
        budget: 'api',
        limit,
        windowSeconds: 60,
        reserveAhead: 10,
        timeoutMs: 30_000,
      });
    /** The count in a client's row of the API budget, as the database holds it. */
    const apiCount = async (client: string) =>
      (await admin('docs_rate_windows').where({ client, budget: 'api' }).first('count'))?.count;

    it('says at start that the budget is counted in the database', () => {
      for (const replica of [a, b]) {
        expect(replica.logLines.find((line) => line.msg.startsWith('listening on'))).toMatchObject({
          rateLimitStore: 'postgres',
        });
      }
    });

    it('spends one budget across both replicas: the request after the limit is refused on either', async () => {
      const client = address();
      for (let i = 1; i <= LIMIT; i++) {
        const res = await get(i % 2 ? a : b, client);
        expect(res.status, `request ${i}`).toBe(200);
        expect(res.headers['ratelimit-remaining'], `request ${i}`).toBe(String(LIMIT - i));
        expect(res.headers['ratelimit-reset']).toBe(String(WINDOW_SECONDS));
      }
      clock += 20_000;
      const refused = [await get(a, client), await get(b, client, '/api/agent/topics')];
      for (const res of refused) {
        expect(expectProblem(res, 429, 'rate_limited').budget).toBe('api');
        expectCommonHeaders(res, LIMIT, WINDOW_SECONDS);
        expect(res.headers['ratelimit-remaining']).toBe('0');
        expect(res.headers['ratelimit-reset']).toBe('40');
        expect(res.headers['retry-after']).toBe('40');
      }
      // Pages are counted against a budget of their own, which the API's calls did not spend.
      const llms = await get(b, client, '/llms.txt');
      expect(llms.status).toBe(200);
      expectCommonHeaders(llms, PAGE_LIMIT, WINDOW_SECONDS);
      expect(llms.headers['ratelimit-remaining']).toBe(String(PAGE_LIMIT - 1));
      // Another address has a budget of its own, on both replicas.
      const other = address();
      expect((await get(b, other)).headers['ratelimit-remaining']).toBe(String(LIMIT - 1));
      expect((await get(a, other)).headers['ratelimit-remaining']).toBe(String(LIMIT - 2));

      // The window ends for both replicas at once: a new one opens with the next request.
      clock += 40_000;
      const again = await get(b, client);
      expect(again.status).toBe(200);
      expect(again.headers['ratelimit-remaining']).toBe(String(LIMIT - 1));
      expect(again.headers['ratelimit-reset']).toBe(String(WINDOW_SECONDS));
      expect((await get(a, client)).headers['ratelimit-remaining']).toBe(String(LIMIT - 2));
    });

    it('never grants more than the limit to concurrent requests spread over both replicas', async () => {
      // Two addresses at once, so batches carry several requests of several clients.
      const clients = [address(), address()];
      const responses = await Promise.all(
        Array.from({ length: LIMIT * 6 }, (_, i) => get(i % 2 ? a : b, clients[i % 3 === 0 ? 1 : 0]!)),
      );
      for (const [n, client] of clients.entries()) {
        const mine = responses.filter((_, i) => (i % 3 === 0 ? 1 : 0) === n);
        const granted = mine.filter((res) => res.status === 200);
        expect(granted, client.localAddress).toHaveLength(LIMIT);
        for (const res of mine.filter((r) => r.status !== 200)) expectProblem(res, 429, 'rate_limited');
        // Each grant took a different place in the budget: no two requests were given the same one.
        const remaining = granted
          .map((res) => Number(res.headers['ratelimit-remaining']))
          .sort((x, y) => x - y);
        expect(remaining).toEqual(Array.from({ length: LIMIT }, (_, i) => i));
      }
    });

    it('spends one page budget across both replicas, apart from the API budget', async () => {
      const client = address();
      for (let i = 1; i <= PAGE_LIMIT; i++) {
        const res = await get(i % 2 ? a : b, client, i % 3 ? '/llms.txt' : '/');
        expect(res.status, `request ${i}`).toBe(200);
        expectCommonHeaders(res, PAGE_LIMIT, WINDOW_SECONDS);
        expect(res.headers['ratelimit-remaining'], `request ${i}`).toBe(String(PAGE_LIMIT - i));
      }
      for (const res of [await get(a, client, '/'), await get(b, client, '/docs-ai.json')]) {
        expect(expectProblem(res, 429, 'rate_limited').budget).toBe('pages');
        expectCommonHeaders(res, PAGE_LIMIT, WINDOW_SECONDS);
      }
      const api = await get(b, client);
      expect(api.status).toBe(200);
      expectCommonHeaders(api, LIMIT, WINDOW_SECONDS);
      expect(api.headers['ratelimit-remaining']).toBe(String(LIMIT - 1));
      const rows = await admin('docs_rate_windows')
        .where({ client: client.localAddress })
        .orderBy('budget')
        .select('budget', 'count');
      expect(rows).toEqual([
        { budget: 'api', count: 1 },
        { budget: 'pages', count: PAGE_LIMIT + 2 },
      ]);
    });

    it('reports the shared count on answers that do not spend the budget', async () => {
      const client = address();
      await get(a, client, '/llms.txt');
      await get(a, client, '/llms.txt');
      // Pagefind's files do not spend the page budget; B reads the count A wrote.
      const fragment = await get(b, client, '/pagefind/pagefind-entry.json');
      expectCommonHeaders(fragment, PAGE_LIMIT, WINDOW_SECONDS);
      expect(fragment.headers['ratelimit-remaining']).toBe(String(PAGE_LIMIT - 2));
    });

    it('keeps one window when a replica clock lags the one that opened it', async () => {
      const client = address();
      skewB = 2_000;
      expect((await get(a, client)).headers['ratelimit-reset']).toBe(String(WINDOW_SECONDS));
      // To B the window opened 2 s in its future: still the same window, reset no longer than one.
      const lagging = await get(b, client);
      expect(lagging.headers['ratelimit-remaining']).toBe(String(LIMIT - 2));
      expect(lagging.headers['ratelimit-reset']).toBe(String(WINDOW_SECONDS));
    });

    it('deletes ended windows', async () => {
      const client = address();
      await get(a, client);
      await get(a, client, '/llms.txt');
      const rows = () => admin('docs_rate_windows').where({ client: client.localAddress }).count({ n: '*' });
      expect((await rows())[0]!.n).toBe(2);
      // More than a window later the next counted request on each replica starts a sweep.
      clock += (WINDOW_SECONDS + 1) * 1000;
      await get(a, address());
      await get(b, address());
      await get(a, address(), '/llms.txt');
      await get(b, address(), '/llms.txt');
      await expect.poll(async () => (await rows())[0]!.n, { timeout: 10_000 }).toBe(0);
    });

    it('keeps answering when the database fails: each replica counts in memory, then shares again', async () => {
      const client = address();
      const spent = address();
      expect((await get(a, client)).headers['ratelimit-remaining']).toBe(String(LIMIT - 1));
      for (let i = 0; i < LIMIT; i++) await get(a, spent);
      await admin.raw('alter table docs_rate_windows rename to docs_rate_windows_away');
      let restored = false;
      try {
        // Each replica now counts in the process, on from what it last read of each address.
        const onA = await get(a, client);
        const onB = await get(b, client);
        for (const res of [onA, onB]) {
          expect(res.status).toBe(200);
          expectCommonHeaders(res, LIMIT, WINDOW_SECONDS);
        }
        expect(onA.headers['ratelimit-remaining']).toBe(String(LIMIT - 2));
        expect(onB.headers['ratelimit-remaining']).toBe(String(LIMIT - 1));
        expect((await get(a, client)).headers['ratelimit-remaining']).toBe(String(LIMIT - 3));
        // The address that had spent its budget stays refused where that was seen.
        const refused = await get(a, spent);
        expectProblem(refused, 429, 'rate_limited');
        expectCommonHeaders(refused, LIMIT, WINDOW_SECONDS);
        for (const replica of [a, b]) {
          const warnings = replica.logLines.filter((line) =>
            line.msg.startsWith('rate limit store unavailable'),
          );
          expect(warnings).toHaveLength(1);
          expect(warnings[0]).toMatchObject({ level: 40, operation: 'count' });
          expect(warnings[0]!.err?.message).toMatch(/docs_rate_windows/);
        }
        await admin.raw('alter table docs_rate_windows_away rename to docs_rate_windows');
        restored = true;
        // The database is tried again a second after the last failure; then the shared row counts.
        clock += 1_000;
        const shared = await get(b, client);
        expect(shared.headers['ratelimit-remaining']).toBe(String(LIMIT - 2));
        expect(
          b.logLines.find((line) => line.msg.startsWith('rate limit store answers again')),
        ).toMatchObject({
          level: 30,
          countedInMemory: 1,
        });
        expect(a.loggedErrors).toEqual([]);
        expect(b.loggedErrors).toEqual([]);
      } finally {
        if (!restored) await admin.raw('alter table docs_rate_windows_away rename to docs_rate_windows');
      }
    });

    it('reads the row once for the concurrent asset requests of one client, and answers them all', async () => {
      const db = await openDatabase({ url: scratch.url, poolMax: 4 });
      const limiter = createSharedRateLimiter({
        db,
        logger: memoryLogger().logger,
        budget: 'api',
        limit: 5,
        windowSeconds: 60,
        // Longer than the waits below, so no read is cancelled while they look.
        timeoutMs: 30_000,
      });
      const client = '203.0.113.60';
      await limiter.take(client);
      // The table is held locked, so every read sent stays visible until the lock goes.
      const trx = await admin.transaction();
      let peeks: unknown[] = [];
      try {
        await trx.raw('lock table docs_rate_windows in access exclusive mode');
        peeks = Array.from({ length: 20 }, () => limiter.peek(client));
        const reads = async () =>
          (
            await admin.raw(
              "select count(*)::int as n from pg_stat_activity where datname = current_database() and query like 'select window_start, count from docs_rate_windows%' and state = 'active'",
            )
          ).rows[0].n;
        await expect.poll(reads, { timeout: 10_000 }).toBe(1);
        // Every other peek waits on that one read rather than on a connection of its own.
        await new Promise((done) => setTimeout(done, 200));
        expect(await reads()).toBe(1);
      } finally {
        await trx.rollback();
      }
      const states = await Promise.all(peeks);
      expect(states).toHaveLength(20);
      for (const state of states) expect(state).toMatchObject({ allowed: true, remaining: 4 });
      await limiter.close();
      await db.destroy();
    });

    it('reserves places ahead for a busy client: later requests answer without a statement, never past the limit', async () => {
      const db = await openDatabase({ url: scratch.url, poolMax: 4 });
      const [first, second] = [reservingLimiter(db, 40), reservingLimiter(db, 40)];
      const client = '203.0.113.70';
      const count = () => apiCount(client);
      // Three requests at once: a busy client, so ten places are reserved besides them.
      const burst = await Promise.all([first.take(client), first.take(client), first.take(client)]);
      expect(burst.map((state) => state.remaining)).toEqual([39, 38, 37]);
      expect(await count()).toBe(13);
      // The next four take reserved places: no statement, the row is unchanged.
      const local = [];
      for (let i = 0; i < 4; i++) local.push(await first.take(client));
      expect(local.map((state) => state.remaining)).toEqual([36, 35, 34, 33]);
      expect(await count()).toBe(13);
      // Another replica counts after the reserved places; together both never grant past the limit.
      const all = await Promise.all(
        Array.from({ length: 60 }, (_, i) => (i % 2 ? first : second).take(client)),
      );
      const granted = [...burst, ...local, ...all].filter((state) => state.allowed);
      expect(granted.length).toBeLessThanOrEqual(40);
      // No two grants got the same place.
      expect(new Set(granted.map((state) => state.remaining)).size).toBe(granted.length);
      await first.close();
      await second.close();
      await db.destroy();
    });

    it('holds at most the places it may reserve ahead: a top-up refills them, never adds a whole reservation', async () => {
      const db = await openDatabase({ url: scratch.url, poolMax: 4 });
      const limiter = reservingLimiter(db, 1000);
      const client = '203.0.113.71';
      const count = () => apiCount(client);
      let granted = (await Promise.all([limiter.take(client), limiter.take(client), limiter.take(client)]))
        .length;
      expect(await count()).toBe(3 + 10);
      // Five of the ten taken: half are used, so the next statement tops them up, in the background.
      for (let i = 0; i < 5; i++) await limiter.take(client);
      granted += 5;
      await expect.poll(count, { timeout: 10_000 }).toBeGreaterThan(13);
      // The places counted and not granted are what this replica holds: ten, not fifteen.
      expect((await count()) - granted).toBe(10);
      // Went on long enough to be topped up several times, it still holds ten at most.
      for (let i = 0; i < 40; i++) {
        await limiter.take(client);
        granted += 1;
      }
      await new Promise((done) => setTimeout(done, 200));
      expect((await count()) - granted).toBeLessThanOrEqual(10);
      await limiter.close();
      await db.destroy();
    });

    it('answers requests that queued behind a statement reserving places for their client from those places', async () => {
      const db = await openDatabase({ url: scratch.url, poolMax: 4 });
      const limiter = reservingLimiter(db, 40);
      const client = '203.0.113.72';
      const count = () => apiCount(client);
      // The table is held locked, so the burst's statement stays under way while more requests come.
      const trx = await admin.transaction();
      let burst: Array<RateLimitState | Promise<RateLimitState>> = [];
      let queued: Array<RateLimitState | Promise<RateLimitState>> = [];
      try {
        await trx.raw('lock table docs_rate_windows in access exclusive mode');
        burst = [limiter.take(client), limiter.take(client), limiter.take(client)];
        await expect
          .poll(
            async () =>
              (
                await admin.raw(
                  "select count(*)::int as n from pg_stat_activity where datname = current_database() and query like 'insert into docs_rate_windows%' and state = 'active'",
                )
              ).rows[0].n,
            { timeout: 10_000 },
          )
          .toBe(1);
        queued = Array.from({ length: 4 }, () => limiter.take(client));
      } finally {
        await trx.rollback();
      }
      const states = await Promise.all([...burst, ...queued]);
      expect(states.map((state) => state.remaining)).toEqual([39, 38, 37, 36, 35, 34, 33]);
      // One statement counted the burst and reserved ten; the queued four took four of those.
      await new Promise((done) => setTimeout(done, 200));
      expect(await count()).toBe(13);
      await limiter.close();
      await db.destroy();
    });

    it('cancels a sweep under way when it closes, instead of waiting for its statement', async () => {
      let now = Date.parse('2026-11-25T10:00:00Z');
      const { logger, lines } = memoryLogger();
      const db = await openDatabase({ url: scratch.url, poolMax: 2 });
      const limiter = createSharedRateLimiter({
        db,
        logger,
        budget: 'api',
        limit: 5,
        windowSeconds: 60,
        timeoutMs: 10_000,
        now: () => now,
      });
      const sweeps = async () =>
        (
          await admin.raw(
            "select count(*)::int as n from pg_stat_activity where datname = current_database() and query like 'delete from docs_rate_windows%' and state = 'active'",
          )
        ).rows[0].n;
      // A database that hangs on deletes: the sweep's statement would wait its whole 30 s.
      await admin.raw(
        'create function docs_rate_windows_hang() returns trigger language plpgsql as $$ begin perform pg_sleep(60); return null; end $$',
      );
      await admin.raw(
        'create trigger docs_rate_windows_hang before delete on docs_rate_windows for each statement execute function docs_rate_windows_hang()',
      );
      try {
        await limiter.take('203.0.113.70');
        now += 61_000;
        // The first count after a window length starts a sweep, which deletes the ended window.
        await limiter.take('203.0.113.71');
        await expect.poll(sweeps, { timeout: 10_000 }).toBe(1);
        const closed = limiter.close().then(() => 'closed');
        const deadline = new Promise((done) => setTimeout(() => done('still waiting after 10 s'), 10_000));
        expect(await Promise.race([closed, deadline])).toBe('closed');
        await expect.poll(sweeps, { timeout: 10_000 }).toBe(0);
        expect(lines.filter((line) => line.level >= 40)).toEqual([]);
      } finally {
        // A sweep left hanging (the test failed) would hold the table against the drop.
        await admin.raw(
          "select pg_cancel_backend(pid) from pg_stat_activity where datname = current_database() and query like 'delete from docs_rate_windows%'",
        );
        await admin.raw('drop trigger if exists docs_rate_windows_hang on docs_rate_windows');
        await admin.raw('drop function if exists docs_rate_windows_hang()');
        await db.destroy();
      }
    });

    it('answers from memory when the database does not answer in time', async () => {
      // The limiter itself, with a short wait: the table is locked by a transaction that neither
      // commits nor ends until the request has been answered.
      const { logger, lines } = memoryLogger();
      const db = await openDatabase({ url: scratch.url, poolMax: 2 });
      const limiter = createSharedRateLimiter({
        db,
        logger,
        budget: 'api',
        limit: 2,
        windowSeconds: 60,
        timeoutMs: 200,
      });
      // A pooled connection first (the limiter takes its connections from this pool): opening one
      // can itself take 200 ms on a busy machine, and then the statement would never be sent,
      // leaving the cancel below untested.
      await db.raw('select 1');
      const trx = await admin.transaction();
      try {
        await trx.raw('lock table docs_rate_windows in access exclusive mode');
        const state = await limiter.take('203.0.113.50');
        expect(state).toMatchObject({ allowed: true, remaining: 1 });
        expect(lines.find((line) => line.msg.startsWith('rate limit store unavailable'))?.err?.message).toBe(
          'the rate limit store did not answer within 200 ms',
        );
        // The statement that waited on the lock was cancelled, not left holding a connection.
        const waiting = () =>
          admin.raw(
            "select count(*)::int as n from pg_stat_activity where datname = current_database() and query like 'insert into docs_rate_windows%' and state = 'active'",
          );
        await expect.poll(async () => (await waiting()).rows[0].n, { timeout: 10_000 }).toBe(0);
      } finally {
        await trx.rollback();
        await limiter.close();
        await db.destroy();
      }
    });
  },
);

describe('rate limit on the embedded database (PGlite): counted in the one process, as before', () => {
  let db: Database;
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let clock = 5_000_000;

  beforeAll(async () => {
    // Embedded whatever DATABASE_URL says: this is what `npm start` without it runs.
    db = await openDatabase();
    await migrateLatest(db, docsMigrations);
    server = await startTestServer({ db, rateLimit: 3, rateWindowSeconds: 10, now: () => clock });
  });
  afterAll(async () => {
    await server?.close();
    await db?.destroy();
  });

  it('counts in memory and leaves the windows table empty', async () => {
    expect(server.logLines.find((line) => line.msg.startsWith('listening on'))).toMatchObject({
      rateLimitStore: 'memory',
    });
    const client = { localAddress: '127.0.0.40' };
    const statuses: TestResponse[] = [];
    for (let i = 0; i < 4; i++) statuses.push(await request(`${server.url}/api/v1/topics`, client));
    expect(statuses.map((res) => res.status)).toEqual([200, 200, 200, 429]);
    expect(statuses[3]!.headers['retry-after']).toBe('10');
    clock += 10_000;
    expect((await request(`${server.url}/api/v1/topics`, client)).headers['ratelimit-remaining']).toBe('2');
    expect((await db('docs_rate_windows').count({ n: '*' }))[0]!.n).toBe(0);
  });
});
