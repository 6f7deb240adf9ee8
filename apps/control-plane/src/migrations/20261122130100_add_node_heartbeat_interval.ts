import type { Migration } from '@switchyard/shared/db';

/**
 * The heartbeat interval observed for each instance, so presence can give an agent that keeps a
 * steady rhythm longer than the TTL (the TypeScript SDK heartbeats every 30 s) a lease that
 * outlasts the gap between two of its heartbeats. Null until a second heartbeat shows a gap.
 */
export const addNodeHeartbeatInterval: Migration = {
  name: '20261122130100_add_node_heartbeat_interval',
  async up(db) {
    await db.schema.alterTable('node_instances', (table) => {
      table.double('heartbeat_interval_ms').nullable();
    });
  },
  async down(db) {
    await db.schema.alterTable('node_instances', (table) => {
      table.dropColumn('heartbeat_interval_ms');
    });
  },
};
