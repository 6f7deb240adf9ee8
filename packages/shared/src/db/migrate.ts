import type { Knex } from 'knex';
import { databaseKind } from './open-database.ts';

/** One schema change: a name that sorts in order (timestamp first) and its two directions. */
export interface Migration {
  name: string;
  up(db: Knex): Promise<void>;
  down(db: Knex): Promise<void>;
}

export interface MigrationSet {
  /** The table recording which migrations ran; one per app so both apps can share a database. */
  tableName: string;
  migrations: Migration[];
}

// Migrations are passed in as imported modules instead of being found on disk: the same list
// works under tsx, Vitest and Astro's bundle, where directory scanning of .ts files does not.
function sourceOf(set: MigrationSet): Knex.MigratorConfig {
  const byName = new Map(set.migrations.map((m) => [m.name, m]));
  if (byName.size !== set.migrations.length) throw new Error(`duplicate migration names in ${set.tableName}`);
  return {
    tableName: set.tableName,
    migrationSource: {
      getMigrations: async () => [...byName.keys()].sort(),
      getMigrationName: (name: string) => name,
      getMigration: async (name: string) => {
        const m = byName.get(name)!;
        return { up: m.up, down: m.down };
      },
    },
  };
}

/**
 * Applies every pending migration; returns the names applied. On PostgreSQL, replicas starting at
 * the same time against one database take turns: knex creates its migrations and lock tables as
 * part of the run, so two first runs would race on creating them (one crashes with "relation
 * already exists"). A session advisory lock, held on a pooled connection of its own while the run
 * uses others (so the pool needs at least two), lets one replica migrate while the others wait and
 * then find nothing left to do.
 */
export async function migrateLatest(db: Knex, set: MigrationSet): Promise<string[]> {
  if (databaseKind(db) !== 'postgres') return applyPending(db, set);
  const connection = await db.client.acquireConnection();
  try {
    await db.raw('select pg_advisory_lock(hashtext(?))', [set.tableName]).connection(connection);
    try {
      return await applyPending(db, set);
    } finally {
      await db.raw('select pg_advisory_unlock(hashtext(?))', [set.tableName]).connection(connection);
    }
  } finally {
    await db.client.releaseConnection(connection);
  }
}

async function applyPending(db: Knex, set: MigrationSet): Promise<string[]> {
  const [, applied] = (await db.migrate.latest(sourceOf(set))) as [number, string[]];
  return applied;
}

/** Reverts every applied migration of the set, newest first; returns the names reverted. */
export async function migrateDown(db: Knex, set: MigrationSet): Promise<string[]> {
  const [, reverted] = (await db.migrate.rollback(sourceOf(set), true)) as [number, string[]];
  return reverted;
}

/** Names of the migrations of the set that have not run yet. */
export async function pendingMigrations(db: Knex, set: MigrationSet): Promise<string[]> {
  const [, pending] = (await db.migrate.list(sourceOf(set))) as [unknown[], Array<{ file: string } | string>];
  return pending.map((p) => (typeof p === 'string' ? p : p.file));
}
