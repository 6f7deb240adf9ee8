/**
 * content/operations/upgrades.md: migrations run at start under an advisory lock, so several
 * replicas starting at the same moment are safe, on an empty database and on an older one.
 *
 * On PostgreSQL (DATABASE_URL set): three control-plane processes (the build, as production runs
 * it) are started at the same moment on a fresh throwaway database while the test holds the
 * migration lock, and it lets go only once all three wait for it, so they do meet at the lock
 * however the machine schedules their starts (three processes starting a second apart might
 * never overlap, and the test could not fail without the lock); all three turn healthy, and
 * `control_plane_migrations` lists every migration exactly once, all in one batch (one replica
 * applied them all; the others found nothing left). Then the same on a database that an older
 * version migrated part of the way. The page's `psql` command is run against the result and must
 * print what the page shows, which must be this version's list of migrations.
 *
 * On PGlite (no DATABASE_URL): one process on the embedded database records each migration once
 * (the embedded database serves one process, so there is nothing to race).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrateLatest, openDatabase } from '@switchyard/shared/db';
import { afterAll, describe, expect, it } from 'vitest';
import { controlPlaneMigrations } from '../../apps/control-plane/src/migrations/index.ts';
import { type ControlPlaneProcess, startControlPlaneProcess } from '../support/control-plane-process.ts';
import { eventually } from '../support/eventually.ts';
import { operationsPage, runPageCommand } from '../support/operations-pages.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const POSTGRES = Boolean(process.env.DATABASE_URL);
const NAMES = controlPlaneMigrations.migrations.map((m) => m.name);
const { page, examples } = operationsPage('upgrades.md');

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sy-upgrades-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts `count` control planes on one database at the same moment; all must turn healthy. */
async function startTogether(count: number, databaseUrl: string): Promise<ControlPlaneProcess[]> {
  const started = await Promise.allSettled(
    Array.from({ length: count }, () => startControlPlaneProcess({ dir: scratchDir(), databaseUrl })),
  );
  const running = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  cleanups.push(async () => {
    await Promise.all(running.map((r) => r.stop()));
  });
  const failures = started.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : []));
  expect(failures, 'every replica turns healthy').toEqual([]);
  return running;
}

const MIGRATION_LOCK = 'control_plane_migrations';

/**
 * startTogether, with the migration lock held by the test until all `count` replicas wait for it
 * (pg_locks), then released: they all reach the lock before any of them migrates.
 */
async function startQueuedOnTheLock(count: number, databaseUrl: string): Promise<ControlPlaneProcess[]> {
  const admin = await openDatabase({ url: databaseUrl, poolMax: 1 });
  // The session lock lives on one connection; this one is kept out of the pool until released.
  const connection = await admin.client.acquireConnection();
  let starting: Promise<ControlPlaneProcess[]> | undefined;
  try {
    await admin.raw('select pg_advisory_lock(hashtext(?))', [MIGRATION_LOCK]).connection(connection);
    starting = startTogether(count, databaseUrl);
    await eventually(`all ${count} replicas wait for the migration lock`, async () => {
      const result = await admin
        .raw(
          `select count(*)::int as n from pg_locks where locktype = 'advisory' and objsubid = 1 and not granted
             and database = (select oid from pg_database where datname = current_database())`,
        )
        .connection(connection);
      return result.rows[0].n === count ? true : undefined;
    });
  } finally {
    await admin.raw('select pg_advisory_unlock(hashtext(?))', [MIGRATION_LOCK]).connection(connection);
    await admin.client.releaseConnection(connection);
    await admin.destroy();
    // Whatever happened above, the replicas are registered for cleanup before this returns.
    await starting?.catch(() => {});
  }
  return await starting!;
}

async function recorded(url: string): Promise<Array<{ name: string; batch: number }>> {
  const db = await openDatabase({ url, poolMax: 1 });
  try {
    return await db('control_plane_migrations').select('name', 'batch').orderBy('id');
  } finally {
    await db.destroy();
  }
}

describe(page, () => {
  it('has one command, followed by what it prints: this version’s migrations in order', () => {
    expect(examples).toHaveLength(1);
    expect(examples[0]!.shown?.lang).toBe('text');
    expect(examples[0]!.shown!.code.split('\n')).toEqual(NAMES);
  });

  it.skipIf(!POSTGRES)(
    `three replicas started at the same moment on a fresh database all turn healthy, each migration recorded once (${POSTGRES ? 'PostgreSQL' : 'skipped: needs DATABASE_URL'})`,
    async () => {
      const database: ThrowawayDatabase = await throwawayDatabase('sy_upgrades_fresh');
      cleanups.push(() => database.drop());
      const replicas = await startQueuedOnTheLock(3, database.url!);
      for (const replica of replicas) {
        const health = await fetch(`${replica.url}/api/v1/health`);
        expect(health.status).toBe(200);
      }
      const rows = await recorded(database.url!);
      expect(rows.map((r) => r.name)).toEqual(NAMES);
      // One batch: a single replica applied everything; the two others waited and found nothing.
      expect(new Set(rows.map((r) => r.batch))).toEqual(new Set([1]));

      await runPageCommand(page, examples[0]!, { env: { DATABASE_URL: database.url! } });
    },
    180_000,
  );

  it.skipIf(!POSTGRES)(
    `three replicas started at the same moment on an older database apply the missing migrations once (${POSTGRES ? 'PostgreSQL' : 'skipped: needs DATABASE_URL'})`,
    async () => {
      const database: ThrowawayDatabase = await throwawayDatabase('sy_upgrades_older');
      cleanups.push(() => database.drop());
      // What an older version left: the first ten migrations.
      const older = { ...controlPlaneMigrations, migrations: controlPlaneMigrations.migrations.slice(0, 10) };
      const db = await openDatabase({ url: database.url!, poolMax: 2 });
      try {
        expect(await migrateLatest(db, older)).toEqual(NAMES.slice(0, 10));
      } finally {
        await db.destroy();
      }
      await startQueuedOnTheLock(3, database.url!);
      const rows = await recorded(database.url!);
      expect(rows.map((r) => r.name)).toEqual(NAMES);
      expect(rows.map((r) => r.batch)).toEqual([
        ...NAMES.slice(0, 10).map(() => 1),
        ...NAMES.slice(10).map(() => 2),
      ]);
      await runPageCommand(page, examples[0]!, { env: { DATABASE_URL: database.url! } });
    },
    180_000,
  );

  it.skipIf(POSTGRES)(
    `the embedded database records each migration once (${POSTGRES ? 'skipped: runs without DATABASE_URL' : 'PGlite'})`,
    async () => {
      const dir = scratchDir();
      const server = await startControlPlaneProcess({ dir, databaseUrl: undefined, emptyDatabase: true });
      expect((await server.stop()).code).toBe(0);
      const db = await openDatabase({ dataDir: join(dir, 'control-plane') });
      try {
        const rows = await db('control_plane_migrations').select('name').orderBy('id');
        expect(rows.map((r: { name: string }) => r.name)).toEqual(NAMES);
      } finally {
        await db.destroy();
      }
    },
    120_000,
  );
});
