import type { Migration } from '@switchyard/shared/db';

/**
 * What each client address stored and when: the write budget of publishing counts these rows
 * over its window. Rows are deleted once they fall out of the window, so addresses are kept no
 * longer than the budget needs them.
 */
export const createRunShareWrites: Migration = {
  name: '20261123000000_create_run_share_writes',
  async up(db) {
    await db.schema.createTable('run_share_writes', (table) => {
      table.bigIncrements('id');
      table.text('client').notNullable();
      table.integer('bytes').notNullable();
      table.timestamp('created_at', { useTz: true }).notNullable();
      table.index(['client', 'created_at'], 'run_share_writes_client_idx');
      table.index(['created_at'], 'run_share_writes_created_at_idx');
    });
  },
  async down(db) {
    await db.schema.dropTable('run_share_writes');
  },
};
