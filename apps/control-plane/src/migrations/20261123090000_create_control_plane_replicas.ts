import type { Migration } from '@switchyard/shared/db';

/**
 * The control-plane processes sharing this database, each with a lease it renews while it runs.
 * Work a replica claimed (an execution it was forwarding) is recovered by the others once its
 * lease has expired, so a crashed process never strands what it held.
 */
export const createControlPlaneReplicas: Migration = {
  name: '20261123090000_create_control_plane_replicas',
  async up(db) {
    await db.schema.createTable('control_plane_replicas', (table) => {
      table.text('replica_id').primary();
      table.text('host').notNullable();
      table.integer('pid').notNullable();
      table.timestamp('started_at', { useTz: true }).notNullable();
      table.timestamp('renewed_at', { useTz: true }).notNullable();
      table.timestamp('lease_expires_at', { useTz: true }).notNullable();
    });
  },
  async down(db) {
    await db.schema.dropTable('control_plane_replicas');
  },
};
