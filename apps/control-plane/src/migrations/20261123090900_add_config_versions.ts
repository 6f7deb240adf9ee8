import type { Migration } from '@switchyard/shared/db';

/**
 * Every version of a stored configuration is kept: `configs` holds the current text and its
 * version number, `config_versions` each text ever stored (a null body records a deletion), so a
 * bad edit can be read back and restored.
 *
 * A deleted config keeps its `configs` row with a null body (a tombstone): the row is what a
 * writer locks to take the next version number, so two replicas storing the same name at once get
 * distinct, gapless versions, also across a deletion and a re-creation. `created_version` is the
 * version that (re)created the current text, which tells a creation (201) from a replacement (200)
 * in the same statement that wrote it.
 */
export const addConfigVersions: Migration = {
  name: '20261123090900_add_config_versions',
  async up(db) {
    await db.schema.alterTable('configs', (table) => {
      table.integer('version').notNullable().defaultTo(1);
      table.integer('created_version').notNullable().defaultTo(1);
    });
    await db.raw('alter table configs alter column body drop not null');
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
    await db('configs').whereNull('body').delete();
    await db.raw('alter table configs alter column body set not null');
    await db.schema.alterTable('configs', (table) => {
      table.dropColumn('version');
      table.dropColumn('created_version');
    });
  },
};
