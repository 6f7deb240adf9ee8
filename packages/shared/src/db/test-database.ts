import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import knexFactory from 'knex';
import { type MigrationSet, migrateLatest } from './migrate.ts';
import { borrowPglite, type Database, embeddedPglite, openDatabase } from './open-database.ts';

export interface TestDatabase {
  db: Database;
  /**
   * Closes the handle and, on PostgreSQL, drops the throwaway database. An embedded copy of a
   * template is emptied and kept for the file's next copy instead (see `closedCopies`).
   */
  close(): Promise<void>;
}

export interface ScratchDatabase {
  /** Connection string of the new, empty database. */
  url: string;
  /** Drops the database, closing any connection still open to it. */
  drop(): Promise<void>;
}

/**
 * A migrated database that test databases start as a copy of, instead of running every migration
 * again: on PGlite a tarball of its data directory on disk, on PostgreSQL a database on the server
 * used as `CREATE DATABASE … TEMPLATE`. Plain data, so Vitest's globalSetup can hand it to test
 * files (`provide` / `inject`).
 */
export type TestDatabaseTemplate = { kind: 'pglite'; tarball: string } | { kind: 'postgres'; name: string };

export interface OpenTestDatabaseOptions {
  /** Start as a copy of this template (from {@link createTestDatabaseTemplate}); omitted: empty. */
  template?: TestDatabaseTemplate | undefined;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

async function onServer(serverUrl: string, sql: string): Promise<void> {
  const admin = knexFactory({ client: 'pg', connection: serverUrl, pool: { min: 0, max: 1 } });
  try {
    await admin.raw(sql);
  } finally {
    await admin.destroy();
  }
}

/**
 * Creates a uniquely named database on the PostgreSQL server of `serverUrl`, for a test file or a
 * benchmark run that must not share rows with anything else: empty, or a copy of the database
 * named `template` (which nobody may be connected to while it is copied).
 */
export async function createScratchDatabase(
  serverUrl: string,
  prefix = 'sy_test',
  template?: string,
): Promise<ScratchDatabase> {
  if (template !== undefined && !IDENTIFIER.test(template)) {
    throw new Error(
      `template database name ${JSON.stringify(template)} is not a plain lower-case identifier`,
    );
  }
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await onServer(serverUrl, `create database ${name}${template ? ` template ${template}` : ''}`);
  const target = new URL(serverUrl);
  target.pathname = `/${name}`;
  return {
    url: target.toString(),
    drop: () => onServer(serverUrl, `drop database if exists ${name} with (force)`),
  };
}

/**
 * Makes a database with every migration of `sets` applied, for {@link openTestDatabase} to copy:
 * embedded PGlite (its data directory dumped to a temporary file) by default; with `DATABASE_URL`
 * set, a database on that server. `dispose()` removes the file or drops the database.
 */
export async function createTestDatabaseTemplate(
  sets: MigrationSet[],
): Promise<{ template: TestDatabaseTemplate; dispose(): Promise<void> }> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    const db = await openDatabase();
    try {
      for (const set of sets) await migrateLatest(db, set);
      // Everything written so far goes into the data files, so a copy starts without replaying WAL.
      await db.raw('checkpoint');
      const dump = await embeddedPglite(db)!.dumpDataDir('none');
      const dir = await mkdtemp(path.join(tmpdir(), 'switchyard-test-template-'));
      const tarball = path.join(dir, 'pgdata.tar');
      await writeFile(tarball, Buffer.from(await dump.arrayBuffer()));
      return {
        template: { kind: 'pglite', tarball },
        dispose: () => rm(dir, { recursive: true, force: true }),
      };
    } finally {
      await db.destroy();
    }
  }
  const scratch = await createScratchDatabase(url, 'sy_template');
  try {
    const db = await openDatabase({ url: scratch.url, poolMax: 2 });
    try {
      for (const set of sets) await migrateLatest(db, set);
    } finally {
      await db.destroy();
    }
  } catch (error) {
    await scratch.drop();
    throw error;
  }
  const name = new URL(scratch.url).pathname.slice(1);
  return { template: { kind: 'postgres', name }, dispose: () => scratch.drop() };
}

