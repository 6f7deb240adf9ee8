import type { Migration } from '@switchyard/shared/db';

/**
 * Every version of a stored configuration is kept: `configs` holds the current text and its
 * version number, `config_versions` each text ever stored (a null body records a deletion), so a
 * bad edit can be read back and restored.
 */
export const addConfigVersions: Migration = {
  name: '20261123090900_add_config_versions',
  async up(db) {
    await db.schema.alterTable('configs', (table) => {
      table.integer('version').notNullable().defaultTo(1);
    });
    await db.schema.createTable('config_versions', (table) => {
      table.text('name').notNullable();
      table.integer('version').notNullable();
      table.text('body').nullable();
      table.text('updated_by').nullable();
      table.timestamp('created_at', { useTz: true }).notNullable();
      table.primary(['name', 'version']);
    });
    await db.raw(
      `insert into config_versions (name, version, body, updated_by, created_at)
       select name, version, body, updated_by, updated_at from configs`,
    );
  },
  async down(db) {
    await db.schema.dropTable('config_versions');
    await db.schema.alterTable('configs', (table) => {
      table.dropColumn('version');
    });
  },
};
