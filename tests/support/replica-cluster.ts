import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '@switchyard/shared/db';
import { type ControlPlaneProcess, startControlPlaneProcess } from './control-plane-process.ts';
import { eventually } from './eventually.ts';
import { type ThrowawayDatabase, throwawayDatabase } from './throwaway-database.ts';

/** Several control-plane processes on one throwaway PostgreSQL database. */
export interface ReplicaCluster {
  replicas: ControlPlaneProcess[];
  /** Each replica's id (its row in control_plane_replicas, as `dispatched_by` names it), by index. */
  replicaIds: string[];
  database: ThrowawayDatabase;
  /** A small pool on the same database, for reading what the replicas wrote. */
  db: Awaited<ReturnType<typeof openDatabase>>;
  /** Stops every replica still running (SIGTERM), drops the database and removes the directories. */
  close(): Promise<void>;
}

/**
 * Starts `count` replicas of the control plane's build at the same time on a fresh PostgreSQL
 * database (DATABASE_URL must be set): all of them migrate the empty database at once, as replicas
 * of a deployment do after an upgrade, which the migration runner's advisory lock makes safe.
 * Resolves once every one answers its health check and holds its replica lease.
 */
export async function startReplicaCluster(
  prefix: string,
  count: number,
  env: Record<string, string> = {},
): Promise<ReplicaCluster> {
  if (!process.env.DATABASE_URL) throw new Error('a replica cluster needs DATABASE_URL (PostgreSQL)');
  const database = await throwawayDatabase(prefix);
  const dirs = Array.from({ length: count }, (_, n) => mkdtempSync(join(tmpdir(), `sy-${prefix}-${n}-`)));
  const started = await Promise.allSettled(
    dirs.map((dir) => startControlPlaneProcess({ dir, databaseUrl: database.url, env })),
  );
  const replicas = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const db = await openDatabase({ url: database.url!, poolMax: 2 });
  const close = async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await db.destroy();
    await database.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  };
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await close();
    throw (failed as PromiseRejectedResult).reason;
  }
  let replicaIds: string[];
  try {
    replicaIds = await eventually('every replica holds a lease', async () => {
      const rows = await db('control_plane_replicas').select('replica_id', 'pid');
      const ids = replicas.map(
        (r) => rows.find((row) => row.pid === r.pid)?.replica_id as string | undefined,
      );
      return ids.every(Boolean) ? (ids as string[]) : undefined;
    });
  } catch (error) {
    // The caller gets no cluster to close: stop the replicas and drop the database here.
    await close();
    throw error;
  }
  return { replicas, replicaIds, database, db, close };
}

/** How many of each value, as an object for messages. */
export function tally(values: Array<string | null | undefined>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[String(value)] = (counts[String(value)] ?? 0) + 1;
  return counts;
}
