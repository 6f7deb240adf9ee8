import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { type MigrationSet, migrateLatest } from './migrate.ts';
import { type Database, embeddedPglite, openDatabase } from './open-database.ts';

export interface TestDatabase {
  db: Database;
  /** Closes the handle and, on PostgreSQL, drops the throwaway database. */
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
 * A database of its own for one test file: in-memory PGlite by default; with `DATABASE_URL` set,
 * a scratch PostgreSQL database on that server, dropped again on close. Test files never see each
 * other's rows, so they may run in any order or in parallel. With a template, the database starts
 * as a copy of it (already migrated) rather than empty.
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
    const loadDataDir =
      template?.kind === 'pglite' ? new Blob([await readFile(template.tarball)]) : undefined;
    const db = await openDatabase({ loadDataDir });
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
