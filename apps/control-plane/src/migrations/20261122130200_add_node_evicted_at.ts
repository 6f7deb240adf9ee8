import type { Migration } from '@switchyard/shared/db';

/**
 * Eviction keeps the row: `evicted_at` hides an instance evicted by the hard-evict rule from
 * every answer while its last registration waits, for a retention period, for a heartbeat that
 * brings it back (agent SDKs never register again on their own).
 */
export const addNodeEvictedAt: Migration = {
  name: '20261122130200_add_node_evicted_at',
  async up(db) {
    await db.schema.alterTable('node_instances', (table) => {
      table.timestamp('evicted_at', { useTz: true }).nullable();
      table.index(['evicted_at'], 'node_instances_evicted_idx');
    });
  },
  async down(db) {
    await db.schema.alterTable('node_instances', (table) => {
      table.dropIndex(['evicted_at'], 'node_instances_evicted_idx');
      table.dropColumn('evicted_at');
    });
  },
};
