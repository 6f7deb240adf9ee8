import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createScratchDatabase,
  createTestDatabaseTemplate,
  type Database,
  databaseKind,
  embeddedPglite,
  hasPgvector,
  type MigrationSet,
  migrateDown,
  migrateLatest,
  openDatabase,
  openTestDatabase,
  pendingMigrations,
  type TestDatabase,
} from '../src/db/index.ts';

const set: MigrationSet = {
  tableName: 'shared_test_migrations',
  migrations: [
    {
      name: '20261122000000_widgets',
      up: (db) =>
        db.schema.createTable('widgets', (t) => {
          t.text('id').primary();
          t.jsonb('body').notNullable();
          t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
        }),
      down: (db) => db.schema.dropTable('widgets'),
    },
    {
      name: '20261122000001_widget_size',
      up: (db) => db.schema.alterTable('widgets', (t) => t.bigInteger('size').notNullable().defaultTo(0)),
      down: (db) => db.schema.alterTable('widgets', (t) => t.dropColumn('size')),
    },
  ],
};

let handle: TestDatabase;
let db: Database;

beforeAll(async () => {
  handle = await openTestDatabase();
  db = handle.db;
});
afterAll(() => handle.close());

describe(`database layer on ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('opens the engine the environment asks for', () => {
    expect(databaseKind(db)).toBe(process.env.DATABASE_URL ? 'postgres' : 'pglite');
  });

  it('migrates up, round-trips a row with JSON, time and bigint, and migrates down', async () => {
    expect(await pendingMigrations(db, set)).toEqual(set.migrations.map((m) => m.name));
    expect(await migrateLatest(db, set)).toEqual(set.migrations.map((m) => m.name));
    expect(await pendingMigrations(db, set)).toEqual([]);
    expect(await migrateLatest(db, set)).toEqual([]);

    await db('widgets').insert({ id: 'w1', body: JSON.stringify({ nested: { a: [1, 2] } }), size: 2 ** 40 });
    const row = await db('widgets').where({ id: 'w1' }).first();
    expect(row.body).toEqual({ nested: { a: [1, 2] } });
    expect(row.created_at).toBeInstanceOf(Date);
    expect(row.size).toBe(2 ** 40);
    const counted = await db('widgets').count({ count: '*' });
    expect(counted[0]?.count).toBe(1);

    expect(await migrateDown(db, set)).toEqual([...set.migrations.map((m) => m.name)].reverse());
    expect(await db.schema.hasTable('widgets')).toBe(false);
  });

  it('rolls back a failed transaction completely', async () => {
    await migrateLatest(db, set);
    await expect(
      db.transaction(async (trx) => {
        await trx('widgets').insert({ id: 'w2', body: '{}' });
        await trx('widgets').insert({ id: 'w2', body: '{}' });
      }),
    ).rejects.toThrow();
    expect(await db('widgets').where({ id: 'w2' })).toEqual([]);
    await migrateDown(db, set);
  });

  it('lets the event loop take turns through a burst of statements, as a server needs to keep reading requests', async () => {
    // Embedded PGlite runs in this thread: statements queued by twenty busy callers must not keep
    // the loop from its other work (accepting connections, reading requests) until all are done.
    let finished = 0;
    let burstOver = false;
    const turnsDuringBurst: number[] = [];
    const turn = () => {
      if (burstOver) return;
      turnsDuringBurst.push(finished);
      setImmediate(turn);
    };
    setImmediate(turn);
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        for (let i = 0; i < 20; i++) {
          await db.raw('select 1');
          finished += 1;
        }
      }),
    );
    burstOver = true;
    const midBurst = turnsDuringBurst.filter((count) => count > 0 && count < 400);
    expect(
      midBurst.length,
      `turns the loop took, by statements finished then: ${turnsDuringBurst}`,
    ).toBeGreaterThan(10);
  });

  it.runIf(!process.env.DATABASE_URL)(
    'runs the embedded database with a 16 MB page cache, whatever its data directory was made with',
    async () => {
      // PGlite's data directories are made with PostgreSQL's 128 MB, zeroed at every open; the
      // settings openDatabase passes on PostgreSQL's command line take precedence over the file.
      const shown = await db.raw(
        `select name, setting, unit, source from pg_settings where name in ('shared_buffers', 'wal_buffers') order by name`,
      );
      expect(shown.rows).toEqual([
        { name: 'shared_buffers', setting: String(16 * 128), unit: '8kB', source: 'command line' },
        { name: 'wal_buffers', setting: String(4 * 128), unit: '8kB', source: 'command line' },
      ]);
    },
  );

  it('reports pgvector truthfully and, where present, computes cosine distance', async () => {
    const available = await hasPgvector(db);
    const listed = await db.raw(`select 1 from pg_available_extensions where name = 'vector'`);
    expect(available).toBe(listed.rows.length > 0);
    if (databaseKind(db) === 'pglite') expect(available).toBe(true);
    if (available) {
      const result = await db.raw(`select '[1,0]'::vector <=> '[0,1]'::vector as distance`);
      expect(Number(result.rows[0].distance)).toBeCloseTo(1);
    }
  });
});

// Replicas starting together against a fresh database must apply each migration once, not race to
// apply it twice. PGlite serves one process, so the race only exists on PostgreSQL.
describe.runIf(process.env.DATABASE_URL)('migrations with several replicas starting at once', () => {
  it('applies every migration exactly once while four handles migrate the same fresh database', async () => {
    const scratch = await createScratchDatabase(process.env.DATABASE_URL!);
    const replicas = await Promise.all(
      Array.from({ length: 4 }, () => openDatabase({ url: scratch.url, poolMax: 3 })),
    );
    try {
      const applied = await Promise.all(replicas.map((replica) => migrateLatest(replica, set)));
      expect(applied.flat().sort()).toEqual(set.migrations.map((m) => m.name).sort());
      expect(await pendingMigrations(replicas[0]!, set)).toEqual([]);
    } finally {
      await Promise.all(replicas.map((replica) => replica.destroy()));
      await scratch.drop();
    }
  });
});

describe('test databases copied from a migrated template', () => {
  it('start with every migration applied, and rows written to one copy stay out of the others and of later copies', async () => {
    const { template, dispose } = await createTestDatabaseTemplate([set]);
    const first = await openTestDatabase({ template });
    const second = await openTestDatabase({ template });
    try {
      for (const copy of [first, second]) {
        expect(await pendingMigrations(copy.db, set)).toEqual([]);
        expect(await migrateLatest(copy.db, set)).toEqual([]);
        expect(await copy.db('widgets').count({ count: '*' })).toEqual([{ count: 0 }]);
      }
      await first.db('widgets').insert({ id: 'only-in-first', body: '{}' });
      expect(await second.db('widgets').where({ id: 'only-in-first' })).toEqual([]);
      // A third copy made after the first one was written to still starts from the template.
      const third = await openTestDatabase({ template });
      try {
        expect(await third.db('widgets').where({ id: 'only-in-first' })).toEqual([]);
      } finally {
        await third.close();
      }
    } finally {
      await first.close();
      await second.close();
      await dispose();
    }
  });

  it('give a closed copy out again only as the template left it: no rows, identities restarted, a fresh session, its schema', async () => {
    const events: MigrationSet = {
      tableName: 'shared_test_event_migrations',
      migrations: [
        {
          name: '20261128000000_events',
          up: (db) =>
            db.schema.createTable('events', (t) => {
              t.increments('seq');
              t.text('name').notNullable();
            }),
          down: (db) => db.schema.dropTable('events'),
        },
      ],
    };
    const { template, dispose } = await createTestDatabaseTemplate([events]);
    const embedded = !process.env.DATABASE_URL;
    try {
      // A copy written to, with settings and a prepared statement of its session, then closed.
      const used = await openTestDatabase({ template });
      await used.db('events').insert([{ name: 'a' }, { name: 'b' }]);
      await used.db.raw(`set application_name = 'left behind'`);
      await used.db.raw(`prepare left_behind as select 1`);
      const usedInstance = embeddedPglite(used.db);
      await used.close();
      await used.close();
      await expect(used.db.raw('select 1')).rejects.toThrow();

      const next = await openTestDatabase({ template });
      // On PGlite it is the same instance, emptied (the point: no second load of the template).
      if (embedded) expect(embeddedPglite(next.db)).toBe(usedInstance);
      expect(await next.db('events').count({ count: '*' })).toEqual([{ count: 0 }]);
      const [first] = await next.db('events').insert({ name: 'c' }).returning('seq');
      expect(first.seq).toBe(1);
      expect((await next.db.raw('show application_name')).rows[0].application_name).not.toBe('left behind');
      expect((await next.db.raw('select count(*) as n from pg_prepared_statements')).rows[0].n).toBe(0);
      expect(await pendingMigrations(next.db, events)).toEqual([]);
      // Closed twice, it was kept once: a second copy open beside this one is another database.
      const beside = await openTestDatabase({ template });
      if (embedded) expect(embeddedPglite(beside.db)).not.toBe(embeddedPglite(next.db));
      await beside.close();
      // Its user changes the schema: the copy is not handed out again.
      await next.db.schema.createTable('extra', (t) => t.text('id'));
      await next.close();
      const after = await openTestDatabase({ template });
      expect(await after.db.schema.hasTable('extra')).toBe(false);
      if (embedded) {
        // Its user leaves a channel listened to: not handed out again either.
        const listening = embeddedPglite(after.db)!;
        await listening.listen('left_open', () => {});
        await after.close();
        const last = await openTestDatabase({ template });
        expect(embeddedPglite(last.db)).not.toBe(listening);
        expect((await last.db.raw('select pg_listening_channels() as channel')).rows).toEqual([]);
        await last.close();
      } else {
        await after.close();
      }
    } finally {
      await dispose();
    }
  });

  it('refuses a template made for the other engine', async () => {
    const other = process.env.DATABASE_URL
      ? ({ kind: 'pglite', tarball: '/nonexistent/pgdata.tar' } as const)
      : ({ kind: 'postgres', name: 'sy_template_unused' } as const);
    await expect(openTestDatabase({ template: other })).rejects.toThrow(/template is for/);
  });
});
