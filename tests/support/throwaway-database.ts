import { randomBytes } from 'node:crypto';
import { openDatabase } from '@switchyard/shared/db';

export interface ThrowawayDatabase {
  /** The DATABASE_URL to hand to a server; undefined means the embedded database. */
  url: string | undefined;
  drop(): Promise<void>;
}

/**
 * For tests that start servers as separate processes (they cannot take an open database like
 * openTestDatabase gives): with DATABASE_URL set, a fresh PostgreSQL database of their own, so
 * runs never see each other's rows; without it, nothing, and the servers use embedded PGlite.
 */
export async function throwawayDatabase(prefix: string): Promise<ThrowawayDatabase> {
  const url = process.env.DATABASE_URL;
  if (!url) return { url: undefined, drop: async () => {} };
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = await openDatabase({ url, poolMax: 1 });
  try {
    await admin.raw(`create database ${name}`);
  } finally {
    await admin.destroy();
  }
  const target = new URL(url);
  target.pathname = `/${name}`;
  return {
    url: target.toString(),
    async drop() {
      const cleanup = await openDatabase({ url, poolMax: 1 });
      try {
        await cleanup.raw(`drop database if exists ${name} with (force)`);
      } finally {
        await cleanup.destroy();
      }
    },
  };
}
