import type { Migration } from '@switchyard/shared/db';

/** Named configuration texts (the control plane reads the one named `control-plane`). */
export const createConfigs: Migration = {
  name: '20261122053000_create_configs',
  async up(db) {
    await db.schema.createTable('configs', (table) => {
      table.text('name').primary();
      table.text('body').notNullable();
      table.text('updated_by').nullable();
      table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
      table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    });
  },
  async down(db) {
    await db.schema.dropTable('configs');
  },
};
