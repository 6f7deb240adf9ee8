import type { Knex } from 'knex';

/** What a `system.snapshot` event carries (content/api/observability.md). */
export interface SystemSnapshot {
  nodes: { total: number; by_status: Record<string, number> };
  executions: { by_status: Record<string, number>; queue_depth: number };
  memory: { entries: number; vectors: number };
  replicas: { active: number };
}

type Counted = Array<{ key: string; n: string | number }>;

const byKey = (rows: Counted): Record<string, number> =>
  Object.fromEntries(rows.map((row) => [row.key, Number(row.n)]));

/**
 * The system as one read-only statement of counts. It names other features' tables on purpose:
 * a snapshot is a cross-cutting aggregate, and one statement (one snapshot of the database) keeps
 * the numbers consistent with each other; no feature exposes these group-bys. Counting is cheap at
 * the snapshot interval (a minute by default) for the table sizes a control plane holds.
 */
export async function readSystemSnapshot(db: Knex, now: Date): Promise<SystemSnapshot> {
  const result = await db.raw(
    `select
       (select coalesce(json_agg(json_build_object('key', s.k, 'n', s.n)), '[]'::json)
          from (select lifecycle_status as k, count(*) as n from node_instances group by lifecycle_status) s) as nodes,
       (select coalesce(json_agg(json_build_object('key', s.k, 'n', s.n)), '[]'::json)
          from (select status as k, count(*) as n from executions group by status) s) as executions,
       (select count(*) from memory_entries) as memory_entries,
       (select count(*) from memory_vectors) as memory_vectors,
       (select count(*) from control_plane_replicas where lease_expires_at > ?) as replicas`,
    [now],
  );
  const row = result.rows[0] as Record<string, unknown>;
  const parse = (value: unknown): Counted =>
    typeof value === 'string' ? JSON.parse(value) : (value as Counted);
  const nodes = byKey(parse(row.nodes));
  const executions = byKey(parse(row.executions));
  return {
    nodes: { total: Object.values(nodes).reduce((sum, n) => sum + n, 0), by_status: nodes },
    executions: { by_status: executions, queue_depth: executions.queued ?? 0 },
    memory: { entries: Number(row.memory_entries), vectors: Number(row.memory_vectors) },
    replicas: { active: Number(row.replicas) },
  };
}
