import type { Migration } from '@switchyard/shared/db';

/** Published run bundles. The bundle is kept as the exact JSON text that was validated. */
export const createRunShares: Migration = {
  name: '20261122000000_create_run_shares',
  async up(db) {
    await db.schema.createTable('run_shares', (table) => {
      table.text('id').primary();
      table.text('workflow_id').notNullable();
      table.text('title').notNullable();
      table.text('bundle_json').notNullable();
      table.integer('bundle_bytes').notNullable();
      table.timestamp('created_at', { useTz: true }).notNullable();
      table.index(['workflow_id'], 'run_shares_workflow_id_idx');
    });
  },
  async down(db) {
    await db.schema.dropTable('run_shares');
  },
};
