/**
 * content/operations/postgresql.md: its commands, in page order, on the PostgreSQL server of
 * DATABASE_URL (skipped without it: every command there talks to a PostgreSQL server).
 *
 * - The page's `psql` heredoc creates the role and the database (the page's name `switchyard`
 *   is replaced by a unique one: roles are shared by everything on the server).
 * - The page's start command, run as is in a shell (the port and data directory from the
 *   environment), turns healthy on that database as that role: owning the database is enough.
 * - The table list is what the page shows.
 * - Under 200 concurrent requests the role holds at most the 13 connections the page promises
 *   per replica, one of them a LISTEN session (the page's count query, and pg_stat_activity).
 * - After them the page's deadlock query prints 0.
 * - The pgvector query prints 0 or 1.
 *
 * Needs `psql` on PATH.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '@switchyard/shared/db';
import { afterAll, describe, expect, it } from 'vitest';
import { startShell } from '../support/doc-examples.ts';
import { freePort } from '../support/free-port.ts';
import { libpqEnv, operationsPage, ROOT, runPageCommand } from '../support/operations-pages.ts';

const ADMIN_URL = process.env.DATABASE_URL;
const { page, examples } = operationsPage('postgresql.md');
const [createRole, start, tables, connections, deadlocks, pgvector] = examples;

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function admin<T>(work: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<T>): Promise<T> {
  const db = await openDatabase({ url: ADMIN_URL, poolMax: 1 });
  try {
    return await work(db);
  } finally {
    await db.destroy();
  }
}

describe(page, () => {
  it('has six commands: create, start, tables, connections, deadlocks, pgvector', () => {
    expect(examples.map((e) => e.command.code.split(/\s/)[0])).toEqual([
      'psql',
      'DATABASE_URL=postgres://switchyard:change-me@127.0.0.1:5432/switchyard',
      'psql',
      'psql',
      'psql',
      'psql',
    ]);
  });

  it.skipIf(!ADMIN_URL)(
    `creates the role and database, starts on them, holds the connections the page says and counts no deadlock (${ADMIN_URL ? 'PostgreSQL' : 'skipped: needs DATABASE_URL'})`,
    async () => {
      const name = `sy_pg_page_${randomBytes(4).toString('hex')}`;
      const server = new URL(ADMIN_URL!);
      const localize = (text: string) =>
        text
          .split('switchyard')
          .join(name)
          .split('127.0.0.1:5432')
          .join(`${server.hostname}:${server.port || 5432}`);
      const env = libpqEnv(ADMIN_URL!);
      cleanups.push(() =>
        admin(async (db) => {
          await db.raw(`drop database if exists ${name} with (force)`);
          await db.raw(`drop role if exists ${name}`);
        }),
      );
      await runPageCommand(page, createRole!, { env, localize });

      const dir = mkdtempSync(join(tmpdir(), 'sy-postgresql-page-'));
      cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
      const port = await freePort();
      const controlPlane = startShell(localize(start!.command.code), {
        cwd: ROOT,
        env: { CONTROL_PLANE_PORT: String(port), SWITCHYARD_DATA_DIR: dir },
      });
      cleanups.push(() => controlPlane.stop());
      await controlPlane.waitFor(`listening on http://127.0.0.1:${port}`, 60_000);

      await runPageCommand(page, tables!, { env, localize });

      // Load: 200 concurrent writes, so the pool grows as far as it will.
      const writes = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          fetch(`http://127.0.0.1:${port}/api/v1/memory/set`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ key: `k${i}`, scope: 'global', data: i }),
          }).then((r) => r.status),
        ),
      );
      expect(new Set(writes)).toEqual(new Set([200]));
      const counted = await runPageCommand(page, connections!, { env, localize });
      const count = Number(counted.stdout.trim());
      expect(count).toBeGreaterThanOrEqual(1);
      expect(count).toBeLessThanOrEqual(13);
      const listening = await admin(async (db) => {
        const result = await db.raw(
          `select count(*)::int as n from pg_stat_activity where datname = ? and usename = ? and query like 'LISTEN %'`,
          [name, name],
        );
        return result.rows[0].n as number;
      });
      expect(listening).toBe(1);
      // Backends report their counts within a second of going idle.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const deadlockCount = await runPageCommand(page, deadlocks!, { env, localize });
      expect(deadlockCount.stdout).toBe('0\n');

      const available = await runPageCommand(page, pgvector!, { env, localize });
      expect(available.stdout).toMatch(/^[01]\n$/);
    },
    180_000,
  );
});
