import type { Migration } from '@switchyard/shared/db';

/**
 * When the agent last registered this instance. SDKs register once, at start: a registration
 * of an instance that is already known means the agent process started again, and whatever it
 * had taken before (executions it answered 202 for) went with the old process.
 */
export const addNodeLastRegisteredAt: Migration = {
  name: '20261123090400_add_node_last_registered_at',
  async up(db) {
    await db.schema.alterTable('node_instances', (table) => {
      table.timestamp('last_registered_at', { useTz: true }).nullable();
    });
    await db('node_instances').update({ last_registered_at: db.ref('registered_at') });
  },
  async down(db) {
    await db.schema.alterTable('node_instances', (table) => {
      table.dropColumn('last_registered_at');
    });
  },
};
