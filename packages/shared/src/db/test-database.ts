import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { type Database, openDatabase } from './open-database.ts';

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

async function onServer(serverUrl: string, sql: string): Promise<void> {
  const admin = knexFactory({ client: 'pg', connection: serverUrl, pool: { min: 0, max: 1 } });
  try {
    await admin.raw(sql);
  } finally {
    await admin.destroy();
  }
}

/**
 * Creates an empty, uniquely named database on the PostgreSQL server of `serverUrl`, for a test
 * file or a benchmark run that must not share rows with anything else.
 */
export async function createScratchDatabase(serverUrl: string, prefix = 'sy_test'): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await onServer(serverUrl, `create database ${name}`);
  const target = new URL(serverUrl);
  target.pathname = `/${name}`;
  return {
    url: target.toString(),
    drop: () => onServer(serverUrl, `drop database if exists ${name} with (force)`),
  };
}

/**
 * A database of its own for one test file: in-memory PGlite by default; with `DATABASE_URL` set,
 * a scratch PostgreSQL database on that server, dropped again on close. Test files never see each
 * other's rows, so they may run in any order or in parallel.
 */
export async function openTestDatabase(): Promise<TestDatabase> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    const db = await openDatabase();
    return { db, close: () => db.destroy() };
  }
  const scratch = await createScratchDatabase(url);
  const db = await openDatabase({ url: scratch.url, poolMax: 5 });
  return {
    db,
    async close() {
      await db.destroy();
      await scratch.drop();
    },
  };
}