/**
 * An embedded PGlite data directory with every migration of `sets` applied, for server processes
 * (or servers started in process from their settings) to start on a copy of instead of creating
 * a database: an initdb and the migrations cost a start some seconds of CPU, a copy a fraction.
 * `dispose()` removes it.
 */
export async function createMigratedDataDir(
  sets: MigrationSet[],
): Promise<{ dataDir: string; dispose(): Promise<void> }> {
  const parent = await mkdtemp(path.join(tmpdir(), 'switchyard-data-template-'));
  const dataDir = path.join(parent, 'data');
  const db = await openDatabase({ dataDir });
  try {
    for (const set of sets) await migrateLatest(db, set);
  } finally {
    await db.destroy();
  }
  return { dataDir, dispose: () => rm(parent, { recursive: true, force: true }) };
}

/**
 * Copies a {@link createMigratedDataDir} directory to where a server started with
 * SWITCHYARD_DATA_DIR=`dataDir` opens `app`'s embedded database (`<dataDir>/<app>`), unless a
 * database is there already.
 */
export async function copyMigratedDataDir(template: string, dataDir: string, app: string): Promise<void> {
  const target = path.join(dataDir, app);
  if (!existsSync(target)) await cp(template, target, { recursive: true });
}

/**
 * A database of its own for one test file: in-memory PGlite by default; with `DATABASE_URL` set,
 * a scratch PostgreSQL database on that server, dropped again on close. Test files never see each
 * other's rows, so they may run in any order or in parallel. With a template, the database starts
 * as a copy of it (already migrated) rather than empty; on PGlite, a copy another test of the
 * file closed, emptied, when there is one.
 */
export async function openTestDatabase(options: OpenTestDatabaseOptions = {}): Promise<TestDatabase> {
  const url = process.env.DATABASE_URL;
  const { template } = options;
  if (template && template.kind !== (url ? 'postgres' : 'pglite')) {
    throw new Error(
      `the test database template is for ${template.kind}, but DATABASE_URL ${url ? 'is set' : 'is not set'}`,
    );
  }
  if (!url) {
    if (template?.kind === 'pglite') return openEmbeddedCopy(template.tarball);
    const db = await openDatabase();
    return { db, close: () => db.destroy() };
  }
  const scratch = await createScratchDatabase(
    url,
    'sy_test',
    template?.kind === 'postgres' ? template.name : undefined,
  );
  const db = await openDatabase({ url: scratch.url, poolMax: 5 });
  return {
    db,
    async close() {
      await db.destroy();
      await scratch.drop();
    },
  };
}

/**
 * Embedded copies of a template that their tests closed, emptied again, by template file: loading
 * the template's data directory (40 MB, mostly PGlite's own files) took 1.1 to 1.4 s a copy on the
 * development machine, emptying every table of a used copy about 20 ms, and one test file may open
 * dozens of copies. A closed copy is handed out again only when it is the template's schema, with
 * nothing of its last user left: every table emptied and its identities restarted, every sequence
 * restarted, and the session reset (prepared statements, settings, advisory locks: DISCARD ALL).
 * A copy whose user changed its schema, left a channel listened to or closed the instance itself
 * is closed instead. Copies are kept per module instance, so per test file under Vitest.
 */
const closedCopies = new Map<string, PGlite[]>();

/** What an emptied copy of a template must look like, read from its first copy. */
interface TemplateShape {
  /** Digest of the schema and of the rows the template holds (its migrations' bookkeeping). */
  digest: string;
  /** The template's empty tables, quoted: emptied again for the next user. */
  emptyTables: string[];
  /** The tables holding rows in the template, quoted: their rows are part of the digest. */
  keptTables: string[];
  sequences: string[];
}
const shapes = new Map<string, Promise<TemplateShape>>();

