import type { Migration } from '@switchyard/shared/db';

/**
 * What agent SDKs send at registration besides the spec's fields: the tags an agent proposes
 * for itself (to be approved before they count; its functions carry their own inside the
 * reasoners and skills documents) and whether it accepts webhooks.
 */
export const addNodeProposedTags: Migration = {
  name: '20261122130000_add_node_proposed_tags',
  async up(db) {
    await db.schema.alterTable('node_instances', (table) => {
      table.jsonb('proposed_tags').notNullable().defaultTo(db.raw(`'[]'::jsonb`));
      table.boolean('accepts_webhook').notNullable().defaultTo(false);
    });
  },
  async down(db) {
    await db.schema.alterTable('node_instances', (table) => {
      table.dropColumn('proposed_tags');
      table.dropColumn('accepts_webhook');
    });
  },
};
