import type { Knex } from 'knex';

/**
 * Registered node instances, one row per (node id, version), holding presence (heartbeat and
 * lease), lifecycle status and health-monitor state. All of it lives here rather than in memory
 * so that every replica sharing the database sees and sweeps the same fleet.
 */
export const createNodeInstances = {
  name: '20261122052600_create_node_instances',
  async up(db: Knex): Promise<void> {
    await db.schema.createTable('node_instances', (table) => {
      table.text('node_id').notNullable();
      table.text('version').notNullable();
      table.text('base_url').notNullable();
      table.text('public_url').nullable();
      table.text('deployment_type').notNullable();
      table.jsonb('tags').notNullable();
      table.jsonb('metadata').notNullable();
      table.jsonb('reasoners').notNullable();
      table.jsonb('skills').notNullable();
      table.integer('traffic_weight').notNullable().defaultTo(100);
      table.text('lifecycle_status').notNullable();
      table.text('status_reason').notNullable();
      table.timestamp('status_changed_at', { useTz: true }).notNullable();
      // What the agent itself last claimed (heartbeat, PATCH status, lifecycle/status).
      table.text('reported_status').nullable();
      // Operator intent: active, stopped (by POST stop) or shutdown (by POST shutdown).
      table.text('admin_state').notNullable().defaultTo('active');
      table.timestamp('last_heartbeat', { useTz: true }).nullable();
      table.timestamp('last_seen_at', { useTz: true }).notNullable();
      // Presence lease: renewed by every sign of life, released (null) by shutdown.
      table.timestamp('lease_expires_at', { useTz: true }).nullable();
      table.integer('health_failures').notNullable().defaultTo(0);
      table.timestamp('healthy_since', { useTz: true }).nullable();
      table.timestamp('last_check_at', { useTz: true }).nullable();
      table.boolean('last_check_ok').nullable();
      table.integer('last_check_status_code').nullable();
      table.text('last_check_error').nullable();
      table.double('last_check_duration_ms').nullable();
      table.timestamp('next_check_at', { useTz: true }).nullable();
      table.jsonb('custom_health').nullable();
      // Bumped by every status change; transitions are conditional on it (optimistic locking).
      table.integer('revision').notNullable().defaultTo(0);
      table.timestamp('registered_at', { useTz: true }).notNullable();
      table.timestamp('updated_at', { useTz: true }).notNullable();
      table.primary(['node_id', 'version']);
      table.index(['lifecycle_status', 'lease_expires_at'], 'node_instances_presence_idx');
      table.index(['next_check_at'], 'node_instances_next_check_idx');
    });
  },
  async down(db: Knex): Promise<void> {
    await db.schema.dropTable('node_instances');
  },
};