const SCHEMA_DIGEST = `select md5(string_agg(item, ',' order by item)) as digest from (
  select format('%s.%s:%s', n.nspname, c.relname, c.relkind) as item
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast')
      and n.nspname not like 'pg\\_temp\\_%' and n.nspname not like 'pg\\_toast\\_temp\\_%'
  union all select format('%s.%s:%s:%s:%s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
      a.attnotnull, pg_get_expr(d.adbin, d.adrelid))
    from pg_attribute a join pg_class c on c.oid = a.attrelid
    join pg_namespace n on n.oid = c.relnamespace
    left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where n.nspname = 'public' and a.attnum > 0 and not a.attisdropped
  union all select format('function %s %s', p.oid::regprocedure, md5(p.prosrc))
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'public'
  union all select format('trigger %s.%s', tgrelid::regclass, tgname) from pg_trigger where not tgisinternal
  union all select format('constraint %s.%s %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
    from pg_constraint where connamespace = 'public'::regnamespace
  union all select format('extension %s %s', extname, extversion) from pg_extension
) schema`;

async function digestOf(pglite: PGlite, keptTables: string[]): Promise<string> {
  const parts = [(await pglite.query<{ digest: string }>(SCHEMA_DIGEST)).rows[0]!.digest];
  for (const table of keptTables) {
    const rows = await pglite.query<{ digest: string }>(
      `select md5(coalesce(string_agg(t::text, ',' order by t::text), '')) as digest from ${table} t`,
    );
    parts.push(rows.rows[0]!.digest);
  }
  return parts.join(' ');
}

async function templateShape(pglite: PGlite): Promise<TemplateShape> {
  const emptyTables: string[] = [];
  const keptTables: string[] = [];
  const tables = await pglite.query<{ name: string }>(
    `select quote_ident(tablename) as name from pg_tables where schemaname = 'public' order by 1`,
  );
  for (const { name } of tables.rows) {
    const found = await pglite.query(`select 1 from ${name} limit 1`);
    (found.rows.length > 0 ? keptTables : emptyTables).push(name);
  }
  const sequences = await pglite.query<{ name: string }>(
    `select quote_ident(sequencename) as name from pg_sequences where schemaname = 'public'`,
  );
  return {
    digest: await digestOf(pglite, keptTables),
    emptyTables,
    keptTables,
    sequences: sequences.rows.map((row) => row.name),
  };
}

async function openEmbeddedCopy(tarball: string): Promise<TestDatabase> {
  const pglite =
    closedCopies.get(tarball)?.pop() ??
    embeddedPglite(await openDatabase({ loadDataDir: new Blob([await readFile(tarball)]) }))!;
  if (!shapes.has(tarball)) shapes.set(tarball, templateShape(pglite));
  await shapes.get(tarball);
  const db = borrowPglite(pglite);
  let closed = false;
  return {
    db,
    async close() {
      // A second close must not hand the same copy out twice.
      if (closed) return;
      closed = true;
      await db.destroy();
      if (await emptied(pglite, await shapes.get(tarball)!)) {
        const kept = closedCopies.get(tarball) ?? [];
        kept.push(pglite);
        closedCopies.set(tarball, kept);
      } else if (!pglite.closed) {
        await pglite.close();
      }
    },
  };
}

/** Empties a closed copy for its next user; false when it cannot be (then it is closed instead). */
async function emptied(pglite: PGlite, shape: TemplateShape): Promise<boolean> {
  if (pglite.closed) return false;
  try {
    // A transaction its user left open ends here (outside one, this only warns).
    await pglite.exec('rollback');
    if ((await pglite.query('select pg_listening_channels()')).rows.length > 0) return false;
    if ((await digestOf(pglite, shape.keptTables)) !== shape.digest) return false;
    // Not in the same query string: DISCARD ALL cannot run inside the transaction a
    // multi-statement query is.
    await pglite.exec('discard all');
    const statements = shape.sequences.map((sequence) => `alter sequence ${sequence} restart`);
    if (shape.emptyTables.length > 0)
      statements.push(`truncate ${shape.emptyTables.join(', ')} restart identity cascade`);
    if (statements.length > 0) await pglite.exec(statements.join(';\n'));
    return true;
  } catch {
    return false;
  }
}
