import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { type Database, openDatabase } from './open-database.ts';

export interface TestDatabase {
  db: Database;
  /** Closes the handle and, on PostgreSQL, drops the throwaway database. */
  close(): Promise<void>;
}

/**
 * A database of its own for one test file: in-memory PGlite by default; with `DATABASE_URL` set,
 * a freshly created PostgreSQL database on that server, dropped again on close. Test files never
 * see each other's rows, so they may run in any order or in parallel.
 */
export async function openTestDatabase(): Promise<TestDatabase> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    const db = await openDatabase();
    return { db, close: () => db.destroy() };
  }
  const name = `sy_test_${randomBytes(6).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
  try {
    await admin.raw(`create database ${name}`);
  } finally {
    await admin.destroy();
  }
  const target = new URL(url);
  target.pathname = `/${name}`;
  const db = await openDatabase({ url: target.toString(), poolMax: 5 });
  return {
    db,
    async close() {
      await db.destroy();
      const cleanup = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
      try {
        await cleanup.raw(`drop database if exists ${name} with (force)`);
      } finally {
        await cleanup.destroy();
      }
    },
  };
}
